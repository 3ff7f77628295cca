"""The wrappings an agent's letter carries a credential in, and the external corpus
(`../shared/secrets_external/corpus.json`: formats from the public scanners' test
suites, ordinary lines from public projects).  Shared by the tests and bench/."""

from __future__ import annotations

import json
import os
from pathlib import Path

import orjson

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "secrets_external" / "corpus.json"
TS = "2026-05-01T10:00:00Z"


def load_corpus() -> dict | None:
    """The corpus, or None when this checkout has none beside it."""
    return json.loads(CORPUS.read_text()) if CORPUS.is_file() else None


def _names(fmt: dict) -> tuple[str, str]:
    kw = (fmt.get("keyword") or fmt["provider"]).replace(" ", "_").replace("/", "_")
    return kw, kw.upper().replace("-", "_").replace(".", "_") + "_TOKEN"


def wrappings(fmt: dict, value: str) -> dict[str, str]:
    """{wrapping: the text of a letter field carrying `value`} (the \\u wrapping is
    already JSON: every character of a `KEY=value` line as an escape)."""
    kw, key = _names(fmt)
    return {
        "bare in prose": f"the {kw} deploy failed, I used {value} to retry",
        "KEY=value": f"{key}={value}",
        "JSON": json.dumps({"config": {kw + "_key": value}}),
        "YAML": f"{kw}:\n  api_key: {value}\n",
        "curl header": f"curl -H 'Authorization: Bearer {value}' https://api.example.com/v1",
        "URL user:password": f"https://agent-a:{value}@example.com/path",
        "traceback": ('Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
                      f'    {kw}_client.login("{value}")\nValueError: invalid credential'),
        ".env": f'{key}="{value}"',
        "escaped JSON in JSON": json.dumps({"payload": json.dumps({kw + "_token": value})}),
        "\\u escapes": "".join(f"\\u{ord(c):04x}" for c in f"{key}={value}"),
    }


def letter(text: str, field: str = "snippet", repo: str = "repo-a") -> bytes:
    return orjson.dumps({"ts": TS, "agent": "agent-a", "repo": repo, "what": "see snippet", field: text}
                        if field != "what" else {"ts": TS, "agent": "agent-a", "repo": repo, "what": text})


def credential_letters(corpus: dict, repo: str = "repo-a") -> list[tuple[str, str, bytes]]:
    """(format id, wrapping, letter bytes) for every example in every wrapping."""
    out = []
    for fmt in corpus["formats"]:
        for ex in fmt["examples"]:
            for wrapping, text in wrappings(fmt, ex["value"]).items():
                if wrapping == "\\u escapes":
                    raw = (b'{"ts":"' + TS.encode() + b'","agent":"agent-a","repo":"' + repo.encode()
                           + b'","what":"' + text.encode() + b'"}')
                else:
                    raw = letter(text, repo=repo)
                out.append((fmt["id"], wrapping, raw))
    return out


def ordinary_letters(corpus: dict, repo: str = "repo-a") -> list[bytes]:
    return [letter(o["text"], "what", repo) for o in corpus["ordinary"]]


def corpus_or_skip(pytest) -> dict:
    corpus = load_corpus()
    if corpus is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the external secrets corpus is missing: {CORPUS.name} beside the repository")
        pytest.skip("external secrets corpus not found beside the repository: not run")
    return corpus
