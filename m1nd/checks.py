"""A health check's result and its levels: what doctor prints and every check returns.

Kept apart from doctor.py so that the checks (gitops/health.py, cases/health.py,
idcheck.py) and doctor import this module, never each other.
"""

from __future__ import annotations

from dataclasses import dataclass

OK, WARN, ERROR = "ok", "warn", "error"


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    message: str
    fix: str = ""

    def as_json(self) -> dict:
        return {"name": self.name, "status": self.status, "message": self.message, "fix": self.fix}
