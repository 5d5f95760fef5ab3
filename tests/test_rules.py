"""Tests generated from each rule's own VALID/INVALID examples (the same examples document the rules).

Every INVALID example pins the findings its rule reports on it: ``at="LINE:COLUMN"`` (1-based, as
``bprop-lsp check`` prints it) and the exact ``message``."""
from __future__ import annotations

import re

import pytest

from bprop_lsp.checker import analyze
from bprop_lsp.cli.main import main
from bprop_lsp.engine import Settings, apply_edits
from bprop_lsp.rules import ALL_RULES
from bprop_lsp.rules.base import Expected

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


def test_every_invalid_example_pins_position_and_message():
    """A rule cannot skip them: each INVALID example of every rule names where its findings start and what they say."""
    missing = []
    for rule in ALL_RULES:
        for i, example in enumerate(rule.invalid):
            try:
                example.expected()
            except ValueError as exc:
                missing.append(f"{rule.code}-invalid-{i}: {exc}")
    assert not missing, "give each Invalid at=\"LINE:COLUMN\" and message=\"...\":\n" + "\n".join(missing)


def test_expected_rejects_what_is_not_a_position():
    from bprop_lsp.rules.base import Invalid

    assert Invalid("x", at="4:9", message="m").expected() == (Expected(4, 9, "m"),)
    assert Invalid("x", at=("1:1", "2:5"), message=("a", "b")).expected() == (Expected(1, 1, "a"), Expected(2, 5, "b"))
    for bad in (Invalid("x"), Invalid("x", at="4:9"), Invalid("x", message="m"), Invalid("x", at="4", message="m"),
                Invalid("x", at="0:1", message="m"), Invalid("x", at="4:9", message=("a", "b")),
                Invalid("x", at=(), message=())):
        with pytest.raises(ValueError):
            bad.expected()


def reported(findings, code) -> list[Expected]:
    """A rule's findings as the examples pin them: 1-based line and column (what the CLI prints), message."""
    own = sorted((f for f in findings if f.code == code), key=lambda f: (f.span.start, f.span.end))
    return [Expected(f.span.start.line + 1, f.span.start.column + 1, f.message) for f in own]


@pytest.mark.parametrize("rule,example", INVALID)
def test_invalid_example_is_reported(rule, example):
    findings = analyze(example.code).findings
    assert reported(findings, rule.code) == list(example.expected()), [f"{f.code}: {f.message}" for f in findings]
    others = {f.code for f in findings} - {rule.code} - set(example.also)
    assert not others, f"unexpected extra findings {others}"
    own = [f for f in findings if f.code == rule.code]
    # the rule's own page (bundled in the package until a website exists; see rules/base.py DOCS_BASE)
    assert all(f.url == rule.url() and f.url.endswith(f"/{rule.code}.md") for f in own)
    if example.fixed is None:
        return
    assert len(own) == 1, "an example with fixed= has one finding, whose fix it shows"
    finding = own[0]
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


@pytest.mark.parametrize("rule,example", INVALID)
def test_noqa_on_the_printed_line_suppresses(rule, example):
    """The line `bprop-lsp check` prints is where users write the noqa (BP012 prints the base's bprop, BP013 the
    wrapped def, while their statement is the `bprop = ...` line): it silences the finding and is not unused."""
    finding = next(f for f in analyze(example.code).findings if f.code == rule.code)
    lines = example.code.split("\n")
    lines[finding.span.start.line] += f"  # noqa: {rule.code}"
    findings = analyze("\n".join(lines)).findings
    assert [f for f in findings if f.code == rule.code and f.span == finding.span] == []
    assert not [f for f in findings if f.code == "BP900" and f.span.start.line == finding.span.start.line]


_CONCISE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+): (?P<code>BP\d{3})(?: \[[*-]\])? \w+: (?P<message>.*)$")


def test_pinned_positions_are_what_the_cli_prints(capsys, tmp_path):
    """at= and message= read the way `bprop-lsp check` prints a finding, so the docs and a user's terminal agree."""
    files = {}
    for rule in ALL_RULES:
        for i, example in enumerate(rule.invalid):
            path = tmp_path / f"{rule.code}_{i}.py"
            path.write_text(example.code, encoding="utf-8", newline="")
            files[path.name] = (rule.code, example)
    main(["check", "--isolated", "--no-cache", "--jobs", "1", "--quiet", "--output-format", "concise", str(tmp_path)])
    out = capsys.readouterr().out
    printed: dict[tuple[str, str], list[Expected]] = {}
    for row in out.splitlines():
        m = _CONCISE.match(row)
        assert m, row
        name = m["file"].replace("\\", "/").rsplit("/", 1)[-1]
        printed.setdefault((name, m["code"]), []).append(Expected(int(m["line"]), int(m["column"]), m["message"]))
    for name, (code, example) in files.items():
        assert sorted(printed.get((name, code), []), key=lambda e: (e.line, e.column)) == list(example.expected()), name


def test_bp007_points_at_the_call_and_follows_it_in_a_session():
    """BP007 is reported on the bprop's def, so the call is its related place (the CLI prints its line, an editor
    links it; the message names no line, tests/test_position_free.py), and an editor's session, which reuses
    per-Cell results, points at the right line after the call moved."""
    from bprop_lsp.checker import DocumentSession
    from bprop_lsp.rules import RULES_BY_CODE

    text = RULES_BY_CODE["BP007"].invalid[0].code
    moved = text.replace("\nprint(", "\n\n\nprint(")
    with DocumentSession("bp007") as session:
        for source, line in ((text, 10), (moved, 12)):
            (finding,) = [f for f in session.analyse(source).findings if f.code == "BP007"]
            assert "called with 1 input(s): GRAPH_MODE" in finding.message and "line" not in finding.message
            assert finding.related[0].message == "called with 1 input(s) here"
            assert finding.related[0].span.start.line + 1 == line


def test_check_is_the_rule_interface_and_every_rule_defines_it():
    from bprop_lsp.rules.base import Rule

    assert "check" in vars(Rule)
    with pytest.raises(NotImplementedError):
        Rule().check(None)
    assert [type(rule).__name__ for rule in ALL_RULES if type(rule).check is Rule.check] == []
