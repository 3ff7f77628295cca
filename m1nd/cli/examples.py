"""Examples shown at the end of each command's `--help` (blank lines keep them apart)."""


def lines(*examples: str) -> str:
    return "Examples:\n\n" + "\n\n".join(examples)


WRITE = lines("m1nd write --class bug --tool seek --what 'seek returned a deleted node'",
              "m1nd write --repo repo-a --what 'flaky test in ci' --expected 'green twice in a row'",
              "m1nd write --brain medulla --what 'a note for no project in particular'")
PICKUP = lines("m1nd pickup 4a8965e74b53 --what 'looking into it'")
ANSWER = lines("m1nd answer 4a8965e74b53 --what 'fixed in abc123' --disposition fixed",
               "m1nd answer 4a8965e74b53 6699431fc080 --what 'not a bug: the limit is documented' --disposition declined",
               "m1nd answer 4a89 --what fixed --disposition fixed --fingerprint fp:seek/crash --case-id seek",
               "m1nd answer 4a89 --what fixed --disposition fixed --fingerprint fp:seek/crash --sentinel 'make t'")
DISTRIBUTE = lines("m1nd distribute", "m1nd distribute --json")
DOCTOR = lines("m1nd doctor", "m1nd doctor --json --now 2026-05-03T09:00:00Z")
ROSTER = lines("m1nd roster add ~/src/repo-a", "m1nd roster list", "m1nd roster remove ~/src/repo-a")
INIT = lines("m1nd init", "m1nd init ~/src/repo-a", "m1nd init --private")
HOOKS = lines("m1nd hooks install", "m1nd hooks install --stage", "m1nd hooks status", "m1nd hooks uninstall")
HOOK = lines("m1nd hook run post-checkout")
DEMO = lines("m1nd demo", "m1nd demo --keep")
MERGE = lines("git config merge.m1nd-inbox.driver 'm1nd merge-driver %O %A %B'  (m1nd init does this)")

ROOT = lines("m1nd demo", "m1nd init", "m1nd write --class bug --what 'seek returned a deleted node'",
             "m1nd sweep", "m1nd help sweep")
COMPLETION = lines("m1nd completion bash >> ~/.bashrc", "m1nd completion zsh > \"${fpath[1]}/_m1nd\"",
                   "m1nd completion fish > ~/.config/fish/completions/m1nd.fish")

# The examples of subcommands and groups, by command path (attached in app.py).
BY_PATH = {
    "sweep": lines("m1nd sweep                          open letters of every box, newest first",
                   "m1nd sweep --state all --all        every letter, whatever its fate",
                   "m1nd sweep --box repo-a --since 2026-05-01",
                   "m1nd sweep --json                   the m1nd-inbox-sweep-v0 document"),
    "box": lines("m1nd box                       this repository's box: open letters, newest first",
                 "m1nd box medulla --state all   every letter of the medulla box",
                 "m1nd box repo-a --json         every letter of repo-a's box, in file order"),
    "show": lines("m1nd show 4a8965e74b53        by full id",
                  "m1nd show 4a89 --json         by a unique prefix, as one JSON object"),
    "help": lines("m1nd help", "m1nd help sweep", "m1nd help roster add"),
    "serve": lines("m1nd serve", "m1nd serve --port 0 --open", "m1nd serve --host 0.0.0.0 --allow-remote"),
    "roster add": lines("m1nd roster add ~/src/repo-a", "m1nd roster add ."),
    "roster remove": lines("m1nd roster remove ~/src/repo-a"),
    "roster list": lines("m1nd roster list", "m1nd roster list --json"),
    "hooks install": lines("m1nd hooks install", "m1nd hooks install --stage", "m1nd hooks install --force"),
    "hooks uninstall": lines("m1nd hooks uninstall"),
    "hooks status": lines("m1nd hooks status"),
    "hook run": lines("m1nd hook run post-checkout", "m1nd hook run pre-commit"),
    "report": lines("m1nd report", "m1nd report --profile weekly --to ~/reports", "m1nd report status"),
    "report profile": lines("m1nd report profile weekly --json"),
    "report prepare": lines("m1nd report prepare"),
    "report commit": lines("m1nd report commit RUN_ID --digest DIGEST"),
    "report deliver": lines("m1nd report deliver", "m1nd report deliver --to ~/reports"),
    "report status": lines("m1nd report status", "m1nd report status --json"),
    "report list": lines("m1nd report list --limit 20"),
    "report render": lines("m1nd report render RUN_ID --format html --out report.html"),
    "report alert": lines("m1nd report alert"),
    "cases": lines("m1nd cases", "m1nd cases --recurring", "m1nd cases explain 4a89", "m1nd cases --json"),
    "cases explain": lines("m1nd cases explain 4a8965e74b53"),
    "cases claims": lines("m1nd cases claims", "m1nd cases claims --export field-labels.jsonl"),
    "cases abandonment": lines("m1nd cases abandonment --trace trace.jsonl"),
    "sentinels": lines("m1nd sentinels run", "m1nd sentinels allow 9d215a3bfcce"),
    "sentinels run": lines("m1nd sentinels run", "m1nd sentinels run --timeout 30"),
    "sentinels allow": lines("m1nd sentinels allow 9d215a3bfcce"),
}


def attach(app) -> None:
    """Give every registered command and group without an epilog its examples."""
    def walk(typer_app, path: str) -> None:
        for info in typer_app.registered_commands:
            name = f"{path} {info.name}".strip()
            if not isinstance(info.epilog, str) and name in BY_PATH:
                info.epilog = BY_PATH[name]
        for group in typer_app.registered_groups:
            name = f"{path} {group.name}".strip()
            if not isinstance(group.epilog, str) and name in BY_PATH:
                group.epilog = BY_PATH[name]
            walk(group.typer_instance, name)

    walk(app, "")
