"""One function per document (ARCHITECTURE habit 13, datasette's way): each `--json`
document that the server also returns is computed once, here or in the core module it
belongs to, given a run (or the paths) and plain values. The command prints or renders
it; the route returns it (`m1nd/serve/source.py`, one call each). Nothing here parses
options, prints, or keeps an answer between calls: the read model is what is kept.

`say` is where a document's warnings go: `output.warn` for a command, the server's
log (each once) for a route.

| document (contract)                    | function                                  | command                      | route                   |
|----------------------------------------|-------------------------------------------|------------------------------|-------------------------|
| m1nd-doctor-v0 (mailbox.md §8)         | documents.doctor.doctor_report            | m1nd doctor --json           | GET /api/doctor         |
| delivered reports (reports.md §6)      | documents.reports.report_list             | m1nd report list --json      | GET /api/reports        |
|   its rows, newest first               | documents.reports.delivered               | m1nd report list             | GET /reports (page)     |
|   one delivered report's HTML          | documents.reports.delivered_html          | -                            | GET /reports/RUN_ID     |
| report status (reports.md §6)          | documents.reports.report_status           | m1nd report status --json    | -                       |
| cases overlay (cases.md §7)            | documents.cases.cases_document            | m1nd cases --json            | GET /api/cases          |
|   the overlay, for the page's shape    | documents.cases.cases_overlay             | -                            | GET /cases (page)       |
|   the fold open, for the human view    | documents.cases.opened                    | m1nd cases                   | -                       |
| m1nd-inbox-sweep-v0 (mailbox.md §6)    | m1nd.sweep.write_document                 | m1nd --inbox-sweep           | GET /api/inbox_sweep    |
| a box's letters (mailbox.md §7)        | m1nd.boxview.box_json                     | m1nd box SELECTOR --json     | GET /api/mailbox        |
| one letter (mailbox.md)                | m1nd.show.show_json                       | m1nd show ID --json          | GET /api/letters/ID     |

`TABLE` is the same, as data (a test checks that every function, command and route
named exists).
"""

from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    document: str
    function: str  # "module:name"
    command: str | None
    route: str | None


TABLE = (
    Entry("m1nd-doctor-v0", "m1nd.documents.doctor:doctor_report", "doctor --json", "/api/doctor"),
    Entry("delivered reports", "m1nd.documents.reports:report_list", "report list --json", "/api/reports"),
    Entry("delivered report rows", "m1nd.documents.reports:delivered", "report list", "/reports"),
    Entry("delivered report html", "m1nd.documents.reports:delivered_html", None, "/reports/{run_id}"),
    Entry("report status", "m1nd.documents.reports:report_status", "report status --json", None),
    Entry("cases overlay", "m1nd.documents.cases:cases_document", "cases --json", "/api/cases"),
    Entry("cases page", "m1nd.documents.cases:cases_overlay", None, "/cases"),
    Entry("cases view", "m1nd.documents.cases:opened", "cases", None),
    Entry("m1nd-inbox-sweep-v0", "m1nd.sweep:write_document", "--inbox-sweep", "/api/inbox_sweep"),
    Entry("box letters", "m1nd.boxview:box_json", "box --json", "/api/mailbox"),
    Entry("one letter", "m1nd.show:show_json", "show --json", "/api/letters/{ident}"),
)
