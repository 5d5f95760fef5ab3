"""Plain data the engine produces: findings, their ranges and their fixes (what a rule is: ``rule.py``).

No LSP types live here. Positions are 0-based lines and 0-based columns counted in
Unicode code points (Python ``str`` indices into the line), with lines split the
way both parso and LSP split them (``\\r\\n``, ``\\r`` or ``\\n``). The server converts
columns to the client's negotiated encoding; the CLI prints them 1-based.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Applicability(str, enum.Enum):
    """How safe a fix is, in ruff's words: safe fixes are applied by ``--fix`` and fix-all."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Position:
    line: int  # 0-based
    column: int  # 0-based, in code points


@dataclass(frozen=True, order=True)
class Span:
    start: Position
    end: Position

    @staticmethod
    def of(start_line: int, start_col: int, end_line: int, end_col: int) -> "Span":
        return Span(Position(start_line, start_col), Position(end_line, end_col))

    def contains(self, other: "Span") -> bool:
        return self.start <= other.start and other.end <= self.end


@dataclass(frozen=True)
class Edit:
    """Replace the text in ``span`` with ``new_text`` (an insertion has an empty span)."""

    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    applicability: Applicability = Applicability.SAFE
    # The code the fix rewrites as a whole (a def's parameter list), when its edits do not cover it: two fixes that
    # repair one such span are alternatives (`dout` appended by one rule, `out` inserted before the last name by
    # another), and fix-all applies only the first of them, even where their edits do not overlap.
    repairs: Span | None = None

    @property
    def is_safe(self) -> bool:
        return self.applicability is Applicability.SAFE


@dataclass(frozen=True)
class Related:
    """A second place that explains a finding (e.g. the ``construct`` a bprop must match); ``path``: the file it
    is in when that is another module of the workspace (None: the finding's own file)."""

    span: Span
    message: str
    path: str | None = None


@dataclass(frozen=True)
class Finding:
    code: str  # rule id, e.g. "BP001"
    name: str  # rule name, e.g. "bprop-missing-params"
    message: str
    severity: Severity
    span: Span
    url: str
    fix: Fix | None = None
    related: tuple[Related, ...] = ()
    # The line a ``# noqa`` comment must stand on to suppress this finding (the bprop ``def`` line).
    noqa_line: int | None = None

    def sort_key(self) -> tuple:
        return (self.span.start, self.code)
