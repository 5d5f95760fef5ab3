"""Background work gives way inside a job (issue 25, item 9; engine/preempt.py): a fix check stops midway once its
``stale()`` turns true (between its steps, before each rule, after each draft a rule yields), and the checks and
analyses after it are right; a workspace file's parse and rules ask ``pause()`` as they run. No timing here: the
times are scripts/bench_fix_checks.py's."""
from __future__ import annotations

from dataclasses import replace

import pytest

from bprop_lsp import checker
from bprop_lsp.engine import DocumentSession, Settings, analyze
from bprop_lsp.engine import preempt
from bprop_lsp.engine.parsing import ParsedDocument, parse_text
from bprop_lsp.lsp.workspace_scan import _analyse as scan_analyse

CELL = """class MulAdd{i}(nn.Cell):
    def construct(self, x, y):
        return 2 * x + y
    def bprop(self, x, y, out):
        return 2 * out, out
"""


def program(n: int) -> str:
    return "from mindspore import nn\n" + "".join(CELL.format(i=i) for i in range(n))


class CountingRule:
    """A built-in rule, counting the drafts the engine takes from it in fix re-checks (``want_fixes`` off)."""

    def __init__(self, rule):
        self.rule = rule
        self.rechecks_started = 0
        self.drafts_taken = 0

    def __getattr__(self, name):
        return getattr(self.rule, name)

    def check(self, ctx):
        recheck = not ctx.want_fixes
        self.rechecks_started += recheck
        for draft in self.rule.check(ctx):
            yield draft
            self.drafts_taken += recheck


def _session():
    rules = [CountingRule(r) if r.code == "BP001" else r for r in checker.RULES]
    counting = next(r for r in rules if isinstance(r, CountingRule))
    return DocumentSession(rules=rules), counting


def _stale_after(polls: int):
    """A ``stale`` that turns true on its ``polls``-th call (and stays true), counting its calls."""
    calls = []

    def stale() -> bool:
        calls.append(None)
        return len(calls) >= polls

    stale.calls = calls
    return stale


def _fresh_verified(text: str) -> list:
    return checker.analyze(text, Settings()).findings


def test_a_fix_check_stops_inside_the_rules_when_stale_turns_true():
    """400 findings: one fix's re-check takes 399 drafts from BP001 when it runs to the end; a ``stale()`` that
    turns true after a few polls stops it within a draft or two of that, and None is returned."""
    text = program(400)
    session, counting = _session()
    findings = session.analyse(text).findings
    assert len(findings) == 400 and all(f.fix is not None for f in findings)
    whole = session.check_fixes(findings[:1], text, Settings())
    assert whole is not None and counting.drafts_taken >= 399
    counting.drafts_taken = counting.rechecks_started = 0
    stale = _stale_after(20)
    assert session.check_fixes(findings[:1], text, Settings(), stale=stale) is None
    # It was inside the rules when it stopped: a Cell-scoped rule is run once per Cell (engine/cell_runs.py), so
    # each start is one Cell's run, a few of the 400 before the stop.
    assert 1 <= counting.rechecks_started < 30
    assert 0 < counting.drafts_taken < 30, counting.drafts_taken
    assert len(stale.calls) == 20  # nothing asked (or done) after it said stop


@pytest.mark.parametrize("polls", [1, 2, 3, 5, 40, 150])
def test_checks_and_analyses_after_an_abandoned_check_are_right(polls):
    """Stopped at any point (before the fork, after it, after the error comparison, inside the rules) a check
    leaves nothing behind: the same checks run to the end give what a fresh check gives, and the document's
    next analysis (an edit) equals a fresh analysis."""
    text = program(40)
    # One fix that does not clear its finding (its check rejects it) among fixes that do.
    session, _ = _session()
    findings = session.analyse(text).findings
    broken = replace(findings[3], fix=replace(findings[3].fix, edits=()))
    findings = findings[:3] + [broken] + findings[4:]
    for check in (session.check_fixes, session.cleared_together):
        asked = _stale_after(10**9)
        check(findings, text, Settings(), stale=asked)  # how often a whole check asks
        assert check(findings, text, Settings(), stale=_stale_after(min(polls, len(asked.calls)))) is None
    checked = session.check_fixes(findings, text, Settings())
    assert [f.fix is not None for f in checked] == [i != 3 for i in range(len(findings))]
    assert session.cleared_together(findings, text, Settings()) == {id(f) for i, f in enumerate(findings) if i != 3}
    edited = text.replace("def bprop(self, x, y, out):\n        return 2 * out, out\n",
                          "def bprop(self, x, y, out, dout):\n        return 2 * dout, dout\n", 1)
    analysis = session.analyse(edited)
    verified = session.verify(analysis)
    assert [(f.code, f.span, f.message, f.fix) for f in verified.findings] == \
        [(f.code, f.span, f.message, f.fix) for f in _fresh_verified(edited)]


def test_stale_never_true_changes_nothing():
    text = program(12)
    session, _ = _session()
    findings = session.analyse(text).findings
    assert session.check_fixes(findings, text, Settings(), stale=lambda: False) == \
        session.check_fixes(findings, text, Settings())


def test_a_full_parse_asks_pause_as_it_goes_and_builds_the_same_tree():
    text = program(300)
    calls = []
    doc = ParsedDocument()
    doc.pause = lambda: calls.append(None)
    module = doc.parse(text)
    assert module.get_code() == parse_text(text).get_code() == text
    tokens = sum(1 for _ in __import__("parso").load_grammar()._tokenizer(doc.lines))
    assert len(calls) == tokens // preempt.PAUSE_TOKENS > 2


def test_the_workspace_scan_pauses_in_the_parse_and_the_rules_and_finds_the_same():
    text = program(200)
    calls = []
    analysis = scan_analyse(text, Settings(), lambda: calls.append(None))
    fresh = analyze(text, Settings(), rules=checker.RULES, verify_fixes=False, with_syntax_errors=False)
    assert [(f.code, f.span, f.message) for f in analysis.findings] == \
        [(f.code, f.span, f.message) for f in fresh.findings]
    assert all(f.fix is None for f in analysis.findings)
    # every rule once before it starts, once after each of the 200 BP001 drafts, and the parse's pauses
    assert len(calls) >= len(checker.RULES) + 200 + 2


def test_abandoned_is_not_taken_for_a_failing_rule():
    """A rule that raises loses its findings (Analysis.failures); a check stopped inside a rule is no failure."""
    assert not issubclass(preempt.Abandoned, Exception)
    text = program(8)
    session, _ = _session()
    findings = session.analyse(text).findings
    assert session.check_fixes(findings, text, Settings(), stale=_stale_after(4)) is None
    analysis = session.analyse(text + "\n")
    assert not analysis.failures
