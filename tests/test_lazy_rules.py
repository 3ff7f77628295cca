"""The hook path pays nothing for the secret rules it does not use: importing them
compiles no regular expression; the first use compiles what it needs, once."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_secret_rules_compiles_no_pattern_and_first_use_compiles_them():
    code = (
        "import m1nd.secret_rules as r\n"
        "from m1nd.lazyre import LazyPattern\n"
        "lazy = [v for v in vars(r).values() if isinstance(v, LazyPattern)]\n"
        "lazy += [p for v in vars(r).values() if isinstance(v, tuple) for p in v if isinstance(p, LazyPattern)]\n"
        "assert len(lazy) >= 10, len(lazy)\n"
        "assert all(p._compiled is None for p in lazy), 'compiled at import'\n"
        "assert r.match('password=' + 'hunter' * 4 + 'x9') is not None\n"
        "assert r.ANCHOR_BYTES.search(b'token=') is not None and r.ANCHOR_BYTES._compiled is not None\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
