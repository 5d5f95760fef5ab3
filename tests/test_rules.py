"""Tests generated from each rule's own VALID/INVALID examples (the same examples document the rules)."""
from __future__ import annotations

import pytest

from bprop_lsp.checker import analyze
from bprop_lsp.engine import Settings, apply_edits
from bprop_lsp.rules import ALL_RULES

VALID = [pytest.param(rule, ex, id=f"{rule.code}-valid-{i}") for rule in ALL_RULES for i, ex in enumerate(rule.valid)]
INVALID = [pytest.param(rule, ex, id=f"{rule.code}-invalid-{i}") for rule in ALL_RULES for i, ex in enumerate(rule.invalid)]


def test_every_rule_has_examples():
    for rule in ALL_RULES:
        assert rule.valid, f"{rule.code} has no VALID example"
        assert rule.invalid, f"{rule.code} has no INVALID example"
        assert rule.code.startswith("BP") and rule.name and rule.summary


def test_rule_codes_are_unique_and_ordered():
    codes = [r.code for r in ALL_RULES]
    assert codes == sorted(set(codes))


@pytest.mark.parametrize("rule,example", VALID)
def test_valid_example_has_no_finding(rule, example):
    findings = analyze(example.code).findings
    assert findings == [], [f"{f.code}: {f.message}" for f in findings]


@pytest.mark.parametrize("rule,example", INVALID)
def test_invalid_example_is_reported(rule, example):
    findings = analyze(example.code).findings
    own = [f for f in findings if f.code == rule.code]
    assert len(own) == 1, [f"{f.code}: {f.message}" for f in findings]
    others = {f.code for f in findings} - {rule.code} - set(example.also)
    assert not others, f"unexpected extra findings {others}"
    finding = own[0]
    if example.line is not None:
        assert finding.span.start.line + 1 == example.line, (finding.span, finding.message)
    # the rule's own page (bundled in the package until a website exists; see rules/base.py DOCS_BASE)
    assert finding.url == rule.url() and finding.url.endswith(f"/{rule.code}.md")
    if example.fixed is None:
        return
    assert finding.fix is not None, f"{rule.code} example expects a fix"
    fixed = apply_edits(example.code, finding.fix.edits)
    assert fixed == example.fixed
    assert not [f for f in analyze(fixed).findings if f.code == rule.code]


@pytest.mark.parametrize("rule,example", INVALID)
def test_invalid_example_disabled_by_ignore(rule, example):
    findings = analyze(example.code, Settings(ignore=(rule.code,))).findings
    assert rule.code not in {f.code for f in findings}


@pytest.mark.parametrize("rule,example", INVALID)
def test_noqa_on_the_reported_line_suppresses(rule, example):
    finding = next(f for f in analyze(example.code).findings if f.code == rule.code)
    lines = example.code.split("\n")
    lines[finding.noqa_line] += f"  # noqa: {rule.code}"
    assert rule.code not in {f.code for f in analyze("\n".join(lines)).findings}
    lines = example.code.split("\n")
    lines[finding.noqa_line] += "  # noqa: BP999"
    assert rule.code in {f.code for f in analyze("\n".join(lines)).findings}


def test_check_is_the_rule_interface_and_every_rule_defines_it():
    from bprop_lsp.rules.base import Rule

    assert "check" in vars(Rule)
    with pytest.raises(NotImplementedError):
        Rule().check(None)
    assert [type(rule).__name__ for rule in ALL_RULES if type(rule).check is Rule.check] == []
