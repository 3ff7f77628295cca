"""Examples shown at the end of each command's `--help` (blank lines keep them apart)."""


def lines(*examples: str) -> str:
    return "Examples:\n\n" + "\n\n".join(examples)


WRITE = lines("m1nd write --class bug --tool seek --what 'seek returned a deleted node'",
              "m1nd write --repo repo-a --what 'flaky test in ci' --expected 'green twice in a row'",
              "m1nd write --brain medulla --what 'a note for no project in particular'")
PICKUP = lines("m1nd pickup 4a8965e74b53 --what 'looking into it'")
ANSWER = lines("m1nd answer 4a8965e74b53 --what 'fixed in abc123' --disposition fixed",
               "m1nd answer 4a8965e74b53 6699431fc080 --what 'not a bug: the limit is documented' --disposition declined")
DISTRIBUTE = lines("m1nd distribute", "m1nd distribute --json")
DOCTOR = lines("m1nd doctor", "m1nd doctor --json --now 2026-05-03T09:00:00Z")
ROSTER = lines("m1nd roster add ~/src/repo-a", "m1nd roster list", "m1nd roster remove ~/src/repo-a")
INIT = lines("m1nd init", "m1nd init ~/src/repo-a", "m1nd init --private")
HOOKS = lines("m1nd hooks install", "m1nd hooks install --stage", "m1nd hooks status", "m1nd hooks uninstall")
HOOK = lines("m1nd hook run post-checkout")
DEMO = lines("m1nd demo", "m1nd demo --keep")
MERGE = lines("git config merge.m1nd-inbox.driver 'm1nd merge-driver %O %A %B'  (m1nd init does this)")
