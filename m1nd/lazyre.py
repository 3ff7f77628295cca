"""`re`, except that `compile` compiles on first use.

The secret rules are dozens of regular expressions; compiling them at import made
every git hook pay for them, though a hook with nothing new never scans a letter.
`from m1nd import lazyre as re` keeps a module's patterns written as usual: each
`re.compile(...)` returns a stand-in that compiles the pattern the first time one of
its attributes is used, then keeps the compiled pattern's methods on itself (later
calls cost what a compiled pattern's do).  Everything else is the real `re`.
"""

from __future__ import annotations

import re as _re


class LazyPattern:
    __slots__ = ("_args", "_compiled", "__dict__")

    def __init__(self, pattern, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled = None

    def __getattr__(self, name: str):
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = _re.compile(*self._args)
        value = getattr(compiled, name)
        self.__dict__[name] = value  # next time, found without __getattr__
        return value


def compile(pattern, flags: int = 0) -> LazyPattern:  # noqa: A001 - the name re gives it
    return LazyPattern(pattern, flags)


def __getattr__(name: str):
    return getattr(_re, name)
