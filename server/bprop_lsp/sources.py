"""Finding the files to check, reading them as text and writing fixes back: shared by the CLI and the server.

Walking opens nothing but ignore files; reading opens only regular files (a FIFO, a device or a link to one is
refused before it is opened) and never more than ``MAX_BYTES + 1`` bytes; writing goes through a fresh temporary
file in the target's folder and a rename, after checking that the file still holds what was read.
"""
from __future__ import annotations

import errno
import fnmatch
import io
import os
import stat
import tokenize
from dataclasses import dataclass
from typing import Callable, Iterator, Protocol

from .gitignore import IgnoreFile, global_excludes_file, parse_file

SKIP_DIRS = {
    ".git", ".hg", ".svn", ".venv", "venv", "env", ".env", "node_modules", "build", "dist", "__pycache__",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "site-packages", ".hypothesis",
    ".ipynb_checkpoints",
}
SUFFIXES = (".py", ".pyi")
MAX_BYTES = 10 * 1024 * 1024  # larger "sources" are generated or data: skip them with a message
MAX_IGNORE_FILE_BYTES = 1024 * 1024

# Called with (path, reason, is_error) for every path the walk passes over with something to say.
OnSkip = Callable[[str, str, bool], None]


class SourceError(Exception):
    """A file that cannot be checked (or written); the message names the file and the reason."""


class SourceChanged(SourceError):
    """The file changed on disk between reading and writing the fix: it is left as it is."""


@dataclass
class SourceFile:
    path: str  # as shown to the user ("-" for stdin)
    text: str
    encoding: str
    raw: bytes
    # The path the file was read from (None for stdin): what a fix is written back to.
    origin: str | None = None


# ---------------------------------------------------------------------------------------------------- walking

def display_path(path: str) -> str:
    """``path`` as printed: without leading ``./``."""
    while path.startswith("./"):
        path = path[2:].lstrip("/")
    return path or "."


def _join(folder: str, name: str) -> str:
    return name if folder in ("", ".") else os.path.join(folder, name)


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


@dataclass
class WalkStats:
    """What a walk passed over on purpose (for "no Python files found": were they ignored?)."""

    ignored_files: int = 0  # Python files an ignore file or an exclude pattern skipped
    ignored_dirs: int = 0  # folders an ignore file or an exclude pattern skipped (not entered)
    duplicates: int = 0  # files reached again under another name (a link): checked once


class Listings(Protocol):
    """Folder listings kept between walks (the CLI's result cache): what a walk would keep of a folder's entries
    (``(name, kind, inode)``, kind ``"d"`` a folder, ``"f"`` a regular file, ``"x"`` a file only its name
    matters of), for exactly the folder's stat, or None."""

    def listing(self, path: str, st: os.stat_result) -> list[tuple[str, str, int]] | None: ...

    def record_listing(self, path: str, st: os.stat_result, entries: list[tuple[str, str, int]]) -> None: ...


# The names of a folder's entries the walk asks about though it keeps no such entry (a ``.git`` may be a file).
_NOTED_NAMES = frozenset({".git", ".ignore", ".gitignore", "pyvenv.cfg"})


