"""Frozen runs under `<home>/records/reports/runs/<run_id>/` (reports contract section 3):
head.json, pages.jsonl, digests.txt, triggers.jsonl (a run with an update section) and
manifest.json, written last; the directory is renamed into place only when complete,
and every read checks each file against the manifest (fails closed).

An update's triggers are one canonical entry per line of triggers.jsonl; the head
names their count and the file's digest (so the report digest covers them through the
head's).  A run frozen before that holds them as a list in its head: both are read."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Iterable, Iterator

import orjson

from m1nd.errors import M1ndError
from m1nd.fsutil import atomic_write, fsync_dir
from m1nd.paths import Paths, ensure_dir
from m1nd.reports.records import _read_bytes, canonical, run_dir, runs_dir, sha256

@dataclass(frozen=True)
class Frozen:
    """A frozen run, checked against its manifest.  Its pages stay on disk: they are
    read one at a time (`iter_pages`, `iter_entries`), so a report of a million
    letters is rendered in the memory of one page."""

    run_id: str
    dir: str
    manifest: dict
    head: dict

    @property
    def digest(self) -> str:
        return self.manifest["digest"]

    def iter_pages(self) -> Iterator[dict]:
        with open(os.path.join(self.dir, PAGES), "rb") as fh:
            for line in fh:
                yield orjson.loads(line)

    def iter_entries(self) -> Iterator[dict]:
        for page in self.iter_pages():
            yield from page["entries"]

    def iter_triggers(self) -> Iterator[dict]:
        """The update's triggers, in report order (none without an update)."""
        update = self.head.get("update")
        if not update:
            return
        if isinstance(update["triggers"], list):
            yield from update["triggers"]
            return
        with open(os.path.join(self.dir, TRIGGERS), "rb") as fh:
            for line in fh:
                yield orjson.loads(line)

    @property
    def trigger_count(self) -> int:
        update = self.head.get("update")
        if not update:
            return 0
        triggers = update["triggers"]
        return len(triggers) if isinstance(triggers, list) else triggers

    @property
    def pages(self) -> list[dict]:
        return list(self.iter_pages())

    @property
    def entries(self) -> list[dict]:
        return list(self.iter_entries())

    @property
    def digests(self) -> list[str]:
        """Every ledger digest this run accounts for."""
        with open(os.path.join(self.dir, "digests.txt"), "rb") as fh:
            return fh.read().decode().split()


def report_digest(head_digest: str, page_digests: list[str]) -> str:
    return sha256(canonical({"head": head_digest, "pages": page_digests}))


PAGES = "pages.jsonl"  # one canonical JSON page per line, each with its own digest
TRIGGERS = "triggers.jsonl"  # one canonical trigger entry per line; the head names their count and digest


def write_frozen(paths: Paths, run_id: str, head: dict, pages: Iterable[dict | bytes], digests: Iterable[str],
                 crash=None, triggers: Iterable[bytes] = ()) -> str:
    """Write a frozen run: every file first, the manifest last, then rename the
    directory into place.  A crash leaves at most a temporary directory.  `pages`
    (dicts, or their canonical bytes), `digests` and, for a head with an update, its
    `triggers` (canonical bytes, in order) are streamed: none is held."""
    ensure_dir(runs_dir(paths))
    final = run_dir(paths, run_id)
    tmp = os.path.join(runs_dir(paths), f".tmp-{run_id}-{os.getpid()}")
    import shutil

    if os.path.isdir(tmp):
        shutil.rmtree(tmp)
    if os.path.isdir(final):
        shutil.rmtree(final)  # an earlier freeze of this run that did not verify (never committed)
    os.makedirs(tmp, mode=0o700)
    if head.get("update") is not None:
        head = _with_triggers(tmp, run_id, head, triggers)
    head_bytes = canonical(head)
    atomic_write(os.path.join(tmp, "head.json"), head_bytes)
    page_digests = []
    with open(os.path.join(tmp, PAGES), "wb") as fh:
        for i, page in enumerate(pages):
            line = page if isinstance(page, bytes) else canonical(page)
            page_digests.append(sha256(line))
            fh.write(line + b"\n")
            if crash and i == 0:
                fh.flush()
                crash("freeze-page")
        fh.flush()
        os.fsync(fh.fileno())
    listed = hashlib.sha256()
    with open(os.path.join(tmp, "digests.txt"), "wb") as fh:
        for d in digests:
            line = d.encode() + b"\n"
            listed.update(line)
            fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
    if crash:
        crash("freeze-before-manifest")
    head_digest = sha256(head_bytes)
    manifest = {
        "schema": "m1nd-report-manifest-v1",
        "run_id": run_id,
        "head": head_digest,
        "pages": page_digests,
        "digests_txt": listed.hexdigest(),
        "digest": report_digest(head_digest, page_digests),
    }
    atomic_write(os.path.join(tmp, "manifest.json"), canonical(manifest))
    fsync_dir(tmp)
    os.rename(tmp, final)
    fsync_dir(runs_dir(paths))
    return final


def _with_triggers(directory: str, run_id: str, head: dict, triggers: Iterable[bytes]) -> dict:
    """Write the update's triggers to triggers.jsonl; the head, naming their count and digest."""
    said = head["update"].get("triggers")
    if isinstance(said, list):  # a caller that holds them: the same file
        triggers = (canonical(t) for t in said)
    count, digest = _write_lines(os.path.join(directory, TRIGGERS), triggers)
    if isinstance(said, int) and said != count:  # a head that counts triggers it was not given
        raise ValueError(f"frozen report {run_id}: {count} triggers written, its head says {said}")
    return dict(head, update=dict(head["update"], triggers=count, triggers_digest=digest))


