"""What marks a hook file as an m1nd shim, and the names of the hook a shim chains.

Shared by hooks.py (which writes shims) and managers.py (which must tell a shim from
a hook manager's script), so neither imports the other for it.
"""

from __future__ import annotations

import re

SHIM_VERSION = 3  # 2: runs python -P (never imports an m1nd/ from the work tree); 3: chains <hook>.m1nd-chained
MARKER = re.compile(rb"^# m1nd-hook-shim (\d+)\s*$", re.M)
CHAINED_SUFFIX = ".m1nd-chained"
OLD_CHAIN_SUFFIX = ".legacy"  # what shims before v3 chained


def shim_version(data: bytes | None) -> int | None:
    """The shim version of a hook's bytes, or None when it is not an m1nd shim."""
    if not data:
        return None
    m = MARKER.search(data)
    return int(m.group(1)) if m else None
