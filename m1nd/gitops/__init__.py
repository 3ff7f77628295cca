"""m1nd as a git citizen (contract spec/git.md): consent, the merge driver, hooks.

Small modules whose names say what they hold:

- `gitcmd`   plain `git` subprocesses with an environment cleaned of the variables
             that would point git at the wrong repository;
- `consent`  `m1nd init`: the one consent moment;
- `merge`    `m1nd merge-driver`: the union of three versions of a box;
- `hooks`    the shim template, `m1nd hooks install|uninstall|status`;
- `hookrun`  `m1nd hook run NAME`, the hot path the shims call (no typer, no rich,
             no gitpython);
- `health`   the doctor's `consent` and `git` checks.

m1nd never runs `git commit`, `push`, `pull` or `fetch`, and never touches a path of a
repository outside `.m1nd/`, `.gitattributes` and the repository's own git config
(plus the hooks directory, only when asked to by `m1nd hooks install`).
"""
