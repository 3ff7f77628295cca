#!/bin/sh
# m1nd-hook-shim 3
# Installed by `m1nd hooks install`; `m1nd hooks uninstall` removes it and puts back
# the hook it chained, if any.  It runs `m1nd hook run HOOK`, which never blocks git:
# it exits 0, never prompts, and gives up after its time budget (M1ND_HOOK_TIMEOUT).
# A hook that was here before was moved to HOOK.m1nd-chained: it runs first, with the
# same arguments and stdin, and its exit status is this hook's exit status.

HOOK=@M1ND_HOOK@
INSTALL_PYTHON=@M1ND_PYTHON@

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd -P)
legacy="$here/$HOOK.m1nd-chained"
if [ "${M1ND_HOOK_LEGACY:-}" = "$legacy" ]; then
    # The chained hook ran this very hook again: it already did the work once.
    exit 0
fi

status=0
if [ -x "$legacy" ]; then
    M1ND_HOOK_LEGACY=$legacy "$legacy" "$@"
    status=$?
fi
if [ "$HOOK" = pre-commit ] && [ "$status" -ne 0 ]; then
    # The chained hook stopped the commit: there is nothing to stage for.
    exit "$status"
fi

M1ND_IN_HOOK=1
export M1ND_IN_HOOK
if [ -x "$INSTALL_PYTHON" ]; then
    # -P: the hook runs in the work tree, whose own `m1nd/` directory (if it has one)
    # must never be imported in place of the installed m1nd.
    "$INSTALL_PYTHON" -P -m m1nd hook run "$HOOK" "$@" </dev/null
elif command -v m1nd >/dev/null 2>&1; then
    m1nd hook run "$HOOK" "$@" </dev/null
else
    echo "m1nd: warning: m1nd not found (not at $INSTALL_PYTHON, not on PATH): the $HOOK hook skipped it" >&2
fi
exit "$status"
