"""``# noqa`` comments: which lines silence which codes, and each directive's codes for the review of unused ones."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .model import Span
from .program import Program


def noqa_lines(program: Program) -> dict[int, set[str]]:
    """0-based line -> codes named by a ``# noqa`` comment there (empty set: bare noqa, all codes)."""
    result: dict[int, set[str]] = {}
    for start, codes in program.noqa_matches():
        pos = program.index.position(start)
        # Only real comments count, not "# noqa" inside a string.
        position = (pos.line + 1, pos.column)
        leaf = program.module.get_leaf_for_position(position, include_prefixes=True)
        if leaf is None or leaf.start_pos <= position:
            continue  # inside a string or other token, not in the comment prefix before a token
        result[pos.line] = {c.upper() for c in re.split(r"[\s,]+", codes) if c} if codes else set()
    return result


@dataclass(frozen=True)
class NoqaCode:
    """One entry of a ``# noqa: ...`` list: as written, where, and where removing it (with its comma) starts."""

    code: str
    span: Span
    removal: Span


@dataclass(frozen=True)
class NoqaDirective:
    """A ``# noqa: CODES`` comment (what a rule with ``reviews_noqa`` is handed, with what it suppressed)."""

    line: int  # 0-based
    span: Span  # from the space before ``#`` to the end of the list (removing it removes the directive)
    codes: tuple[NoqaCode, ...]  # every entry (BP codes and other tools' alike)
    used: frozenset[str]  # the codes of findings it suppressed


_NOQA_LIST = re.compile(r"#\s*noqa\s*:\s*(?P<list>[^#\r\n]*)", re.IGNORECASE)


_NOQA_ENTRY = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def noqa_directives(program: Program, used: dict[int, set[str]]) -> list[NoqaDirective]:
    """The ``# noqa: ...`` comments with a code list (bare ``# noqa`` is not one), real comments only."""
    out = []
    text, index = program.text, program.index
    for start, codes in program.noqa_matches():
        if codes is None:
            continue
        m = _NOQA_LIST.match(text, start)
        if m is None:
            continue
        pos = index.position(start)
        leaf = program.module.get_leaf_for_position((pos.line + 1, pos.column), include_prefixes=True)
        if leaf is None or leaf.start_pos <= (pos.line + 1, pos.column):
            continue  # inside a string
        lst = m.group("list").rstrip()
        lst_start = m.start("list")
        entries = [(e.start() + lst_start, e.group()) for e in _NOQA_ENTRY.finditer(lst)]
        if not entries:
            continue
        found = []
        for i, (at, code) in enumerate(entries):
            # Removing an entry takes the separator before it (or, for the first, the one after it).
            if i > 0:
                prev_end = entries[i - 1][0] + len(entries[i - 1][1])
                removal = (prev_end, at + len(code))
            elif len(entries) > 1:
                removal = (at, entries[1][0])
            else:
                removal = (at, at + len(code))
            found.append(NoqaCode(code, Span(index.position(at), index.position(at + len(code))),
                                  Span(index.position(removal[0]), index.position(removal[1]))))
        begin = start
        while begin > 0 and text[begin - 1] in " \t":
            begin -= 1
        end = lst_start + len(lst)
        out.append(NoqaDirective(pos.line, Span(index.position(begin), index.position(end)), tuple(found),
                                 frozenset(used.get(pos.line, ()))))
    return out