def iter_paths(paths: list[str], exclude: tuple[str, ...] = (), *, respect_gitignore: bool = True,
               on_skip: OnSkip | None = None, stats: WalkStats | None = None,
               listings: Listings | None = None) -> Iterator[str]:
    """The files to check under ``paths``, each once: once per file, not per name (a file and a symbolic link
    to it found by the walk are yielded once, under the file's name; of two hard links, the one met first).

    A named file is yielded as given, less a leading ``./`` (ignore files and ``exclude`` do not apply to it; reading it reports what is
    wrong). A directory is walked without recursion for regular ``*.py``/``*.pyi`` files (symbolic links to
    regular files included; links to directories not followed), skipping ``SKIP_DIRS``, virtualenvs, ``exclude``
    globs and, with ``respect_gitignore``, what ``.ignore`` files (always) and ``.gitignore`` files and
    ``.git/info/exclude`` and git's global excludes file (inside a git repository) ignore. Anything passed over for a reason a user would want
    to know (a FIFO, a device, a broken link, an unreadable folder) is reported through ``on_skip``.
    ``listings``: folders whose stat is unchanged are not listed again (only folders of plain files and folders
    are kept; one with a link or a special file in it is listed every time).
    """
    report = on_skip or (lambda path, reason, is_error: None)
    stats = stats if stats is not None else WalkStats()
    seen: set[str] = set()
    files: set[tuple[int, int]] = set()  # (st_dev, st_ino) of each file yielded
    global_excludes: list = []  # read once, at the first repository met
    links: list[tuple[str, tuple[int, int]]] = []
    for given in paths:
        if given == "-":
            yield given
            continue
        shown = display_path(given)
        try:
            st = os.stat(given)
        except OSError:
            st = None  # reading names the problem
        if st is None or not stat.S_ISDIR(st.st_mode):
            if shown not in seen and (st is None or (st.st_dev, st.st_ino) not in files):
                seen.add(shown)
                if st is not None:
                    files.add((st.st_dev, st.st_ino))
                yield shown
            continue
        for path, identity, is_link in _walk_dir(shown, exclude, respect_gitignore, report, stats, global_excludes,
                                                 listings):
            if is_link:
                links.append((path, identity))  # after every file: a link's target keeps its own name
            elif path not in seen:
                if identity in files:
                    stats.duplicates += 1
                    continue
                seen.add(path)
                files.add(identity)
                yield path
    for path, identity in links:
        if path in seen:
            continue
        if identity in files:
            stats.duplicates += 1
            continue
        seen.add(path)
        files.add(identity)
        yield path


@dataclass(frozen=True)
class _Frame:
    path: str  # as displayed
    parts: tuple[str, ...]  # from the ignore origin (the repository's top, else the walked directory)
    ignores: tuple[IgnoreFile, ...]  # .ignore files, outermost first
    gitignores: tuple[IgnoreFile, ...]  # .git/info/exclude and .gitignore files, outermost first
    in_repo: bool
    top: bool = False  # the directory the walk started from


class _Listed:
    """A folder entry as a kept listing has it (the part of ``os.DirEntry`` the walk asks about)."""

    __slots__ = ("name", "_kind", "_inode")

    def __init__(self, name: str, kind: str, inode: int):
        self.name, self._kind, self._inode = name, kind, inode

    def is_dir(self, follow_symlinks: bool = True) -> bool:
        return self._kind == "d"

    def is_file(self, follow_symlinks: bool = True) -> bool:
        return self._kind != "d"

    def is_symlink(self) -> bool:
        return False

    def inode(self) -> int:
        return self._inode


def _listing(path: str, st: os.stat_result, listings: Listings | None) -> list:
    """The folder's entries: from ``listings`` when it has them for this stat, else from the file system (and
    then kept in ``listings`` when they are only plain files and folders)."""
    if listings is not None:
        kept = listings.listing(path, st)
        if kept is not None:
            return [_Listed(*entry) for entry in kept]
    with os.scandir(path) as it:
        entries = list(it)
    if listings is not None:
        record: list[tuple[str, str, int]] | None = []
        for e in entries:
            name = e.name
            try:
                if e.is_symlink():
                    record = None
                    break
                if e.is_dir(follow_symlinks=False):
                    record.append((name, "d", 0))
                elif e.is_file(follow_symlinks=False):
                    if name.endswith(SUFFIXES):
                        record.append((name, "f", e.inode()))
                    elif name in _NOTED_NAMES:
                        record.append((name, "x", 0))
                else:
                    record = None  # a FIFO, a device, a socket: the walk says so each time
                    break
            except OSError:
                record = None
                break
        if record is not None:
            listings.record_listing(path, st, record)
    return entries


