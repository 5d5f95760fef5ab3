"""Keystrokes in realistic model files: the server's incremental analysis (one DocumentSession, facts kept per
top-level statement between versions) must give exactly the findings of a fresh analysis of the same text —
codes, spans, messages, severities and checked fixes — after every edit of a random sequence.

The files come from the perf corpus generator (tests/fixtures/model_corpus.py, a copy of the benchmark's
``gen_corpus.py``): Cells with ``__init__``/``construct``/``bprop``, config dataclasses and helpers. The edits
lean towards what the per-statement caches must notice: typing inside one statement (the parser splices it in,
every other statement keeps its facts), renamed classes and attributes, new calls of a Cell, ``Parameter``s,
lines inserted or deleted (the whole tree is re-linked).
"""
from __future__ import annotations

import importlib.util
import random
import re
from pathlib import Path

import pytest

from bprop_lsp.checker import DocumentSession, analyze
from bprop_lsp.engine import Settings


_spec = importlib.util.spec_from_file_location("model_corpus", Path(__file__).parent / "fixtures" / "model_corpus.py")
model_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model_corpus)

SEED = 20261203
WORD = re.compile(r"[A-Za-z_]\w*")

# Text typed over a word or at a point: names the caches are keyed on (classes, self attributes, transforms).
TOKENS = ("self.weight", "self.tanh", "Parameter(", "x", "dout", "out", "bprop", "construct", "nn.Cell", "object",
          "ops.GradOperation()(", "ms.grad(", "vjp(", "(", ")", ",", " ", "#", "=", "None", "requires_grad=False",
          "internal_params", "self.bprop", "{cls}")
# Whole lines put in place of a line of the same indentation: the line count stays, so the parser splices the one
# statement and every other keeps its cached facts. ``{cls}`` is a class of the file.
BODY_LINES = ("self.weight = Parameter(Tensor(1.0), name='w')", "self.weight = 1.0", "self.bprop = self.construct",
              "self.sub = {cls}()", "y = self.weight * dout", "return self.sub(x)", "w = self.weight",
              "self.internal_params = [self.weight]", "return (dout * self.weight,)", "return dout", "return (dout,)",
              "return self.sub(x, x)", "self.weight = Parameter(Tensor(1.0), requires_grad=False)")
MEMBER_LINES = ("def bprop(self, x, out, dout):", "bprop = None", "def construct(self, x, y=None):",
                "def construct(self, *inputs):", "def bprop(self, *args):")
MODULE_LINES = ("net = {cls}()", "print(ops.GradOperation(get_all=True)({cls}())(x))", "out = {cls}()(x, x)",
                "{cls} = nn.Dense", "x = Tensor(1.0)", "print(ops.GradOperation(get_all=True)(net)(x, x))",
                "class {cls}(nn.Cell):", "class {cls}(Cell0Attn):")
LINES = ("        self.sub = {cls}()", "    def bprop(self, x, out, dout):", "        return (dout,)", "net = {cls}()")
CLASS = re.compile(r"^class (\w+)", re.M)


# Appended to each generated file: Cells whose findings rest on facts read from other statements (calls with a
# defaulted input left out, ``*inputs``, a child cell, a Parameter, a number as a gradient). Half of the edits
# land in these lines.
TAIL = """

class Tail0(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Tail1()
        self.weight = Parameter(Tensor(1.0), name='w')

    def construct(self, x, mask=None):
        return self.inner(x, x) * self.weight

    def bprop(self, x, mask, out, dout):
        return dout * 3, ops.zeros_like(x)


class Tail1(nn.Cell):
    def construct(self, x, *rest):
        return x

    def bprop(self, x, y, out, dout):
        return (dout, 1.0)


x = Tensor(np.ones(2, np.float32))
net = Tail0()
print(ops.GradOperation(get_all=True)(net)(x))
print(ops.GradOperation(get_all=True)(Tail1())(x, 2))
"""
TAIL_LINES = TAIL.count("\n")


def _edit(rnd: random.Random, text: str) -> str:
    lines = text.split("\n")
    classes = CLASS.findall(text) or ["Net"]

    def fill(template: str) -> str:
        return template.replace("{cls}", rnd.choice(classes))

    kind = rnd.random()
    i = rnd.randrange(len(lines)) if rnd.random() < 0.5 else max(0, len(lines) - 1 - rnd.randrange(TAIL_LINES))
    line = lines[i]
    indent = line[:len(line) - len(line.lstrip())]
    if kind < 0.3 and line.strip():  # type or delete within a line
        col = rnd.randrange(len(line) + 1)
        if rnd.random() < 0.5:
            lines[i] = line[:col] + fill(rnd.choice(TOKENS + ("a", "1", "_"))) + line[col:]
        else:
            lines[i] = line[:col] + line[col + rnd.randint(1, 3):]
    elif kind < 0.45:  # replace a word (a class name, an attribute, a parameter)
        words = list(WORD.finditer(line))
        if not words:
            return text
        m = rnd.choice(words)
        lines[i] = line[:m.start()] + fill(rnd.choice(TOKENS)) + line[m.end():]
    elif kind < 0.85 and line.strip():  # another statement of the same indentation in place of this line
        pool = MODULE_LINES if not indent else MEMBER_LINES if len(indent) == 4 else BODY_LINES
        lines[i] = indent + fill(rnd.choice(pool))
    elif kind < 0.9:
        lines.insert(i, fill(rnd.choice(LINES)))
    elif kind < 0.95:
        del lines[i]
    else:
        lines.insert(min(3, len(lines)), "")  # a newline near the top: every line below moves
    return "\n".join(lines)


