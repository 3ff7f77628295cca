"""The distribution pass, along its flow (`m1nd/distribute.py` is its entry).

flow.py          one run: pick up the saved state or start over, read, file, save
routing_pass.py  each (brain, repo) pair's route and box; pairs routed again, lost boxes
reading.py       the new spool bytes, letters read back from their locations, the tail
filing.py        letters buffered per box, held back or appended in one locked write
receipt.py       what a run says (the whole spool, filed now or earlier), the ledger
"""
