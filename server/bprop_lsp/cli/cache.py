"""The persistent result cache of ``bprop-lsp check``, in the manner of ruff's ``.ruff_cache``.

A file's findings (and its per-file messages, e.g. a syntax-error warning) are kept in one small JSON file per
checked file, named by a hash of everything a result depends on besides the file's bytes: the cache format, the
code of bprop-lsp itself (its version and the size and modification time of every file of the package, so that an
edited checkout never reads a stale cache), the Python version (its parser decides the syntax check), the file's
path as read and as reported, the resolved settings and whether fixes are checked. The entry holds a hash of the
file's bytes; a run uses the entry only when that hash equals the bytes it has just read. Findings depend on the
file alone today; an entry also records the other files it depends on (``depends``: path and hash of bytes), read
back the same way, so that a workspace model can add them without a new format.

A second index, ``files.index`` (JSON), lets an unchanged file go unread (ruff's and git's stat check): for each file
looked at, its stat (size, modification and change times in nanoseconds, inode, device, mode) as taken just
before its bytes were read, with what those bytes were: a hash (a file with ``bprop``) or "no ``bprop``, plain
text" (a file the engine never sees). A file whose stat equals its record is not read: a file without ``bprop``
is done, one with ``bprop`` has its result entry looked up by the recorded hash (and read after all only when the
entry holds findings, whose text is shown). Any other stat means the file is read and hashed as before. A record
is kept only for a file last modified (or its inode changed) at least ``RACY_NS`` before the run began: a file
written in the same clock tick as the read ("racy git"), or with a coarse time stamp, or changed while the run read
it, could change again without a new stat, so it is hashed on each run until it has aged (then recorded).

Safety, since a cache folder sits in a checkout that may come from anywhere:
- entries are JSON, never pickle (loading a planted file runs nothing); an entry that does not decode, has another
  schema or does not look like a result is ignored and rewritten;
- nothing is read or written through a link: the cache folder must be a real folder, entries are opened with
  ``O_NOFOLLOW`` and must be regular files of bounded size;
- writes go to a fresh temporary file in the same folder (``O_EXCL``) and are renamed into place, so concurrent
  runs never see half an entry; the last writer wins, and both wrote the same result for the same key.
A folder that cannot be made or written turns the cache off for the run, with one warning. Nothing is made, and
neither ``json`` nor the package walk is paid for, until a file with ``bprop`` is looked up.
"""
from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sources import display_path
from .jobs import NEEDLE, FileResult

try:  # hashlib's own blake2b, without hashlib loading OpenSSL first (~3 ms a run)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without the module
    from hashlib import blake2b

if TYPE_CHECKING:
    from ..engine.model import Finding
    from ..sources import SourceFile
    from .jobs import Job

DIR_NAME = ".bprop_lsp_cache"
ENV_VAR = "BPROP_LSP_CACHE_DIR"
SCHEMA = 3  # (2: related locations may name another file; entries list their workspace dependencies; 3: and
# the project's files, for a module whose mode was searched for in its importers)
MAX_ENTRY_BYTES = 32 * 1024 * 1024
INDEX_NAME = "files.index"  # JSON; not *.json, the entries' names
MAX_INDEX_BYTES = 64 * 1024 * 1024
WORDS_KEY = "w:"  # the index's key of a file's import words: this + its absolute path (no file's path starts so)
MAX_INDEX_FILES = 200_000  # beyond this, a write keeps only the records of the files this run looked at
# A file whose modification or change time is less than this before the run's start is never trusted by its stat
# alone (coarse time stamps: FAT's 2 s; the kernel's coarse clock; a write in the tick of the read).
RACY_NS = 2_000_000_000
# https://bford.info/cachedir/ : backup tools skip a folder holding this file.
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by bprop-lsp.\n"
                "# For information about cache directory tags see https://bford.info/cachedir/\n")


