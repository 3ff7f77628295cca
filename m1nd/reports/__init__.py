"""Scheduled and on-demand mailbox reports (contract: reports.md).

calendar (rules, boundaries) → profiles → mailbox (the union, recorded in the ledger)
→ freeze (prepare, commit) → deliver (outbox, sinks) → render (Markdown, JSON, HTML).
"""
