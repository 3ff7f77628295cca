"""`m1nd doctor`'s document: the report over a run, from the read model (or from the
files when the spool cannot be read, which the report then says)."""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from m1nd.run import Run


def doctor_report(run: Run, moment: datetime, say: Callable[[str], None]):
    """The m1nd-doctor-v0 report (`m1nd.doctor.Report`: `.as_json()` is the document,
    `.failed` the exit 1) for a run opened tolerant, at `moment`."""
    from m1nd.doctor import diagnose
    from m1nd.errors import M1ndError
    from m1nd.readmodel import damage_reported, open_model

    try:
        model = open_model(run)
    except M1ndError:
        return diagnose(run, moment)  # the spool cannot be read: diagnose says so
    try:
        for note in model.notes:
            say(note)
        with damage_reported(run):
            return diagnose(run, moment, model)
    finally:
        model.close()
