"""gitignore-style patterns for the directory walk: ``.gitignore``, ``.ignore`` and ``.git/info/exclude``.

Read the way git (and ruff, through the ``ignore`` crate) reads them: a pattern without a slash (other than a
trailing one) matches a name at any depth below its file's folder; one with a leading or inner slash is anchored
to that folder; a trailing ``/`` matches directories only; ``*``, ``?`` and ``[...]`` never match ``/``;
``**/``, ``/**/`` and ``/**`` span folders; ``!`` re-includes; a later line beats an earlier one, a deeper file
beats a shallower one. Not supported: POSIX classes such as ``[[:alpha:]]`` (they match literally).
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern
    negated: bool
    dir_only: bool
    text: str  # the line as written, for messages


@dataclass(frozen=True)
class IgnoreFile:
    """The patterns of one ignore file; ``base`` is its folder as path parts from the walk's origin."""

    base: tuple[str, ...]
    patterns: tuple[Pattern, ...]

    def decide(self, parts: tuple[str, ...], is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by ``!``) or None (no pattern of this file matches)."""
        rel = "/".join(parts[len(self.base):])
        for pattern in reversed(self.patterns):
            if pattern.dir_only and not is_dir:
                continue
            if pattern.regex.match(rel):
                return not pattern.negated
        return None


def parse_lines(text: str) -> tuple[Pattern, ...]:
    return tuple(p for p in (compile_pattern(line) for line in text.splitlines()) if p is not None)


def compile_pattern(line: str) -> Pattern | None:
    """One line of an ignore file; None for blank lines and comments."""
    original = line
    line = line.rstrip("\r")
    # Trailing spaces are dropped unless escaped with a backslash.
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
    if not line:
        return None
    anchored = "/" in line
    segments = line.lstrip("/").split("/") if anchored else ["**", line]
    if not any(segments):
        return None
    return Pattern(_translate(segments), negated, dir_only, original)


def _translate(segments: list[str]) -> re.Pattern:
    collapsed: list[str] = []
    for seg in segments:
        if seg == "**" and collapsed and collapsed[-1] == "**":
            continue
        collapsed.append(seg)
    out: list[str] = []
    last = len(collapsed) - 1
    need_slash = False
    for i, seg in enumerate(collapsed):
        if seg == "**":
            if i == 0 and i == last:
                out.append(".+")
            elif i == 0:
                out.append("(?:.+/)?")
                need_slash = False
            elif i == last:
                out.append("/.+")
            else:
                out.append("(?:/.+)?")
                need_slash = True
        else:
            if need_slash:
                out.append("/")
            out.append(_translate_segment(seg))
            need_slash = True
    return re.compile("^" + "".join(out) + "$", re.DOTALL)


def _translate_segment(seg: str) -> str:
    out: list[str] = []
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "\\" and i + 1 < n:
            out.append(re.escape(seg[i + 1]))
            i += 2
        elif c == "*":
            while i < n and seg[i] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = _class_end(seg, i)
            if end is None:
                out.append(re.escape(c))
                i += 1
            else:
                out.append(_translate_class(seg[i + 1:end]))
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _class_end(seg: str, start: int) -> int | None:
    j = start + 1
    if j < len(seg) and seg[j] in "!^":
        j += 1
    if j < len(seg) and seg[j] == "]":
        j += 1  # a "]" first in the class is literal
    while j < len(seg) and seg[j] != "]":
        j += 2 if seg[j] == "\\" else 1
    return j if j < len(seg) else None


def _translate_class(body: str) -> str:
    negated = body[:1] in ("!", "^")
    if negated:
        body = body[1:]
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(re.escape(body[i + 1]))
            i += 2
            continue
        out.append("-" if c == "-" and 0 < i < len(body) - 1 else re.escape(c))
        i += 1
    return "(?!/)[" + ("^" if negated else "") + "".join(out) + "]"
