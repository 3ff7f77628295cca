"""The delivered-reports documents (reports contract section 6): `m1nd report list`,
`m1nd report status`, and a delivered report's stored HTML."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

# a receipt's fields, in the order `report list --json` prints them
LISTED = ("run_id", "profile", "kind", "classification", "period", "delivered_at", "sink", "digest", "verified")
# a receipt as `report status --json` shows it
STATUS_RECEIPT = ("run_id", "sink", "digest", "verified")


def delivered(paths) -> list[dict]:
    """Every delivered report of every profile, newest first (by delivery time, then
    run id)."""
    from m1nd.reports import store
    from m1nd.reports.profiles import load_profiles

    rows = []
    for name in load_profiles(paths):
        for r in store.load_state(paths, name).receipts:
            rows.append({k: r[k] for k in LISTED})
    rows.sort(key=lambda r: r["run_id"], reverse=True)
    rows.sort(key=lambda r: r["delivered_at"], reverse=True)
    return rows


@dataclass(frozen=True)
class ReportList:
    """A window of the delivered reports."""

    reports: tuple[dict, ...]
    total: int
    offset: int

    @property
    def truncated(self) -> bool:
        return self.offset + len(self.reports) < self.total

    @property
    def after(self) -> int:
        """How many come after the window."""
        return self.total - self.offset - len(self.reports)

    def as_json(self) -> dict:
        return {"reports": list(self.reports), "returned": len(self.reports), "total": self.total,
                "truncated": self.truncated}


def report_list(paths, limit: int, offset: int) -> ReportList:
    """`m1nd report list --json [--limit N] [--offset K]`."""
    rows = delivered(paths)
    return ReportList(tuple(rows[offset:offset + limit]), len(rows), offset)


def report_status(paths, moment: datetime) -> dict:
    """`m1nd report status --json`: each profile's cursor, next boundary, outbox,
    failed runs, update standing and last ten receipts."""
    from m1nd.clock import stamp
    from m1nd.reports import calendar, store, updates
    from m1nd.reports.profiles import load_profiles

    doc = {"profiles": {}}
    for name, prof in sorted(load_profiles(paths).items()):
        state = store.load_state(paths, name)
        nb = calendar.next_after(moment, prof.rules, prof.zone)
        doc["profiles"][name] = {
            "cursor": state.cursor,
            "next_boundary": stamp(nb) if nb else None,
            "outbox": state.outbox_runs(),
            "enabled": prof.enabled,
            "failed": state.failed(prof.max_attempts),
            **updates.status(state, prof),
            "receipts": [{k: r[k] for k in STATUS_RECEIPT} for r in state.receipts[-10:]],
        }
    return doc


def delivered_html(paths, run_id: str) -> bytes:
    """A delivered report's HTML: the frozen run rendered, checked against its
    digests (the same bytes its directory sink stored)."""
    from m1nd.errors import NotFound
    from m1nd.reports import formats, store
    from m1nd.reports.freeze import is_run_id

    if not is_run_id(run_id) or not any(r["run_id"] == run_id for r in delivered(paths)):
        raise NotFound(f"no delivered report {run_id}")
    frozen = store.load_frozen(paths, run_id)
    if frozen is None:
        raise NotFound(f"no delivered report {run_id}")
    return formats.render(frozen, "html")
