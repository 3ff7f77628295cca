"""Scheduled and on-demand mailbox reports (contract: reports.md).

calendar (rules, boundaries) → profiles → mailbox (the union, recorded in the ledger)
→ freeze (prepare, commit) → deliver (outbox, sinks) → render (Markdown, JSON, HTML).

freeze asks period (the period and run id), itemize (the entries) and head (the
frozen head); store keeps a profile's state over records (directories, canonical JSON)
and runs (frozen runs); render and html share phrases (the words and counts).
"""
