"""The "Disable BPxxx for this line" edit: add ``# noqa: BPxxx`` to the line, or extend the codes already there."""
from __future__ import annotations

import re

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.model import Span

CODES = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Za-z]+\d+(?:[\s,]+[A-Za-z]+\d+)*)", re.IGNORECASE)


def noqa_edit(line: str, line_no: int, code: str) -> tuple["Span", str] | None:
    """The insertion (code-point span on ``line_no``, text) that suppresses ``code`` on that line.

    None when no comment can go there (the line ends in a backslash continuation).
    """
    from ..engine.model import Position, Span

    m = None
    for m in CODES.finditer(line):
        pass
    if m is not None:
        end = m.end("codes")
        return Span(Position(line_no, end), Position(line_no, end)), f", {code}"
    if line.rstrip().endswith("\\"):
        return None
    end = Position(line_no, len(line))
    gap = "" if line[-1:] in (" ", "\t") else "  "
    return Span(end, end), f"{gap}# noqa: {code}"
