"""``Rule.position_free``: what a Cell-scoped rule finds does not depend on where the code stands — neither its
decisions nor its messages (a place to point at is a ``Related``). A document relies on it: a Cell whose statements
only moved (lines added above it) is read back with its drafts moved, not run again (engine/cell_runs.py).

For every example of every position-free rule: the same source with lines put above it gives the same findings,
every position moved by those lines (a message naming a line would differ), and a ``DocumentSession`` that saw the
example first gives the fresh findings of the moved text."""
from __future__ import annotations

from dataclasses import replace

import pytest

from bprop_lsp.checker import DocumentSession, analyze
from bprop_lsp.engine import Settings
from bprop_lsp.engine.model import Position, Span
from bprop_lsp.rules import ALL_RULES

# Comments in two languages and an emoji: lines whose UTF-16 and code-point lengths differ.
ABOVE = "# 模型定义 😀\n# another comment\n\n"
MOVED_BY = ABOVE.count("\n")

EXAMPLES = [
    pytest.param(example.code, id=f"{rule.code}-{kind}{i}")
    for rule in ALL_RULES if getattr(rule, "scope", "module") == "cell" and rule.position_free
    for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid))
    for i, example in enumerate(examples)
]


def _span(span: Span, n: int) -> Span:
    return Span(Position(span.start.line + n, span.start.column), Position(span.end.line + n, span.end.column))


def _moved(finding, n: int):
    fix = finding.fix
    if fix is not None:
        fix = replace(fix, edits=tuple(replace(e, span=_span(e.span, n)) for e in fix.edits),
                      repairs=None if fix.repairs is None else _span(fix.repairs, n))
    return replace(finding, span=_span(finding.span, n), fix=fix,
                   related=tuple(r if r.path is not None else replace(r, span=_span(r.span, n))
                                 for r in finding.related),
                   noqa_line=None if finding.noqa_line is None else finding.noqa_line + n)


def _findings(analysis):
    return sorted(analysis.findings, key=lambda f: (f.sort_key(), f.message))


@pytest.mark.parametrize("code", EXAMPLES)
def test_lines_put_above_move_the_findings_and_change_nothing_else(code):
    here = _findings(analyze(code))
    moved = _findings(analyze(ABOVE + code))
    assert moved == [_moved(f, MOVED_BY) for f in here]


@pytest.mark.parametrize("code", EXAMPLES)
def test_a_session_reads_moved_cells_back_as_a_fresh_analysis_finds_them(code):
    settings = Settings()
    with DocumentSession("moved") as session:
        session.analyse(code, settings)
        incremental = _findings(session.analyse(ABOVE + code, settings))
        back = _findings(session.analyse(code, settings))
    assert incremental == _findings(analyze(ABOVE + code))
    assert back == _findings(analyze(code))


def test_a_cell_with_findings_that_only_moved_is_not_run_again():
    """The drafts of a Cell with findings move with it (they were run again, before)."""
    rule = next(r for r in ALL_RULES if r.code == "BP001")
    code = rule.invalid[0].code
    settings = Settings()
    with DocumentSession("moved") as session:
        first = session.analyse(code, settings)
        assert any(f.code == "BP001" for f in first.findings)
        memo = session._doc.cell_memo
        assert memo.ran >= 1
        again = session.analyse(ABOVE + code, settings)
        assert (memo.ran, memo.moved) == (0, len(memo._entries))
    assert _findings(again) == [_moved(f, MOVED_BY) for f in _findings(first)]