def _describe(findings) -> list:
    return [(f.code, f.span, f.message, f.severity, f.fix) for f in findings]


@pytest.mark.parametrize("size,edits", [(800, 30), (1200, 15)])
def test_incremental_findings_match_fresh_analysis_under_random_edits(size, edits):
    text = model_corpus.generate(size) + TAIL
    rnd = random.Random(SEED + size)
    settings = Settings()
    reused = 0
    with DocumentSession(f"model-{size}") as session:
        for step in range(edits + 1):
            if step:
                text = _edit(rnd, text)
            incremental = session.verify(session.analyse(text, settings, with_skeletons=True))
            reused += session._doc.cell_memo.reused  # Cells whose rule results were read back (cell_runs.py)
            fresh = analyze(text, settings, with_skeletons=True)
            assert _describe(incremental.findings) == _describe(fresh.findings), f"after edit {step}"
            assert incremental.findings == fresh.findings, f"after edit {step}"
            # Hover, inlay hints and "Add a custom bprop" read positions too (kept per statement).
            assert incremental.bprops == fresh.bprops, f"after edit {step}"
            assert incremental.skeletons == fresh.skeletons, f"after edit {step}"
    assert reused > 0, "the comparison must cover Cells whose rule results the memo read back"


def test_lines_inserted_above_keep_facts_and_move_every_position():
    """A line inserted or removed inside one statement re-parses that statement and moves the leaves below; the
    facts of the statements below are kept, except those that hold positions: findings, hover and hints and the
    skeletons must be those of a fresh analysis after each such edit."""
    text = model_corpus.generate(600) + TAIL
    rnd = random.Random(SEED)
    settings = Settings()
    with DocumentSession("model-lines") as session:
        session.analyse(text, settings, with_skeletons=True)
        for step in range(12):
            lines = text.split("\n")
            at = rnd.randrange(1, len(lines) // 3)
            if step % 3 == 2:
                del lines[at]
            else:
                lines.insert(at, "" if step % 2 else "# 注释 😀 " + str(step))
            text = "\n".join(lines)
            incremental = session.analyse(text, settings, with_skeletons=True)
            fresh = analyze(text, settings, verify_fixes=False, with_skeletons=True)
            assert _describe(incremental.findings) == _describe(fresh.findings), f"after edit {step}"
            assert incremental.bprops == fresh.bprops, f"after edit {step}"
            assert incremental.skeletons == fresh.skeletons, f"after edit {step}"


def test_the_model_files_have_findings_to_compare():
    """The comparison above is only worth something if the generated files give findings."""
    codes = {f.code for f in analyze(model_corpus.generate(800) + TAIL).findings}
    assert {"BP001", "BP007", "BP024", "BP031"} <= codes


# A Cell whose findings depend on statements elsewhere in the file: its calls (how many inputs they pass) and
# the module-level alias of a call target. Each edit below touches one line of another statement, so the parser
# splices that statement alone and the Cell's own statement keeps its cached facts.
CALLS = """import numpy as np
from mindspore import nn, ops, Tensor


class M(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = M2()

    def construct(self, x, mask=None):
        return x * 3

    def bprop(self, x, mask, out, dout):
        return dout * 3, ops.zeros_like(x)


class M2(nn.Cell):
    def construct(self, x, mask=None):
        return x

    def bprop(self, x, mask, out, dout):
        return dout, ops.zeros_like(x)


x = Tensor(np.ones(2, np.float32))
net = M()
print(ops.GradOperation(get_all=True)(net)(x))
"""


@pytest.mark.parametrize("old,new", [
    ("(net)(x)", "(net)(x, x)"),  # a call in another statement now passes the defaulted input
    ("net = M()", "net = M2()"),  # the name called now holds another Cell
    ("(net)(x)", "(M2())(x)"),  # another Cell called directly
])
def test_findings_follow_an_edit_of_another_statement(old, new):
    assert old in CALLS
    edited = CALLS.replace(old, new)
    with DocumentSession("calls") as session:
        before = session.verify(session.analyse(CALLS, Settings()))
        after = session.verify(session.analyse(edited, Settings()))
        back = session.verify(session.analyse(CALLS, Settings()))
    assert before.findings == analyze(CALLS).findings
    assert after.findings == analyze(edited).findings
    assert back.findings == before.findings
    assert _describe(after.findings) != _describe(before.findings), "the edit must change what is found"
