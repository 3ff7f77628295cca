"""Counted nouns for messages: "1 letter", "2 letters"."""


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"
