"""What a rule is: declarative metadata, inline VALID/INVALID examples, and a ``check`` generator.

Each rule lives in its own module (``bp001_missing_params.py`` …) and is registered in
``bprop_lsp.rules.ALL_RULES``. The examples generate the unit tests (tests/test_rules.py) and the
rule documentation (``bprop-lsp rule BP001``, docs/rules.md), so they cannot drift apart.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterator

from ..engine.model import Fix, Related, Span

if TYPE_CHECKING:
    from ..engine.context import Context

DOCS_BASE = "https://github.com/bprop-lsp/bprop-lsp/blob/main/docs/rules.md"

GRAPH = "graph"
PYNATIVE = "pynative"
BOTH = frozenset({GRAPH, PYNATIVE})
NEVER = frozenset()


@dataclass(frozen=True)
class Valid:
    code: str
    note: str = ""


@dataclass(frozen=True)
class Invalid:
    code: str
    # The text after applying the finding's fix (None: the rule offers no fix for this example).
    fixed: str | None = None
    note: str = ""
    # Rule codes this example may also raise besides the rule's own (e.g. a warning of a sibling rule).
    also: tuple[str, ...] = ()
    # 1-based line where the finding must start (None: not asserted).
    line: int | None = None


def example(text: str) -> str:
    """An example program written as an indented triple-quoted string in the rule module."""
    return textwrap.dedent(text).lstrip("\n")


@dataclass
class Draft:
    """A finding as a rule reports it; the engine adds severity, URL, noqa handling and fix checking."""

    span: Span
    message: str
    # The modes in which MindSpore raises: BOTH, {GRAPH}, {PYNATIVE}, or NEVER (silently wrong/ignored).
    fails_in: frozenset = BOTH
    fix: Fix | None = None
    related: tuple[Related, ...] = ()
    noqa_line: int | None = None
    # Cell/op the finding belongs to, for a mode inferred per class (e.g. @jit on its caller).
    subject: object = None


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    # What MindSpore 2.10 says, for the docs.
    mindspore_says: ClassVar[str] = ""
    fix_title: ClassVar[str | None] = None
    # Whether the fix is applied by --fix / fix-all (safe) or only offered one at a time (unsafe).
    fix_safe: ClassVar[bool] = True
    valid: ClassVar[tuple[Valid, ...]] = ()
    invalid: ClassVar[tuple[Invalid, ...]] = ()

    @classmethod
    def url(cls) -> str:
        return f"{DOCS_BASE}#{cls.code.lower()}-{cls.name}"

    def check(self, ctx: "Context") -> Iterator[Draft]:  # pragma: no cover - interface
        raise NotImplementedError
