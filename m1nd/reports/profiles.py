"""Report profiles (reports contract section 1): presets, aliases and user profiles
from `<home>/config.toml` under `[report.profiles.NAME]`.

Everything is validated before anything is written: a bad rule, an unknown zone or an
unknown key is a usage error naming the profile.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import orjson

from m1nd import config
from m1nd.errors import M1ndError, NotFound, UsageError
from m1nd.paths import Paths
from m1nd.reports.calendar import Rule, load_zone, parse_rule

DEFAULT_PROFILE = "twice-daily"
DEFAULT_ZONE = "America/New_York"
DEFAULT_ALERT_CLASSES = ("memory_misdelivery",)
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")

PRESETS = {
    "twice-daily": ((), ("FREQ=DAILY;BYHOUR=9;BYMINUTE=0", "FREQ=DAILY;BYHOUR=17;BYMINUTE=0")),
    "daily": (("day",), ("FREQ=DAILY;BYHOUR=9;BYMINUTE=0",)),
    "weekly": (("week",), ("FREQ=WEEKLY;BYDAY=FR;BYHOUR=18;BYMINUTE=0",)),
}
PROFILE_KEYS = {"rrules", "timezone", "boxes", "aliases", "alert_classes", "sink", "enabled", "max_attempts", "cooldown"}
DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_COOLDOWN = 60  # minutes between two exception updates


@dataclass(frozen=True)
class Profile:
    name: str
    aliases: tuple[str, ...]
    rules: tuple[Rule, ...]
    timezone: str
    boxes: tuple[str, ...] | None  # None: every root in roster order, then medulla
    alert_classes: tuple[str, ...] = DEFAULT_ALERT_CLASSES
    sink: str | None = None
    enabled: bool = True  # false: nothing generated or delivered, the cursor kept
    max_attempts: int = DEFAULT_MAX_ATTEMPTS  # tries per report and sink before it is marked failed
    cooldown: int = DEFAULT_COOLDOWN  # minutes: a burst of triggers makes one update

    @property
    def zone(self):
        return load_zone(self.timezone)

    def box_labels(self, default: list[str]) -> list[str]:
        return list(self.boxes) if self.boxes is not None else default

    def as_json(self, default_boxes: list[str]) -> dict:
        """`{name, aliases, rrules, timezone, boxes}` in this key order."""
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "rrules": [r.text() for r in self.rules],
            "timezone": self.timezone,
            "boxes": self.box_labels(default_boxes),
        }

    def policy(self, boxes: list[str]) -> dict:
        """What a frozen report depends on: changing any of it is policy drift."""
        return {
            "name": self.name,
            "rrules": [r.text() for r in self.rules],
            "timezone": self.timezone,
            "boxes": boxes,
        }


def policy_digest(policy: dict) -> str:
    from m1nd.jsonout import record  # a box path that is not UTF-8: spelled with \xNN escapes

    return hashlib.sha256(record(policy, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _preset(name: str) -> Profile:
    aliases, rules = PRESETS[name]
    return Profile(name, aliases, tuple(parse_rule(r) for r in rules), DEFAULT_ZONE, None)


def _strings(value, what: str, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f"report profile {name!r}: {what} must be a list of non-empty strings")
    return tuple(value)


def _user_profile(name: str, table, paths: Paths) -> Profile:
    where = f"{paths.config}: report profile {name!r}"
    if not NAME_RE.match(name):
        raise UsageError(f"{where}: a profile name is lowercase letters, digits, '-' and '_'")
    if not isinstance(table, dict):
        raise UsageError(f"{where}: must be a table")
    unknown = sorted(set(table) - PROFILE_KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key {', '.join(unknown)} (known: {', '.join(sorted(PROFILE_KEYS))})")
    if "rrules" not in table and name not in PRESETS:
        raise UsageError(f"{where}: rrules is required")
    # a table named after a preset may only change some of it (`enabled = false`, a sink)
    texts = _strings(table["rrules"], "rrules", name) if "rrules" in table else list(PRESETS[name][1])
    if not texts:
        raise UsageError(f"{where}: rrules must hold at least one rule")
    try:
        rules = tuple(parse_rule(t) for t in texts)
    except UsageError as exc:
        raise UsageError(f"{where}: {exc.message}") from None
    if len(set(rules)) != len(rules):
        raise UsageError(f"{where}: a rule is given twice")
    zone = table.get("timezone", DEFAULT_ZONE)
    try:
        load_zone(zone)
    except UsageError as exc:
        raise UsageError(f"{where}: {exc.message}") from None
    boxes = _strings(table["boxes"], "boxes", name) if "boxes" in table else None
    if boxes is not None and len(set(b.lower() for b in boxes)) != len(boxes):
        raise UsageError(f"{where}: a box is listed twice")
    aliases = _strings(table.get("aliases", list(PRESETS[name][0]) if name in PRESETS else []), "aliases", name)
    alert = _strings(table["alert_classes"], "alert_classes", name) if "alert_classes" in table else DEFAULT_ALERT_CLASSES
    sink = table.get("sink")
    if sink is not None:
        # a relative path would depend on the directory cron or a shell runs from
        exec_ok = isinstance(sink, str) and sink.startswith("exec:") and sink[5:].strip()
        dir_ok = isinstance(sink, str) and (sink.startswith("/") or sink.startswith("~"))
        if not (exec_ok or dir_ok):
            raise UsageError(f"{where}: sink must be an absolute directory (or ~/…) or 'exec:COMMAND', not {sink!r}")
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise UsageError(f"{where}: enabled must be true or false")
    attempts = table.get("max_attempts", DEFAULT_MAX_ATTEMPTS)
    if type(attempts) is not int or not 1 <= attempts <= 1000:
        raise UsageError(f"{where}: max_attempts must be a whole number from 1 to 1000")
    cooldown = table.get("cooldown", DEFAULT_COOLDOWN)
    if type(cooldown) is not int or not 0 <= cooldown <= 10080:
        raise UsageError(f"{where}: cooldown must be a whole number of minutes from 0 to 10080")
    return Profile(name, aliases, rules, zone, boxes, alert, sink, enabled, attempts, cooldown)


def load_profiles(paths: Paths) -> dict[str, Profile]:
    """Every profile by name: the presets, then the user's (a user profile of a
    preset's name replaces it).  Invalid configuration fails the whole command."""
    profiles = {name: _preset(name) for name in PRESETS}
    report = config.load(paths).get("report", {})
    if not isinstance(report, dict):
        raise UsageError(f"{paths.config}: [report] must be a table")
    unknown = sorted(set(report) - {"profiles", "default"})
    if unknown:
        raise UsageError(f"{paths.config}: [report] has unknown key {', '.join(unknown)}")
    tables = report.get("profiles", {})
    if not isinstance(tables, dict):
        raise UsageError(f"{paths.config}: [report.profiles] must be a table")
    users = {name: _user_profile(name, table, paths) for name, table in tables.items()}
    # A user's word takes over a preset's alias of the same spelling.
    taken = {w for p in users.values() for w in (p.name, *p.aliases)}
    for name, profile in list(profiles.items()):
        if name not in users:
            kept = tuple(a for a in profile.aliases if a not in taken)
            profiles[name] = Profile(profile.name, kept, profile.rules, profile.timezone, profile.boxes)
    profiles.update(users)
    seen: dict[str, str] = {}
    for profile in profiles.values():
        for word in (profile.name, *profile.aliases):
            owner = seen.setdefault(word, profile.name)
            if owner != profile.name:
                raise UsageError(f"{paths.config}: {word!r} names both profile {owner!r} and {profile.name!r}")
    return profiles


