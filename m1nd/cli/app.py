"""The typer application: the root callback (`--version`, `--inbox-sweep`) and the
command groups, each defined in its own module."""

from __future__ import annotations

import typer

from m1nd import __version__
from m1nd.cli import (cases, completion, demo, doctor, examples, git, help, letters, mailbox, report, roster, sentinels,
                      serve, show)
from m1nd.cli.options import Home, Json, NoDistribute, Roots, Spool

app = typer.Typer(
    name="m1nd",
    help="A git-native mailbox for the field reports that coding agents write.",
    add_completion=False,
    invoke_without_command=True,
    no_args_is_help=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=examples.ROOT,
)


@app.callback()
def root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True),
    inbox_sweep: bool = typer.Option(
        False, "--inbox-sweep", help="Distribute, then print the m1nd-inbox-sweep-v0 document."
    ),
    no_distribute: NoDistribute = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    if version:
        typer.echo(f"m1nd {__version__}")
        raise typer.Exit(0)
    if inbox_sweep:
        mailbox.print_sweep_json(home, spool, roots, no_distribute)
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


app.command("sweep")(mailbox.sweep)
app.command("distribute", epilog=examples.DISTRIBUTE)(mailbox.distribute)
app.command("box")(mailbox.box)
app.command("show")(show.show)
app.command("help")(help.help_command)
app.command("doctor", epilog=examples.DOCTOR)(doctor.doctor)
app.command("write", epilog=examples.WRITE)(letters.write)
app.command("pickup", epilog=examples.PICKUP)(letters.pickup)
app.command("answer", epilog=examples.ANSWER)(letters.answer)
app.add_typer(roster.app, name="roster", epilog=examples.ROSTER)
app.command("demo", epilog=examples.DEMO)(demo.demo)
app.command("init", epilog=examples.INIT)(git.init)
app.command("merge-driver", epilog=examples.MERGE)(git.merge_driver)
app.add_typer(git.hooks_app, name="hooks", epilog=examples.HOOKS)
app.add_typer(git.hook_app, name="hook", epilog=examples.HOOK)
app.add_typer(report.app, name="report")
app.add_typer(cases.app, name="cases")
app.add_typer(sentinels.app, name="sentinels")
app.command("serve")(serve.serve)
app.command("completion", epilog=examples.COMPLETION)(completion.completion)
examples.attach(app)
