"""Case intelligence (contract cases.md): an overlay computed from the letters.

fingerprints.py  the fingerprint of a letter and the rule that gave its kind
source.py        the letters the overlay reads (distinct by full digest, with boxes)
overlay.py       fingerprints, witnesses, escalations and cases over those letters
engine.py        the one writer of engine letters (escalations, regressions, abandonment)
escalation.py    the step distribution calls: one escalation per fingerprint
witnesses.py     the witnesses and escalations of each file, kept as letters arrive
witnessscan.py   the byte search and parse of the lines that can be one of them
sentinels.py     the allowlist, probe runs, results and regression letters
claims.py        the honesty-letter labels and their export
abandonment.py   call traces in, abandonment letters out
health.py        doctor's `cases` check
"""