def _walk_dir(root: str, exclude: tuple[str, ...], respect_gitignore: bool, report: OnSkip, stats: WalkStats,
              global_excludes: list, listings: Listings | None = None) -> Iterator[tuple[str, tuple[int, int], bool]]:
    """(path, (st_dev, st_ino), is_link) of each file found (the identity of a link's target, for a link)."""
    # Depth-first with an explicit stack (a 1,000-deep tree must not hit the recursion limit); directory
    # symbolic links are not followed, and a directory reached twice (a bind-mount loop) is walked once.
    stack = [_root_frame(root, respect_gitignore, report, global_excludes)]
    visited: set[tuple[int, int]] = set()
    while stack:
        frame = stack.pop()
        try:
            st = os.stat(frame.path)
            listing = _listing(frame.path, st, listings)
        except OSError as exc:
            report(frame.path, f"cannot read directory: {exc.strerror or exc}", True)
            continue
        names = {e.name for e in listing}
        if not frame.top and "pyvenv.cfg" in names:
            continue  # a virtual environment (not counted as ignored)
        if (st.st_dev, st.st_ino) in visited:
            report(frame.path, "directory reached twice (a loop through a mount); skipped", False)
            continue
        visited.add((st.st_dev, st.st_ino))
        # Regular files that are not Python are dropped before anything is done with them (most of a package's
        # files: data, headers, libraries); the rest in name order, so that the walk's order is the same anywhere.
        entries = sorted((e for e in listing if e.name.endswith(SUFFIXES) or not _regular_entry(e)),
                         key=_entry_name)
        ignores, gitignores, in_repo = frame.ignores, frame.gitignores, frame.in_repo
        if respect_gitignore:
            if ".git" in names and not frame.top:
                # A nested repository: the outer repository's .gitignore files stop at its edge.
                gitignores, in_repo = _repo_root_ignores(frame.path, frame.parts, report, global_excludes), True
            if ".ignore" in names:
                ignores = ignores + _load_ignore(os.path.join(frame.path, ".ignore"), frame.parts, report)
            if in_repo and ".gitignore" in names:
                gitignores = gitignores + _load_ignore(os.path.join(frame.path, ".gitignore"), frame.parts, report)
        subdirs: list[_Frame] = []
        for entry in entries:
            name = entry.name
            path = _join(frame.path, name)
            parts = frame.parts + (name,)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_regular = not is_dir and entry.is_file(follow_symlinks=False)
                is_link = not (is_dir or is_regular) and entry.is_symlink()
            except OSError as exc:
                report(path, f"cannot stat: {exc.strerror or exc}", False)
                continue
            if is_dir:
                if name in SKIP_DIRS or name.endswith(".egg-info"):
                    continue
                if _excluded(path, name, exclude) or _ignored(parts, True, ignores, gitignores):
                    stats.ignored_dirs += 1
                    continue
                subdirs.append(_Frame(path, parts, ignores, gitignores, in_repo))
                continue
            if is_link:
                try:
                    target = os.stat(path)
                    mode = target.st_mode
                except OSError as exc:
                    if name.endswith(SUFFIXES) and not _skipped(path, name, parts, False, exclude, ignores, gitignores):
                        why = "a symbolic link loop" if exc.errno == errno.ELOOP else "a broken symbolic link"
                        report(path, f"{why}; skipped", False)
                    continue
                if stat.S_ISDIR(mode):
                    if not (name in SKIP_DIRS or _skipped(path, name, parts, False, exclude, ignores, gitignores)):
                        report(path, "a symbolic link to a directory; not followed", False)
                    continue
            if not name.endswith(SUFFIXES):
                continue
            if _skipped(path, name, parts, False, exclude, ignores, gitignores):
                stats.ignored_files += 1
                continue
            if is_regular:
                # (The entry's inode comes with the directory listing; a regular file is on its folder's device.)
                # (On an overlay file system without consistent inode numbers a link may then be checked twice.)
                yield path, (st.st_dev, entry.inode()), False
                continue
            if not is_link:
                try:
                    target = entry.stat(follow_symlinks=False)
                    mode = target.st_mode
                except OSError as exc:
                    report(path, f"cannot stat: {exc.strerror or exc}", False)
                    continue
            if stat.S_ISREG(mode):
                # A link to a regular file: checked (and fixed through to its target), once with its target.
                yield path, (target.st_dev, target.st_ino), is_link
            else:
                via = " (through a symbolic link)" if is_link else ""
                report(path, f"{_file_kind(mode)}{via}, not a regular file; skipped", False)
        stack.extend(reversed(subdirs))


def _entry_name(entry: os.DirEntry) -> str:
    return entry.name


def _regular_entry(entry: os.DirEntry) -> bool:
    """Whether the entry is known to be a regular file (not a link), from the listing alone where it can tell."""
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False  # the walk reports it


def _skipped(path, name, parts, is_dir, exclude, ignores, gitignores) -> bool:
    return _excluded(path, name, exclude) or _ignored(parts, is_dir, ignores, gitignores)


