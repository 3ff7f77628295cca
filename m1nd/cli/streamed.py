"""A JSON document streamed to stdout from the read model, and what a failure
once it has begun becomes."""

from __future__ import annotations

import typer

from m1nd.cli import output


class _Counted:
    """A binary stream that knows whether anything was written to it."""

    def __init__(self, raw) -> None:
        self.raw, self.written = raw, False

    def write(self, data) -> int:
        self.written = self.written or bool(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()


def streamed_document(write, run) -> None:
    """A JSON document streamed to stdout (`m1nd box --json`): `write(out, notes)`
    writes it.  A read model that fails once the document has begun is said in one
    line on stderr (exit 1), as for --inbox-sweep: an error document after half of one
    would be no JSON at all."""
    import sys

    from m1nd.errors import M1ndError
    from m1nd.readmodel import damage_reported

    notes: list[str] = []
    out = _Counted(sys.stdout.buffer)
    try:
        with damage_reported(run):
            write(out, notes)
    except M1ndError as exc:
        if not out.written:
            raise  # the error document, as for any failure before the first byte
        out.flush()
        output.error(exc, False)
        raise typer.Exit(exc.exit_code) from None
    finally:
        for note in notes:
            output.warn(note)