def _write_lines(path: str, lines: Iterable[bytes]) -> tuple[int, str]:
    """Write these lines (each newline-terminated), synced; (count, sha256 of the file)."""
    digest = hashlib.sha256()
    count = 0
    with open(path, "wb") as fh:
        for line in lines:
            line += b"\n"
            digest.update(line)
            fh.write(line)
            count += 1
        fh.flush()
        os.fsync(fh.fileno())
    return count, digest.hexdigest()


class Tampered(M1ndError):
    """A frozen report whose files do not match its manifest."""


def _tampered(run_id: str, what: str) -> M1ndError:
    return Tampered(f"frozen report {run_id}: {what}: refusing to go on")


def load_frozen(paths: Paths, run_id: str) -> Frozen | None:
    """A frozen run, every file checked against its manifest; None when there is none.

    A manifest that exists but does not match its files fails closed.
    """
    directory = run_dir(paths, run_id)
    data = _read_bytes(os.path.join(directory, "manifest.json"), "report manifest")
    if data is None:
        return None
    manifest, head_digest, page_digests = _manifest(run_id, data)
    head = orjson.loads(_checked(run_id, directory, "head.json", head_digest))
    count, entries = _checked_pages(run_id, directory, page_digests)
    _check_digests_txt(run_id, directory, manifest["digests_txt"])
    if head.get("pages") != count or head.get("entries") != entries:
        raise _tampered(run_id, "the head's counts do not match its pages")
    update = head.get("update")
    if update is not None and not (isinstance(update, dict) and isinstance(update.get("triggers"), list)):
        _check_triggers(run_id, directory, update)
    return Frozen(run_id, directory, manifest, head)


def _check_triggers(run_id: str, directory: str, update) -> None:
    """triggers.jsonl against the count and digest its head names, read a block at a time."""
    if not isinstance(update, dict) or not isinstance(update.get("triggers"), int) \
            or not isinstance(update.get("triggers_digest"), str):
        raise _tampered(run_id, "the head's update is damaged")
    digest, lines = hashlib.sha256(), 0
    try:
        with open(os.path.join(directory, TRIGGERS), "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
                lines += block.count(b"\n")
    except FileNotFoundError:
        raise _tampered(run_id, f"{TRIGGERS} is missing") from None
    except OSError as exc:
        raise M1ndError(f"cannot read report file {os.path.join(directory, TRIGGERS)}: {exc.strerror}") from None
    if digest.hexdigest() != update["triggers_digest"] or lines != update["triggers"]:
        raise _tampered(run_id, f"{TRIGGERS} does not match its digest")


def _manifest(run_id: str, data: bytes) -> tuple[dict, str, list[str]]:
    """(the manifest, its head's digest, its pages' digests), the manifest's own digest checked."""
    try:
        manifest = orjson.loads(data)
        head_digest, page_digests = manifest["head"], list(manifest["pages"])
        if manifest["run_id"] != run_id or not all(isinstance(d, str) for d in page_digests):
            raise ValueError
    except (orjson.JSONDecodeError, ValueError, KeyError, TypeError):
        raise _tampered(run_id, "the manifest is damaged") from None
    if manifest.get("digest") != report_digest(head_digest, page_digests):
        raise _tampered(run_id, "the manifest's digest does not cover its pages")
    return manifest, head_digest, page_digests


def _checked(run_id: str, directory: str, name: str, want: str) -> bytes:
    blob = _read_bytes(os.path.join(directory, name), "report file")
    if blob is None:
        raise _tampered(run_id, f"{name} is missing")
    if sha256(blob) != want:
        raise _tampered(run_id, f"{name} does not match its digest")
    return blob


def _checked_pages(run_id: str, directory: str, page_digests: list[str]) -> tuple[int, int]:
    """(pages, entries) of pages.jsonl, every page checked against its digest, one at a
    time: a large report is never held whole."""
    entries = 0
    try:
        fh = open(os.path.join(directory, PAGES), "rb")
    except FileNotFoundError:
        raise _tampered(run_id, f"{PAGES} is missing") from None
    except OSError as exc:
        raise M1ndError(f"cannot read report file {os.path.join(directory, PAGES)}: {exc.strerror}") from None
    with fh:
        count, last = 0, b""
        for block in iter(lambda: fh.read(1 << 20), b""):
            count += block.count(b"\n")
            last = block[-1:]
        count += 1 if last not in (b"", b"\n") else 0  # a last line with no newline is a page too
        if count < len(page_digests):
            raise _tampered(run_id, f"page {count + 1} is missing")
        if count > len(page_digests):
            raise _tampered(run_id, f"page {len(page_digests) + 1} is not in the manifest")
        fh.seek(0)
        for number, line in enumerate(fh, 1):
            line = line[:-1] if line.endswith(b"\n") else line
            if sha256(line) != page_digests[number - 1]:
                raise _tampered(run_id, f"page {number} does not match its digest")
            entries += len(orjson.loads(line)["entries"])  # a page that matches its digest parses
    return count, entries


def _check_digests_txt(run_id: str, directory: str, want: str) -> None:
    listed = hashlib.sha256()
    try:
        with open(os.path.join(directory, "digests.txt"), "rb") as dh:
            for block in iter(lambda: dh.read(1 << 20), b""):
                listed.update(block)
    except FileNotFoundError:
        raise _tampered(run_id, "digests.txt is missing") from None
    except OSError as exc:
        raise M1ndError(f"cannot read report file {os.path.join(directory, 'digests.txt')}: {exc.strerror}") from None
    if listed.hexdigest() != want:
        raise _tampered(run_id, "digests.txt does not match its digest")
