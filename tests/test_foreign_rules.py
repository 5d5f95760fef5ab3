"""Rules written outside bprop-lsp against the documented rule API (docs/writing-rules.md), never shipped: a
``DocumentSession`` running them gives, after every edit, what a fresh ``analyze`` gives -- whatever they read
through ``ctx`` (a module constant, another class's members, a decorator, a comment, an import, a line number, a
list derived from the Cell sites), without the engine knowing anything of them. Issue 21's three reproductions are
the first three tests; then random edits over model files and the larger oracle cases.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from bprop_lsp.engine import DocumentSession, Settings, analyze
from bprop_lsp.rules import ALL_RULES
from bprop_lsp.rules.base import Draft, Rule

ROOT = Path(__file__).resolve().parent
ORACLE = ROOT / "fixtures" / "oracle" / "cases"


class StrictFlag(Rule):
    """Every Cell while the module constant ``STRICT_BPROP`` is True (reads the assignments table)."""

    code, name, summary, scope = "XT001", "strict-flag", "", "cell"

    def check(self, ctx):
        values = ctx.program.assignments.get("STRICT_BPROP")
        if values and len(values) == 1 and values[0].get_code().strip() == "True":
            for site in ctx.cell_sites:
                yield Draft(ctx.program.span(site.cls.node.name), "strict mode is on")


class EverySiteListed(Rule):
    """A list derived from ``ctx.cell_sites``, kept on the Context under a name of its own (a helper's memo)."""

    code, name, summary, scope = "XT002", "listed", "", "cell"

    def check(self, ctx):
        listed = ctx.__dict__.get("_xt_listed")
        if listed is None:
            listed = ctx.__dict__["_xt_listed"] = [site for site in ctx.cell_sites if site.bprop is not None]
        for site in listed:
            yield Draft(ctx.program.span(site.cls.node.name), f"{site.cls.name} has a bprop")


class LineInMessage(Rule):
    """A line number in the message, kept as a node fact (key without any positional prefix)."""

    code, name, summary, scope = "XT003", "line-in-message", "", "cell"

    def check(self, ctx):
        for site in ctx.cell_sites:
            line = ctx.program.node_fact(site.cls.node, "xt_line", lambda node: node.start_pos[0])
            yield Draft(ctx.program.span(site.cls.node.name), f"{site.cls.name} is defined on line {line}")


class OtherClassMembers(Rule):
    """Each Cell whose name a class ``Registry`` (elsewhere in the file) has as a member."""

    code, name, summary, scope = "XT004", "registered", "", "cell"

    def check(self, ctx):
        registry = ctx.program.class_named("Registry")
        if registry is None:
            return
        for site in ctx.cell_sites:
            if site.cls.name in registry.members:
                yield Draft(ctx.program.span(site.cls.node.name), f"{site.cls.name} is registered")


class DecoratorAndImport(Rule):
    """Each Cell whose bprop is decorated with a function of the file that is still defined, and every Cell while
    ``torch`` is imported."""

    code, name, summary, scope = "XT005", "decorated-or-torch", "", "cell"

    def check(self, ctx):
        p = ctx.program
        torch = "torch" in p.imports
        for site in ctx.cell_sites:
            fn = site.function
            names = [d.children[1].get_code().strip() for d in (fn.decorators if fn is not None else ())]
            if any(p.functions.get(n) for n in names):
                yield Draft(p.span(site.cls.node.name), f"{site.cls.name}'s bprop is decorated by the file")
            if torch:
                yield Draft(p.span(site.cls.node.name), "torch is imported")


class CommentAnywhere(Rule):
    """Every Cell while a ``# bprop: audit`` comment stands anywhere in the file (a word search)."""

    code, name, summary, scope = "XT006", "audit-comment", "", "cell"

    def check(self, ctx):
        if ctx.program.text_contains("# bprop: audit"):
            for site in ctx.cell_sites:
                yield Draft(ctx.program.span(site.cls.node.name), "audited")


FOREIGN = [StrictFlag(), EverySiteListed(), LineInMessage(), OtherClassMembers(), DecoratorAndImport(),
           CommentAnywhere()]
RULES = [*ALL_RULES, *FOREIGN]


def _found(analysis) -> list:
    return sorted((f.code, f.span.start.line, f.span.start.column, f.span.end.line, f.span.end.column, f.message)
                  for f in analysis.findings)


def _same(session: DocumentSession, text: str, settings: Settings = Settings()) -> list:
    got = _found(session.analyse(text, settings))
    assert got == _found(analyze(text, settings, rules=RULES, verify_fixes=False, with_syntax_errors=False))
    return got


def _cells(n: int) -> str:
    return "".join(f"class C{i}(nn.Cell):\n    def construct(self, x):\n        return x\n\n"
                   f"    def bprop(self, x, out, dout):\n        return (dout,)\n\n\n" for i in range(n))


HEAD = "import mindspore as ms\nfrom mindspore import nn\n\nSTRICT_BPROP = False\n\n\n"


def test_a_module_constant_flipped_reaches_every_cell():
    text = HEAD + _cells(20)
    with DocumentSession("strict", rules=RULES) as session:
        assert not [f for f in _same(session, text) if f[0] == "XT001"]
        flipped = text.replace("STRICT_BPROP = False", "STRICT_BPROP = True")
        assert len([f for f in _same(session, flipped) if f[0] == "XT001"]) == 20
        assert not [f for f in _same(session, text) if f[0] == "XT001"]


def test_a_list_derived_from_the_sites_is_the_same_in_the_first_analysis():
    text = HEAD + _cells(20)
    with DocumentSession("listed", rules=RULES) as session:
        assert len([f for f in _same(session, text) if f[0] == "XT002"]) == 20


def test_a_line_number_kept_as_a_fact_follows_a_line_inserted_above():
    text = HEAD + _cells(20)
    with DocumentSession("lines", rules=RULES) as session:
        _same(session, text)
        moved = "# a comment\n" + text
        lines = {f[5] for f in _same(session, moved) if f[0] == "XT003" and "C0 " in f[5]}
        assert lines == {"C0 is defined on line 8"}


def test_other_classes_decorators_imports_and_comments():
    text = (HEAD + "def deco(f):\n    return f\n\n\nclass Registry:\n    C1 = 1\n\n\n" + _cells(18)
            .replace("    def bprop(self, x, out, dout):\n        return (dout,)\n\n\nclass C3",
                     "    @deco\n    def bprop(self, x, out, dout):\n        return (dout,)\n\n\nclass C3"))
    versions = [text,
                text.replace("    C1 = 1\n", "    C1 = 1\n    C5 = 2\n"),  # another class's members
                text.replace("def deco(f):", "def deco2(f):"),  # the decorator's definition goes
                text.replace("STRICT_BPROP = False", "import torch\nSTRICT_BPROP = False"),  # an import
                text + "# bprop: audit\n",  # a comment far from every Cell
                text]
    with DocumentSession("others", rules=RULES) as session:
        seen = [_same(session, v) for v in versions]
    codes = [{f[0] for f in found} for found in seen]
    assert "XT004" in codes[0] and "XT005" in codes[0] and "XT006" not in codes[0]
    assert len([f for f in seen[1] if f[0] == "XT004"]) == 2
    assert not [f for f in seen[2] if f[5].endswith("decorated by the file")]
    assert [f for f in seen[3] if f[5] == "torch is imported"]
    assert "XT006" in codes[4] and seen[5] == seen[0]


def _model_files() -> list[Path]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("model_corpus", ROOT / "fixtures" / "model_corpus.py")
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    return corpus


_FOREIGN_LINES = ["STRICT_BPROP = True", "STRICT_BPROP = False", "import torch", "# bprop: audit",
                  "class Registry:\n    {name} = 1", "def deco(f):\n    return f", "", "# 注释 ✨"]


def _edit(rnd: random.Random, text: str, names: list[str]) -> str:
    lines = text.split("\n")
    i = rnd.randrange(len(lines) + 1)
    kind = rnd.random()
    if kind < 0.3:
        new = rnd.choice(_FOREIGN_LINES).format(name=rnd.choice(names or ["X"]))
        lines[i:i] = new.split("\n")
    elif kind < 0.5 and lines:
        del lines[min(i, len(lines) - 1)]
    elif kind < 0.65 and i < len(lines) and lines[i].lstrip().startswith("def bprop("):
        lines[i:i] = [lines[i][:len(lines[i]) - len(lines[i].lstrip())] + "@deco"]
    elif kind < 0.8 and i < len(lines):
        line = lines[i]
        k = rnd.randrange(len(line) + 1)
        lines[i] = line[:k] + rnd.choice(["x", " ", "(", ")", ",", "dout", ":"]) + line[k:]
    elif i < len(lines):
        j = rnd.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _sources() -> list[str]:
    import re

    texts = []
    corpus = _model_files()
    texts += [corpus.generate(1500, seed=1), corpus.generate(800, seed=2)]
    cases = sorted(ORACLE.glob("*.py"), key=lambda p: -p.stat().st_size)[:6]
    texts += [p.read_text(encoding="utf-8") for p in cases]
    return [t for t in texts if t and re.search(r"\bbprop\b", t)]


@pytest.mark.parametrize("seed", range(5))
def test_random_edits_session_equals_fresh_for_shipped_and_foreign_rules(seed):
    rnd = random.Random(seed)
    sources = _sources()
    text = sources[seed % len(sources)]
    import re

    names = sorted(set(re.findall(r"class (\w+)", text)))[:20]
    with DocumentSession(f"random-{seed}", rules=RULES) as session:
        _same(session, text)
        for _ in range(220):
            text = _edit(rnd, text, names)
            _same(session, text)


class AfterLine(Rule):
    """Every Cell whose class starts below line 30: a decision by where the code stands (``position_free`` left
    False, as a rule that is unsure leaves it)."""

    code, name, summary, scope = "XT007", "after-line", "", "cell"

    def check(self, ctx):
        for site in ctx.cell_sites:
            if site.cls.node.start_pos[0] > 30:
                yield Draft(ctx.program.span(site.cls.node.name), "far down")


def test_cells_that_only_moved_are_read_back_moved_when_every_rule_is_position_free():
    text = HEAD + _cells(12)
    with DocumentSession("moved", rules=ALL_RULES) as session:
        session.analyse(text)
        moved = "# one line more\n" + text
        assert _found(session.analyse(moved)) == _found(analyze(moved, rules=ALL_RULES, verify_fixes=False))
        memo = session._doc.cell_memo
        assert memo.moved == 12 and memo.ran == 0


def test_a_rule_deciding_by_place_has_its_cells_run_again_when_they_move():
    rules = [*ALL_RULES, AfterLine()]
    text = HEAD + _cells(12)
    with DocumentSession("after-line", rules=rules) as session:
        for version in (text, "\n" * 8 + text, "\n" * 20 + text, text):
            got = _found(session.analyse(version))
            assert got == _found(analyze(version, rules=rules, verify_fixes=False))
        assert session._doc.cell_memo.moved == 0


def test_a_rule_claiming_position_free_wrongly_would_be_caught(monkeypatch):
    """The check has teeth: the same rule saying ``position_free = True`` is read back moved, and goes stale."""
    monkeypatch.setattr(AfterLine, "position_free", True)
    rules = [*ALL_RULES, AfterLine()]
    text = HEAD + _cells(12)
    stale = False
    with DocumentSession("after-line", rules=rules) as session:
        for version in (text, "\n" * 20 + text):
            stale |= _found(session.analyse(version)) != _found(analyze(version, rules=rules, verify_fixes=False))
    assert stale