def _ignored(parts, is_dir, ignores, gitignores) -> bool:
    # .ignore files beat .gitignore files (as in ripgrep and ruff); within a kind the deepest file decides,
    # within a file the last matching line.
    for group in (ignores, gitignores):
        for ignore_file in reversed(group):
            verdict = ignore_file.decide(parts, is_dir)
            if verdict is not None:
                return verdict
    return False


def _excluded(path: str, name: str, patterns: tuple) -> bool:
    """Whether an ``exclude`` pattern matches: an ``engine.options.FilePattern`` (the settings' own, anchored where
    it was set: ruff's semantics) or a plain string (matched against the name and the walked path)."""
    if not patterns:
        return False
    norm = path.replace(os.sep, "/")
    return any(pat.matches(path) if not isinstance(pat, str) else
               (fnmatch.fnmatch(name, pat) or fnmatch.fnmatch(norm, pat) or fnmatch.fnmatch(norm, f"*/{pat}"))
               for pat in patterns)


def _load_ignore(path: str, base: tuple[str, ...], report: OnSkip) -> tuple[IgnoreFile, ...]:
    try:
        raw = _read_regular(path, MAX_IGNORE_FILE_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return ()
    except (OSError, SourceError) as exc:
        report(path, f"ignore file not read ({exc}); its patterns do not apply", False)
        return ()
    patterns, problems = parse_file(raw)
    for line, problem in problems:
        report(f"{path}:{line}", problem, False)
    return (IgnoreFile(base, patterns),) if patterns else ()


def _repo_root_ignores(folder: str, parts: tuple[str, ...], report: OnSkip, global_excludes: list) -> tuple[IgnoreFile, ...]:
    """The ignore files of a repository's top but its .gitignore: git's global excludes, then .git/info/exclude."""
    if not global_excludes:  # read once per walk; the list holds the patterns (or none)
        path = global_excludes_file()
        loaded = _load_ignore(path, (), report) if path else ()
        global_excludes.append(loaded[0].patterns if loaded else ())
    found = (IgnoreFile(parts, global_excludes[0]),) if global_excludes[0] else ()
    git = os.path.join(folder, ".git")
    if os.path.isdir(git):
        found += _load_ignore(os.path.join(git, "info", "exclude"), parts, report)
    return found


def _root_frame(root: str, respect_gitignore: bool, report: OnSkip, global_excludes: list) -> _Frame:
    """The walk's first folder, with the ignore files of the folders above it up to the repository's top."""
    if not respect_gitignore:
        return _Frame(root, (), (), (), False, True)
    real = os.path.realpath(root)
    chain = [real]
    here = real
    repo_top = None
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            repo_top = here
            break
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
        chain.append(here)
    if repo_top is None:
        return _Frame(root, (), (), (), False, True)
    if repo_top == real:
        # The walk itself reads .gitignore files from here; only .git/info/exclude comes first.
        return _Frame(root, (), (), _repo_root_ignores(real, (), report, global_excludes), True, True)
    chain.reverse()  # repository top first, the walked folder last
    ignores: tuple[IgnoreFile, ...] = ()
    gitignores = _repo_root_ignores(repo_top, (), report, global_excludes)
    parts: tuple[str, ...] = ()
    for i, folder in enumerate(chain[:-1]):
        if i:
            parts = parts + (os.path.basename(folder),)
        ignores += _load_ignore(os.path.join(folder, ".ignore"), parts, report)
        gitignores += _load_ignore(os.path.join(folder, ".gitignore"), parts, report)
    root_parts = tuple(os.path.relpath(real, repo_top).split(os.sep))
    return _Frame(root, root_parts, ignores, gitignores, True, True)


# ---------------------------------------------------------------------------------------------------- reading

def _read_regular(path: str, limit: int, stat_out: list | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes (else SourceError).

    ``stat_out``: the open file's ``fstat``, taken before its bytes are read, is appended to it (the result cache
    keys a file by it: a stat older than the bytes read, never newer)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise SourceError(f"{_file_kind(st.st_mode)}, not a regular file")
    # O_NONBLOCK: if a FIFO is swapped in after the stat, opening it does not wait for a writer.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SourceError(f"{_file_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise SourceError(_too_large(st.st_size, limit))
        if stat_out is not None:
            stat_out.append(st)
        raw = _read_fd(fd, limit + 1)
        if len(raw) > limit:  # grew after the fstat
            raise SourceError(_too_large(len(raw), limit))
        return raw
    finally:
        os.close(fd)


def _read_fd(fd: int, most: int) -> bytes:
    chunks = []
    while most > 0:
        chunk = os.read(fd, min(most, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        most -= len(chunk)
    return b"".join(chunks)


def read_bytes(path: str, limit: int | None = None) -> bytes:
    """The bytes of a regular file, at most ``limit`` (default ``MAX_BYTES``); SourceError/OSError otherwise.

    Never opens a FIFO or a device (the server's workspace scan should read through this, as the CLI does)."""
    return _read_regular(path, MAX_BYTES if limit is None else limit)


def _too_large(size: int, limit: int) -> str:
    if limit >= 1024 * 1024:
        return f"{size / 1e6:.1f} MB is larger than the {limit // (1024 * 1024)} MiB limit"
    return f"{size} bytes is larger than the {limit}-byte limit"


def decode(raw: bytes, label: str) -> tuple[str, str]:
    """Decode Python source as Python does (BOM, PEP 263 coding cookie, else UTF-8)."""
    if b"\x00" in raw:
        raise SourceError(f"{label}: binary file (contains NUL bytes); skipped")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        raise SourceError(f"{label}: not valid UTF-8 and no usable coding declaration ({exc}); skipped") from None
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"{label}: not valid {'UTF-8' if encoding.startswith('utf-8') else encoding} ({exc.__class__.__name__}: {exc}); skipped") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, encoding


def read_source(path: str, stdin: io.BufferedReader | None = None, display: str | None = None) -> SourceFile:
    label = display or display_path(path)
    if path == "-":
        raw = (stdin or _stdin()).read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise SourceError(f"{label}: {_too_large(len(raw), MAX_BYTES)}; skipped")
        origin = None
    else:
        raw = _read_source_bytes(path, label)
        origin = path
    text, encoding = decode(raw, label)
    return SourceFile(label, text, encoding, raw, origin)


def read_source_if(path: str, needle: str | tuple[str, ...], display: str | None = None,
                   stat_out: list | None = None, raw_out: list | None = None) -> SourceFile | None:
    """``read_source(path)`` if the file's text contains ``needle`` (ASCII; or one of several), else None; the same SourceError
    as ``read_source`` for a file that cannot be read or decoded, whether or not it contains ``needle``.

    Most files of a repository lack the needle: for those that are plain UTF-8 (no NUL, no coding declaration in
    the first two lines) one C-speed decode proves they decode, and no text is kept. In UTF-8 an ASCII word is
    in the text exactly when its bytes are in the file; other encodings are decoded and searched as text.
    ``stat_out``: as for ``_read_regular``; ``raw_out``: the bytes read are appended to it.
    """
    label = display or display_path(path)
    raw = _read_source_bytes(path, label, stat_out)
    if raw_out is not None:
        raw_out.append(raw)
    needles = (needle,) if isinstance(needle, str) else needle
    if not any(n.encode("ascii") in raw for n in needles) and _plain_utf8(raw):
        return None
    text, encoding = decode(raw, label)
    if not any(n in text for n in needles):
        return None
    return SourceFile(label, text, encoding, raw, path)


def _plain_utf8(raw: bytes) -> bool:
    """Whether ``decode`` would read ``raw`` as UTF-8 without error (False: not known; ask ``decode``)."""
    if b"\x00" in raw:
        return False
    # A coding declaration can only be in the first two lines (as tokenize.detect_encoding reads them).
    first = raw.find(b"\n")
    second = raw.find(b"\n", first + 1) if first >= 0 else -1
    if b"coding" in (raw if second < 0 else raw[:second]):
        return False
    if raw.isascii():  # no copy made
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _read_source_bytes(path: str, label: str, stat_out: list | None = None) -> bytes:
    try:
        return _read_regular(path, MAX_BYTES, stat_out)
    except FileNotFoundError:
        raise SourceError(f"{label}: no such file or directory") from None
    except SourceError as exc:
        raise SourceError(f"{label}: {exc}; skipped") from None
    except OSError as exc:
        raise SourceError(f"{label}: cannot read: {exc.strerror or exc}") from None


def _stdin():
    import sys

    return sys.stdin.buffer


# ---------------------------------------------------------------------------------------------------- writing

def encode_like(source: SourceFile, new_text: str) -> bytes:
    """``new_text`` in the file's own encoding, keeping a BOM if it had one."""
    data = new_text.encode(source.encoding)
    if source.raw.startswith(b"\xef\xbb\xbf") and not data.startswith(b"\xef\xbb\xbf"):
        data = b"\xef\xbb\xbf" + data
    return data


def write_source(source: SourceFile, new_text: str) -> None:
    """Write ``new_text`` over the file ``source`` was read from, or raise SourceError and change nothing.

    * A symbolic link is written through: the fix lands in the link's target (``os.path.realpath``).
    * The file is refused when it is not writable (read-only mode bits, or no permission).
    * The file's bytes are read again just before the switch; if they are not what was read at the start
      (an editor or another tool saved it meanwhile) the file is left alone (SourceChanged).
    * A file with one link is replaced atomically: the new bytes go to a fresh temporary file created
      exclusively in the same folder (``tempfile.mkstemp``: a random name, O_EXCL, no link followed), given the
      file's mode and (where permitted) owner and group, flushed to disk, then renamed over the file.
    * A file with several hard links (or in a folder we cannot create files in) is rewritten in place, as ruff and
      black do, so every link sees the fix; the bytes are still checked first.
    * Nothing is left behind on failure: the temporary file is removed.
    """
    if source.origin is None:
        raise SourceError(f"{source.path}: not a file; cannot write")
    data = encode_like(source, new_text)
    target = os.path.realpath(source.origin)
    try:
        st = os.stat(target)
    except OSError as exc:
        raise SourceError(f"{source.path}: cannot write: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise SourceError(f"{source.path}: {_file_kind(st.st_mode)}, not a regular file; not fixed")
    if not (st.st_mode & 0o222) or not os.access(target, os.W_OK):
        raise SourceError(f"{source.path}: read-only file; not fixed")
    if st.st_nlink > 1:
        _write_in_place(source, target, st, data)
        return
    folder = os.path.dirname(target) or "."
    try:
        import tempfile  # (only a run that writes pays for its import)

        # A short name: the target's own may already be near the 255-byte limit of a file name.
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)[:40]}.", suffix=".bprop-lsp.tmp")
    except PermissionError:
        _write_in_place(source, target, st, data)
        return
    except OSError as exc:
        raise SourceError(f"{source.path}: cannot create a temporary file in {folder}: {exc.strerror or exc}; not fixed") from None
    try:
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                _copy_owner_and_mode(fh.fileno(), tmp, st)
                os.fsync(fh.fileno())
            _check_unchanged(source, target)
            os.replace(tmp, target)
        except OSError as exc:
            raise SourceError(f"{source.path}: cannot write: {exc.strerror or exc}; not fixed") from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _copy_owner_and_mode(fd: int, path: str, st: os.stat_result) -> None:
    if hasattr(os, "fchown"):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except OSError:
            try:  # not root: the group may still be one of ours
                os.fchown(fd, -1, st.st_gid)
            except OSError:
                pass
    # After chown, which clears set-id bits. (No fchmod on Windows before Python 3.13.)
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(st.st_mode))
    else:  # pragma: no cover - Windows
        os.chmod(path, stat.S_IMODE(st.st_mode))


def _check_unchanged(source: SourceFile, target: str) -> None:
    try:
        now = _read_regular(target, MAX_BYTES)
    except (OSError, SourceError) as exc:
        raise SourceChanged(f"{source.path}: changed on disk during the run ({exc}); not fixed") from None
    if now != source.raw:
        raise SourceChanged(f"{source.path}: changed on disk during the run; not fixed (run again)")


def _write_in_place(source: SourceFile, target: str, before: os.stat_result, data: bytes) -> None:
    try:
        fd = os.open(target, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SourceError(f"{source.path}: cannot write: {exc.strerror or exc}; not fixed") from None
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(st.st_mode):
            raise SourceChanged(f"{source.path}: replaced on disk during the run; not fixed (run again)")
        if _read_fd(fd, MAX_BYTES + 1) != source.raw:
            raise SourceChanged(f"{source.path}: changed on disk during the run; not fixed (run again)")
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            view = memoryview(data)
            written = 0
            while written < len(data):
                written += os.write(fd, view[written:])
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except OSError as exc:
            raise SourceError(f"{source.path}: cannot write: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