def default_name(paths: Paths) -> str:
    report = config.load(paths).get("report", {})
    name = report.get("default", DEFAULT_PROFILE) if isinstance(report, dict) else DEFAULT_PROFILE
    if not isinstance(name, str):
        raise UsageError(f"{paths.config}: report.default must be a profile name")
    return name


def find_profile(paths: Paths, name: str | None) -> Profile:
    profiles = load_profiles(paths)
    wanted = name or default_name(paths)
    if wanted in profiles:
        return profiles[wanted]
    for profile in profiles.values():
        if wanted in profile.aliases:
            return profile
    known = ", ".join(sorted(profiles))
    if not name:  # the config's own default names no profile: the config is wrong
        raise UsageError(f"{paths.config}: report.default names no profile {wanted!r} (known: {known})")
    raise NotFound(f"no report profile {wanted!r} (known: {known})")


def to_run(paths: Paths, name: str | None) -> list[Profile]:
    """The profiles `m1nd report` runs: the one named, else the default profile, then
    every other enabled profile defined in config.toml, in name order (a preset not
    named there never runs on its own)."""
    if name:
        return [find_profile(paths, name)]
    default = find_profile(paths, None)
    report = config.load(paths).get("report", {})
    defined = sorted(report.get("profiles", {})) if isinstance(report, dict) else []
    profiles = load_profiles(paths)
    return [default] + [profiles[n] for n in defined if n != default.name and profiles[n].enabled]


def check_state_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise M1ndError(f"profile name {name!r} cannot name a state directory")
    return name
