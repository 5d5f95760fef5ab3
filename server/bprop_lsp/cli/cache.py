"""The persistent result cache of ``bprop-lsp check``, in the manner of ruff's ``.ruff_cache``.

A file's findings (and its per-file messages, e.g. a syntax-error warning) are kept in one small JSON file per
checked file, named by a hash of everything a result depends on besides the file's bytes: the cache format, the
code of bprop-lsp itself (its version and the size and modification time of every file of the package, so that an
edited checkout never reads a stale cache), the Python version (its parser decides the syntax check), the file's
path as read and as reported, the resolved settings and whether fixes are checked. The entry holds a hash of the
file's bytes; a run uses the entry only when that hash equals the bytes it has just read. Findings depend on the
file alone today; an entry also records the other files it depends on (``depends``: path and hash of bytes), read
back the same way, so that a workspace model can add them without a new format.

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

import hashlib
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engine.model import Finding
    from ..sources import SourceFile
    from .jobs import FileResult, Job

DIR_NAME = ".bprop_lsp_cache"
ENV_VAR = "BPROP_LSP_CACHE_DIR"
SCHEMA = 1
MAX_ENTRY_BYTES = 32 * 1024 * 1024
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
    digest = hashlib.blake2b(digest_size=16)
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
            digest.update(f"{os.path.relpath(path, root)}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def content_hash(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=20).hexdigest()


class ResultCache:
    """Read and write ``check`` results under one folder (see the module docstring)."""

    def __init__(self, directory: Path, fingerprint: str | None = None, warn=None):
        self.directory = directory
        self.entries = directory / f"v{SCHEMA}"
        self._fingerprint = fingerprint
        self._warn = warn or (lambda message: print(f"bprop-lsp: warning: {message}", file=sys.stderr))
        self.enabled = True
        self._prepared = False
        self.hits = 0
        self.misses = 0

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
    def key(self, job: "Job", source: "SourceFile") -> str:
        verify = job.options.shows_fixes or job.options.fix or job.options.diff
        parts = (str(SCHEMA), self.fingerprint, os.path.abspath(job.path), source.path, repr(job.settings),
                 str(bool(verify)))
        return hashlib.blake2b("\0".join(parts).encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()

    # -- reading ----------------------------------------------------------------------------------------------
    def lookup(self, job: "Job", source: "SourceFile") -> "FileResult | None":
        """The cached result of ``job`` for exactly these bytes, or None."""
        if job.path == "-" or not self._ready():
            return None
        data = self._read(self.key(job, source))
        result = None
        if data is not None and data.get("content") == content_hash(source.raw) and _deps_unchanged(data):
            result = _decode_result(data, source)
            if result is not None and (job.options.fix or job.options.diff) and _would_fix(result, job):
                result = None  # --fix/--diff run the fixes themselves and check what they write
        if result is None:
            self.misses += 1
        else:
            self.hits += 1
        return result

    def _read(self, key: str) -> dict | None:
        path = self.entries / f"{key}.json"
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
                return None
            with os.fdopen(fd, "rb", closefd=False) as f:
                raw = f.read(MAX_ENTRY_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
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

        data = {"schema": SCHEMA, "content": content_hash(source.raw), "depends": [],
                "messages": list(result.messages), "findings": [encode_finding(f) for f in result.findings]}
        payload = json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode()
        try:
            self._write_new(self.entries / f"{self.key(job, source)}.json", payload, replace=True)
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


def _deps_unchanged(data: dict) -> bool:
    deps = data.get("depends")
    if not isinstance(deps, list):
        return False
    for dep in deps:
        if not (isinstance(dep, list) and len(dep) == 2 and all(isinstance(x, str) for x in dep)):
            return False
        try:
            raw = Path(dep[0]).read_bytes()
        except OSError:
            return False
        if content_hash(raw) != dep[1]:
            return False
    return True


def _would_fix(result: "FileResult", job: "Job") -> bool:
    return any(f.fix is not None and (f.fix.is_safe or job.options.unsafe_fixes) for f in result.findings)


# -- findings as JSON -----------------------------------------------------------------------------------------

def _span(s) -> list[int]:
    return [s.start.line, s.start.column, s.end.line, s.end.column]


def encode_finding(f: "Finding") -> dict[str, Any]:
    fix = None
    if f.fix is not None:
        fix = {"title": f.fix.title, "applicability": f.fix.applicability.value,
               "edits": [[_span(e.span), e.new_text] for e in f.fix.edits]}
    return {"code": f.code, "name": f.name, "message": f.message, "severity": f.severity.value,
            "span": _span(f.span), "url": f.url, "fix": fix,
            "related": [[_span(r.span), r.message] for r in f.related], "noqa_line": f.noqa_line}


def decode_finding(d: Any) -> "Finding":
    """The finding ``encode_finding`` wrote; ValueError/TypeError/KeyError for anything else."""
    from ..engine.model import Applicability, Edit, Finding, Fix, Related, Severity, Span

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
                  Applicability(fd["applicability"]))
    noqa = d["noqa_line"]
    if noqa is not None and type(noqa) is not int:
        raise TypeError("bad noqa line")
    return Finding(text(d["code"]), text(d["name"]), text(d["message"]), Severity(d["severity"]), span(d["span"]),
                   text(d["url"]), fix, tuple(Related(span(s), text(m)) for s, m in d["related"]), noqa)


def _decode_result(data: dict, source: "SourceFile") -> "FileResult | None":
    from .jobs import FileResult

    try:
        findings = [decode_finding(d) for d in data["findings"]]
        messages = [m for m in data["messages"] if isinstance(m, str)]
        if len(messages) != len(data["messages"]):
            return None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    result = FileResult(source.path, findings=findings, messages=messages, checked=True)
    result.text = source.text if findings else ""
    return result