def default_directory(cwd: Path | None = None) -> Path:
    """``$BPROP_LSP_CACHE_DIR``, else ``.bprop_lsp_cache`` in the project root: the folder of the nearest
    ``pyproject.toml`` at or above the working folder, else the working folder itself (ruff's rule)."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    here = (cwd or Path.cwd()).absolute()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder / DIR_NAME
    return here / DIR_NAME


def code_fingerprint() -> str:
    """What identifies the checker's own code: version, Python version, and every package file's size and mtime."""
    from .. import __version__

    root = Path(__file__).resolve().parent.parent
    base = str(root) + os.sep  # (each path's part below it, as os.path.relpath would give it, without its cost)
    digest = blake2b(digest_size=16)
    digest.update(f"{__version__}\0{sys.version}\0{sys.implementation.name}\0".encode())
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(folder, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            digest.update(f"{path[len(base):]}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def content_hash(raw: bytes) -> str:
    return blake2b(raw, digest_size=20).hexdigest()


class ResultCache:
    """Read and write ``check`` results under one folder (see the module docstring)."""

    def __init__(self, directory: Path, fingerprint: str | None = None, warn=None):
        self.directory = directory
        self.entries = directory / f"v{SCHEMA}"
        self._fingerprint = fingerprint
        self._warn = warn or (lambda message: print(f"bprop-lsp: warning: {message}", file=sys.stderr))
        self.enabled = True
        self._prepared = False
        self.hits = 0  # files with bprop whose result was replayed
        self.misses = 0  # files with bprop looked up and not found
        self.unread = 0  # files done by their stat alone (with or without bprop)
        self.started_ns = time.time_ns()  # before any file of this run is stat'ed or read
        self._index: dict | None = None  # abspath -> record, as read (files.index)
        self._index_stamp: tuple | None = None  # (ino, size, mtime_ns) of files.index as read
        self._index_new: dict[str, str] = {}  # records this run learnt
        self._seen: set[str] = set()
        self._memo: tuple[str, dict] | None = None  # (key, entry) read by replay(), for lookup()
        # (roots, words) -> the files there whose import statements spell one of the words, as this run finds them
        self._importing: dict[tuple, tuple[str, ...]] = {}

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = code_fingerprint()
        return self._fingerprint

    # -- the folder -------------------------------------------------------------------------------------------
    def _ready(self) -> bool:
        if not self._prepared:
            self._prepared = True
            self._prepare()
        return self.enabled

    def _prepare(self) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._real_folder(self.directory)
            for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", "# Made by bprop-lsp.\n*\n")):
                self._write_new(self.directory / name, text.encode(), replace=False)
            self.entries.mkdir(exist_ok=True)
            self._real_folder(self.entries)
        except OSError as exc:
            self._disable(f"cache folder {self.directory} not usable ({_reason(exc)}); running without a cache")

    @staticmethod
    def _real_folder(path: Path) -> None:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise OSError(f"{path} is not a folder (a link or a file)")

    def _disable(self, message: str) -> None:
        if self.enabled:
            self.enabled = False
            self._warn(message)

    # -- keys -------------------------------------------------------------------------------------------------
    def key(self, job: "Job", label: str, absolute: str | None = None) -> str:
        """The name of ``job``'s entry (``label``: the file's name as reported; ``absolute``: its path's)."""
        verify = job.options.shows_fixes or job.options.fix or job.options.diff
        parts = (str(SCHEMA), self.fingerprint, absolute or os.path.abspath(job.path), label, repr(job.settings),
                 str(bool(verify)), repr(job.roots))
        return blake2b("\0".join(parts).encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()

    # -- the stat index ---------------------------------------------------------------------------------------
    def known(self, path: str, st: os.stat_result, absolute: str | None = None) -> str | None:
        """What the index says of the file at ``path`` (``absolute``: its absolute path, if known) whose stat is
        ``st``: ``""`` (no ``bprop``, plain text), the hash of its bytes, or None (no record for exactly this
        stat)."""
        files = self._load_index()
        if absolute is None:
            absolute = os.path.abspath(path)
        self._seen.add(absolute)
        record = self._index_new.get(absolute) or files.get(absolute)
        if record.__class__ is not str:
            return None
        prefix = signature(st) + ":"
        if not record.startswith(prefix):
            return None
        digest = record[len(prefix):]
        return digest if digest == "" or _is_digest(digest) else None

    def remember(self, path: str, st: os.stat_result, digest: str) -> None:
        """Record that the bytes read after ``st`` was taken are ``digest`` (``""``: no ``bprop``), unless the
        file is too young for its stat to tell later changes apart (``RACY_NS``)."""
        if max(st.st_mtime_ns, st.st_ctime_ns) >= self.started_ns - RACY_NS:
            return
        files = self._load_index()
        absolute = os.path.abspath(path)
        self._seen.add(absolute)
        record = f"{signature(st)}:{digest}"
        if files.get(absolute) != record:
            self._index_new[absolute] = record

    def remember_words(self, path: str, st: os.stat_result, words: frozenset[bytes]) -> None:
        """Record the import words (``engine.import_words``) of the bytes read after ``st`` was taken: a later run
        searching the project for the modules importing one (the entry script's mode) need not read the file
        while its stat is the same (``import_words``). Not for a file too young to be told apart by its stat."""
        if max(st.st_mtime_ns, st.st_ctime_ns) >= self.started_ns - RACY_NS:
            return
        files = self._load_index()
        key = WORDS_KEY + os.path.abspath(path)
        self._seen.add(key)
        record = f"{signature(st)}:{' '.join(sorted(w.decode('ascii', 'replace') for w in words))}"
        if files.get(key) != record:
            self._index_new[key] = record

    def import_words(self, path: str) -> frozenset[bytes] | None:
        """The import words of the file at ``path`` as recorded for its stat now; None: no such record."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = WORDS_KEY + os.path.abspath(path)
        record = self._index_new.get(key) or self._load_index().get(key)
        if record.__class__ is not str:
            return None
        prefix = signature(st) + ":"
        if not record.startswith(prefix):
            return None
        self._seen.add(key)
        return frozenset(record[len(prefix):].encode("ascii", "replace").split())

    def listing(self, path: str, st: os.stat_result) -> list[tuple[str, str, int]] | None:
        """The walk's listing of the folder ``path`` kept for exactly the stat ``st`` (``sources.Listings``)."""
        record = self._load_index().get(os.path.join(os.path.abspath(path), ""))
        if record.__class__ is not str:
            return None
        prefix = signature(st) + ":"
        if not record.startswith(prefix):
            return None
        body = record[len(prefix):]
        entries = []
        try:
            for item in body.split("/") if body else ():
                head, _, name = item.partition(":")
                kind, inode = head[:1], int(head[1:] or "0")
                if kind not in ("d", "f", "x") or not name or "\0" in name:
                    return None
                entries.append((name, kind, inode))
        except ValueError:
            return None
        return entries

    def record_listing(self, path: str, st: os.stat_result, entries: list[tuple[str, str, int]]) -> None:
        """Keep a folder's listing for its stat, unless the folder is too young to be told apart by it."""
        if max(st.st_mtime_ns, st.st_ctime_ns) >= self.started_ns - RACY_NS:
            return
        files = self._load_index()
        key = os.path.join(os.path.abspath(path), "")  # (a folder's key ends with a separator: no file's does)
        self._seen.add(key)
        body = "/".join(f"{kind}{inode if kind == 'f' else ''}:{name}" for name, kind, inode in entries)
        record = f"{signature(st)}:{body}"
        if files.get(key) != record:
            self._index_new[key] = record

    def replay(self, job: "Job") -> "FileResult | None":
        """The result of ``job`` from the stat index alone, without reading the file, or None.

        A file without ``bprop`` is done; a file with it is replayed when its entry for the recorded hash holds no
        findings (findings are shown with their text: those files are read, and ``lookup`` serves them)."""
        if job.path == "-":
            return None
        try:
            st = os.stat(job.path)
        except OSError:
            return None  # reading it says why
        if not stat.S_ISREG(st.st_mode):
            return None
        absolute = os.path.abspath(job.path)
        digest = self.known(job.path, st, absolute)
        if digest is None:
            return None
        label = job.display or display_path(job.path)
        if digest == "":
            self.unread += 1
            return FileResult(label, checked=True)
        if not self._ready():
            return None
        key = self.key(job, label, absolute)
        data = self._read(key)
        if data is None or data.get("content") != digest or not self._deps_unchanged(data):
            return None
        if data.get("findings") != []:
            self._memo = (key, data)
            return None
        result = _decode_result(data, label, "")
        if result is not None:
            self.hits += 1
            self.unread += 1
        return result

    def _load_index(self) -> dict:
        if self._index is None:
            self._index, self._index_stamp = {}, None
            try:  # nothing read through a link: the folders must be real ones (a link there turns the cache off)
                self._real_folder(self.directory)
                self._real_folder(self.entries)
            except OSError:
                return self._index
            self._index, self._index_stamp = self._read_index()
        return self._index

    def _read_index(self) -> tuple[dict, tuple | None]:
        raw, st = _read_regular_file(self.entries / INDEX_NAME, MAX_INDEX_BYTES)
        if raw is None or st is None:
            return {}, None
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        import json

        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return {}, stamp
        if not (isinstance(data, dict) and data.get("schema") == SCHEMA and data.get("needle") == NEEDLE
                and isinstance(data.get("files"), dict)):
            return {}, stamp
        return data["files"], stamp

    def close(self) -> None:
        """Write what this run learnt to the index (merged with what another run wrote meanwhile)."""
        if not self._index_new or not self.enabled:
            return
        if not self._prepared:
            # No file with bprop was looked up: the folder is not made for this run, but one made before is used
            # (a run over files without bprop is then not read again either).
            try:
                if not stat.S_ISDIR(os.lstat(self.entries).st_mode):
                    return
            except OSError:
                return
            if not self._ready():
                return
        # Merged with what is there now: another run may have written it meanwhile (a record is right for its stat
        # forever, whoever wrote it).
        try:
            st = os.lstat(self.entries / INDEX_NAME)
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            stamp = None
        if self._index is not None and stamp == self._index_stamp:
            files = self._index  # unchanged since this run read it
        else:
            files, _ = self._read_index()
        files = {path: record for path, record in files.items() if record.__class__ is str}  # (no junk carried)
        files.update(self._index_new)
        if len(files) > MAX_INDEX_FILES:
            files = {path: record for path, record in files.items() if path in self._seen}
        import json

        payload = json.dumps({"schema": SCHEMA, "needle": NEEDLE, "files": files}, ensure_ascii=True,
                             separators=(",", ":")).encode()
        self._index_new = {}
        try:
            self._write_new(self.entries / INDEX_NAME, payload, replace=True)
        except OSError as exc:
            self._disable(f"cannot write to the cache folder {self.directory} ({_reason(exc)}); "
                          "running without a cache")

    # -- reading ----------------------------------------------------------------------------------------------
    def lookup(self, job: "Job", source: "SourceFile", st: os.stat_result | None = None) -> "FileResult | None":
        """The cached result of ``job`` for exactly these bytes, or None (``st``: the stat taken before they were
        read, recorded in the index)."""
        if job.path == "-" or not self._ready():
            return None
        digest = content_hash(source.raw)
        if st is not None:
            self.remember(job.path, st, digest)
        key = self.key(job, source.path)
        if self._memo is not None and self._memo[0] == key:
            data = self._memo[1]
        else:
            data = self._read(key)
        self._memo = None
        result = None
        if data is not None and data.get("content") == digest and self._deps_unchanged(data):
            result = _decode_result(data, source.path, source.text)
            if result is not None and (job.options.fix or job.options.diff) and _would_fix(result, job):
                result = None  # --fix/--diff run the fixes themselves and check what they write
        if result is None:
            self.misses += 1
        else:
            self.hits += 1
        return result

    def _deps_unchanged(self, data: dict) -> bool:
        """Whether every file the entry depends on still holds the bytes it records (by the stat index where it
        has a record for the file's stat, else read and hashed)."""
        deps = data.get("depends")
        if not isinstance(deps, list):
            return False
        listing = data.get("listing")
        if listing is not None:
            if not (isinstance(listing, list) and len(listing) == 3
                    and all(isinstance(part, list) and all(isinstance(x, str) for x in part) for part in listing)):
                return False
            roots, words, files = (tuple(part) for part in listing)
            if self._files_importing(roots, words) != files:
                return False  # (a file came to import the module, or no longer does: its mode may differ)
        for dep in deps:
            if not (isinstance(dep, list) and len(dep) == 2 and all(isinstance(x, str) for x in dep)):
                return False
            path, digest = dep
            if digest == "-":  # looked for and absent: still absent
                if os.path.lexists(path):
                    return False
                continue
            try:
                st = os.stat(path)
            except OSError:
                return False
            if self.known(path, st) == digest and digest:
                continue
            raw, st = _read_regular_file(Path(path), MAX_ENTRY_BYTES, follow=True)
            if raw is None or st is None:
                return False
            now = content_hash(raw)
            self.remember(path, st, now)
            if now != digest:
                return False
        return True

    def _files_importing(self, roots: tuple[str, ...], words: tuple[str, ...]) -> tuple[str, ...]:
        """``engine.files_importing`` as the files stand in this run (once per run): each file's import words from
        the stat index where it has them for the file's stat, else read (and kept)."""
        key = (roots, words)
        found = self._importing.get(key)
        if found is None:
            from ..engine import files_importing, import_words

            def words_of(path: str) -> frozenset[bytes]:
                known = self.import_words(path)
                if known is not None:
                    return known
                raw, st = _read_regular_file(Path(path), MAX_ENTRY_BYTES, follow=True)
                if raw is None or st is None:
                    return frozenset()
                found_words = import_words(raw)
                self.remember_words(path, st, found_words)
                return found_words

            found = self._importing[key] = tuple(files_importing(
                roots, frozenset(w.encode("ascii", "replace") for w in words), words_of))
        return found

    def _read(self, key: str) -> dict | None:
        raw, _ = _read_regular_file(self.entries / f"{key}.json", MAX_ENTRY_BYTES)
        if raw is None:
            return None
        import json

        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            return None
        return data

    # -- writing ----------------------------------------------------------------------------------------------
    def store(self, job: "Job", source: "SourceFile", result: "FileResult") -> None:
        """Keep ``result`` (of ``source`` as read) unless it is one a later run must not replay."""
        if job.path == "-" or result.error or not result.checked or result.changed or not self._ready():
            return
        import json

        data = {"schema": SCHEMA, "content": content_hash(source.raw), "depends": [list(d) for d in result.depends],
                "listing": None if result.listing is None else [list(part) for part in result.listing],
                "messages": list(result.messages), "findings": [encode_finding(f) for f in result.findings]}
        payload = json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode()
        try:
            self._write_new(self.entries / f"{self.key(job, source.path)}.json", payload, replace=True)
        except OSError as exc:
            self._disable(f"cannot write to the cache folder {self.directory} ({_reason(exc)}); "
                          "running without a cache")

    def _write_new(self, path: Path, payload: bytes, *, replace: bool) -> None:
        """Write ``payload`` to ``path`` through a new temporary file renamed over it (never through a link)."""
        if not replace:
            try:
                os.lstat(path)
                return  # already there (a link there is left alone, never followed)
            except FileNotFoundError:
                pass
        tmp = path.with_name(f".{path.name[:40]}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp, flags, 0o644)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
            os.replace(tmp, path)  # rename replaces a link at ``path`` itself, never its target
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def signature(st: os.stat_result) -> str:
    """What the index compares of a file's stat. (A record is this, a colon and the digest: one JSON string per
    file, which ``json`` reads several times faster than a list of numbers.)"""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}:{st.st_dev}:{st.st_mode}"


def _is_digest(value: str) -> bool:
    return len(value) == 40 and all(c in "0123456789abcdef" for c in value)


def _read_regular_file(path: Path, limit: int, *,
                       follow: bool = False) -> tuple[bytes | None, os.stat_result | None]:
    """The bytes of ``path`` and its stat (taken before reading) if it is a regular file of at most ``limit``
    bytes, opened without following a link (unless ``follow``) or waiting on a FIFO; (None, None) otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except OSError:
        return None, None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None, None
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(limit + 1)
        if len(raw) > limit:
            return None, None
        return raw, st
    except OSError:
        return None, None
    finally:
        os.close(fd)


def _would_fix(result: "FileResult", job: "Job") -> bool:
    return any(f.fix is not None and (f.fix.is_safe or job.options.unsafe_fixes) for f in result.findings)


# -- findings as JSON -----------------------------------------------------------------------------------------

def _span(s) -> list[int]:
    return [s.start.line, s.start.column, s.end.line, s.end.column]


def encode_finding(f: "Finding") -> dict[str, Any]:
    fix = None
    if f.fix is not None:
        fix = {"title": f.fix.title, "applicability": f.fix.applicability.value,
               "edits": [[_span(e.span), e.new_text] for e in f.fix.edits],
               "repairs": _span(f.fix.repairs) if f.fix.repairs is not None else None}
    return {"code": f.code, "name": f.name, "message": f.message, "severity": f.severity.value,
            "span": _span(f.span), "url": f.url, "fix": fix,
            "related": [[_span(r.span), r.message] + ([r.path] if r.path else []) for r in f.related],
            "noqa_line": f.noqa_line}


def decode_finding(d: Any) -> "Finding":
    """The finding ``encode_finding`` wrote; ValueError/TypeError/KeyError for anything else."""
    from ..engine.model import Applicability, Edit, Finding, Fix, Severity, Span

    def span(v) -> Span:
        if not (isinstance(v, list) and len(v) == 4 and all(type(x) is int and x >= 0 for x in v)):
            raise ValueError("bad span")
        return Span.of(*v)

    def text(v) -> str:
        if not isinstance(v, str):
            raise TypeError("not a string")
        return v

    fix = None
    if d["fix"] is not None:
        fd = d["fix"]
        fix = Fix(text(fd["title"]), tuple(Edit(span(s), text(t)) for s, t in fd["edits"]),
                  Applicability(fd["applicability"]), span(fd["repairs"]) if fd.get("repairs") is not None else None)
    noqa = d["noqa_line"]
    if noqa is not None and type(noqa) is not int:
        raise TypeError("bad noqa line")
    return Finding(text(d["code"]), text(d["name"]), text(d["message"]), Severity(d["severity"]), span(d["span"]),
                   text(d["url"]), fix, tuple(_related(r, span, text) for r in d["related"]), noqa)


def _related(r, span, text):
    from ..engine.model import Related

    if not (isinstance(r, list) and len(r) in (2, 3)):
        raise ValueError("bad related")
    return Related(span(r[0]), text(r[1]), text(r[2]) if len(r) == 3 else None)


def _decode_result(data: dict, label: str, text: str) -> "FileResult | None":
    try:
        findings = [decode_finding(d) for d in data["findings"]]
        messages = [m for m in data["messages"] if isinstance(m, str)]
        if len(messages) != len(data["messages"]):
            return None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    result = FileResult(label, findings=findings, messages=messages, checked=True,
                        depends=[tuple(d) for d in data.get("depends", [])])
    result.text = text if findings else ""
    return result
