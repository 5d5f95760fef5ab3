"""Finding the files to check, reading them as text and writing fixes back: shared by the CLI and the server."""
from __future__ import annotations

import fnmatch
import io
import os
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

SKIP_DIRS = {
    ".git", ".hg", ".svn", ".venv", "venv", "env", ".env", "node_modules", "build", "dist", "__pycache__",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "site-packages", ".hypothesis",
    ".ipynb_checkpoints",
}
MAX_BYTES = 10 * 1024 * 1024  # larger "sources" are generated or data: skip them with a message


class SourceError(Exception):
    """A file that cannot be checked; the message names the reason."""


@dataclass
class SourceFile:
    path: str  # as shown to the user ("-" for stdin)
    text: str
    encoding: str
    raw: bytes


def iter_paths(paths: list[str], exclude: tuple[str, ...] = ()) -> Iterator[str]:
    """Files under ``paths``: named files as given; directories walked for ``*.py`` (and ``*.pyi``)."""
    for given in paths:
        if given == "-":
            yield given
            continue
        p = Path(given)
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(
                    d for d in dirs
                    if d not in SKIP_DIRS and not d.endswith(".egg-info") and not _excluded(os.path.join(root, d), d, exclude)
                    and not os.path.exists(os.path.join(root, d, "pyvenv.cfg"))
                )
                for name in sorted(files):
                    if name.endswith((".py", ".pyi")):
                        full = os.path.join(root, name)
                        if not _excluded(full, name, exclude):
                            yield full
        else:
            yield given  # existence is checked when read, so the error names the file


def _excluded(path: str, name: str, patterns: tuple[str, ...]) -> bool:
    norm = path.replace(os.sep, "/")
    return any(fnmatch.fnmatch(name, pat) or fnmatch.fnmatch(norm, pat) or fnmatch.fnmatch(norm, f"*/{pat}") for pat in patterns)


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
    label = display or path
    if path == "-":
        raw = (stdin or _stdin()).read()
    else:
        try:
            size = os.path.getsize(path)
        except FileNotFoundError:
            raise SourceError(f"{label}: no such file or directory") from None
        except OSError as exc:
            raise SourceError(f"{label}: cannot read: {exc.strerror or exc}") from None
        if size > MAX_BYTES:
            raise SourceError(f"{label}: {size / 1e6:.1f} MB is larger than the {MAX_BYTES // (1024 * 1024)} MiB limit; skipped")
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except IsADirectoryError:
            raise SourceError(f"{label}: is a directory") from None
        except OSError as exc:
            raise SourceError(f"{label}: cannot read: {exc.strerror or exc}") from None
    text, encoding = decode(raw, label)
    return SourceFile(label, text, encoding, raw)


def _stdin():
    import sys

    return sys.stdin.buffer


def write_source(source: SourceFile, new_text: str) -> None:
    """Write ``new_text`` back in the file's own encoding (keeping a BOM if it had one)."""
    data = new_text.encode(source.encoding)
    if source.raw.startswith(b"\xef\xbb\xbf") and not data.startswith(b"\xef\xbb\xbf"):
        data = b"\xef\xbb\xbf" + data
    tmp = source.path + ".bprop-lsp.tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    try:
        mode = os.stat(source.path).st_mode
        os.chmod(tmp, mode & 0o7777)
    except OSError:
        pass
    os.replace(tmp, source.path)
