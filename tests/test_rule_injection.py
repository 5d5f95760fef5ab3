"""The engine runs the rules it is handed (Fixit-style), no registry of its own: a custom rule set gets only its own
findings, one rule raising costs only that rule's findings, and a document's rule memo never hands one rule set's
drafts to another."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import pytest

from bprop_lsp import checker
from bprop_lsp.engine import DocumentSession, Settings, analyze, fix_all
from bprop_lsp.engine.analysis import analyze_document
from bprop_lsp.engine.model import Position, Span

BOTH = frozenset({"graph", "pynative"})

CELLS = "from mindspore import nn\n\n\n" + "".join(
    f"class Cell{i}(nn.Cell):\n"
    "    def construct(self, x, y):\n"
    "        return x * y\n\n"
    "    def bprop(self, x, y, out):\n"  # BP001 for the built-in rules: no dout
    "        return out, out\n\n\n"
    for i in range(3)
)


@dataclass(frozen=True)
class Draft:
    """What the engine reads of a rule's draft (rules/base.py's ``Draft`` has the same fields)."""

    span: Span
    message: str
    fails_in: frozenset = BOTH
    fix: object = None
    related: tuple = ()
    noqa_line: int | None = None
    subject: object = None


@dataclass
class FirstLineRule:
    """Reports the file's first four characters, once."""

    code: str = "XY001"
    name: str = "first-line"
    message: str = "the first line"

    def url(self) -> str:
        return f"https://example.org/{self.code}"

    def check(self, ctx):
        yield Draft(Span(Position(0, 0), Position(0, 4)), self.message)


@dataclass
class BpropNameRule:
    """A Cell-scoped rule: reports every Cell's class name with ``message`` (so two objects with one code differ)."""

    message: str
    code: str = "XY002"
    name: str = "every-cell"
    scope: str = "cell"
    runs: list = field(default_factory=list)

    def url(self) -> str:
        return f"https://example.org/{self.code}"

    def check(self, ctx):
        for site in ctx.cell_sites:
            self.runs.append(site.cls.name)
            yield Draft(ctx.program.span(site.cls.node.name), f"{self.message} {site.cls.name}")


class RaisingRule:
    code = "XY009"
    name = "raises"

    def url(self) -> str:
        return "https://example.org/XY009"

    def check(self, ctx):
        raise RuntimeError("a bug in a rule")
        yield  # pragma: no cover


def test_an_analysis_reports_only_the_rules_it_is_handed():
    built_in = checker.analyze(CELLS)
    assert {f.code for f in built_in.findings} == {"BP001"}  # (what the built-in rules say of the file)

    rule = FirstLineRule()
    analysis = analyze(CELLS, Settings(), rules=[rule])
    assert [(f.code, f.name, f.message, f.url, f.span) for f in analysis.findings] == [
        ("XY001", "first-line", "the first line", "https://example.org/XY001", Span(Position(0, 0), Position(0, 4)))]
    # Settings select and ignore the handed rules by their codes.
    assert analyze(CELLS, Settings(ignore=("XY",)), rules=[rule]).findings == []
    # No rules: nothing to report.
    assert analyze(CELLS, Settings(), rules=[]).findings == []
    with DocumentSession("custom", rules=[rule]) as session:
        assert [f.code for f in session.analyse(CELLS).findings] == ["XY001"]
    assert fix_all(CELLS, Settings(), rules=[rule]) == (CELLS, 0)


def test_the_rules_are_required():
    with pytest.raises(TypeError):
        analyze(CELLS, Settings())  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        DocumentSession("no rules")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        fix_all(CELLS, Settings())  # type: ignore[call-arg]


def test_a_handed_rule_that_raises_costs_only_its_own_findings(caplog):
    with caplog.at_level(logging.WARNING):
        analysis = analyze(CELLS, Settings(), rules=[RaisingRule(), FirstLineRule(), *checker.RULES])
    assert [f.code for f in analysis.findings if f.code.startswith("XY")] == ["XY001"]
    assert [f for f in analysis.findings if f.code.startswith("BP")] == checker.analyze(CELLS).findings
    # Told where the caller can name the file: the analysis's failures (the CLI prints them per file, a
    # DocumentSession logs them once with its document's name), not a nameless log line.
    assert any("XY009 failed" in message for message in analysis.failures)


def test_a_document_memo_never_hands_one_rule_sets_drafts_to_another(monkeypatch):
    first, second = BpropNameRule("first"), BpropNameRule("second")
    with DocumentSession("memo", rules=[first]) as session:
        session.analyse(CELLS)
        assert [f.message for f in session.analyse(CELLS).findings] == ["first Cell0", "first Cell1", "first Cell2"]
        assert session._doc.cell_memo.reused == 3  # the memo is in use: the second analysis read every Cell back
        # Another rule object with the same code, on the same document: its own drafts, none of the first's.
        analysis = analyze_document(session._doc, CELLS, Settings(), rules=[second], verify_fixes=False)
    assert [f.message for f in analysis.findings] == ["second Cell0", "second Cell1", "second Cell2"]
    assert second.runs == ["Cell0", "Cell1", "Cell2"]


def test_the_checker_runs_the_built_in_rules():
    assert checker.RULE_NAMES["BP001"] == "bprop-missing-params"
    assert list(checker.RULE_NAMES) == [rule.code for rule in checker.RULES]
    with checker.DocumentSession("built-in") as session:
        assert session.rules == tuple(checker.RULES)
        assert session.analyse(CELLS).findings == checker.analyze(CELLS, verify_fixes=False).findings
