"""m1nd as a git citizen (contract spec/git.md): consent, the merge driver, hooks.

Small modules whose names say what they hold:

- `gitcmd`   plain `git` subprocesses with an environment cleaned of the variables
             that would point git at the wrong repository;
- `consent`  `m1nd init`: the one consent moment;
- `merge`    `m1nd merge-driver`: the union of three versions of a box;
- `hooks`    the shim template, `m1nd hooks install|uninstall|status`;
- `hookrun`  `m1nd hook run NAME`, the hot path the shims call (no typer, no rich,
             no gitpython); `hooknotice` what a post-* hook tells, `hookstage`
             what the pre-commit hook stages;
- `safety`   safe filing: which boxes a filing may write now (a hook, the
             pre-commit hook, a command; git mid-operation);
- `committed` the ids git holds for a box on local branches and in stashes;
- `managers` hook managers (pre-commit framework, husky, lefthook, overcommit):
             recognised, never installed over, told what to add;
- `health`   the doctor's `consent` and `git` checks (and letters in no box).

m1nd never runs `git commit`, `push`, `pull` or `fetch`, and never touches a path of a
repository outside `.m1nd/`, `.gitattributes` and the repository's own git config
(plus the hooks directory, only when asked to by `m1nd hooks install`).
"""
