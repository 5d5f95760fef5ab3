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

from bprop_lsp.engine import DocumentSession, Settings, analyze

_spec = importlib.util.spec_from_file_location("model_corpus", Path(__file__).parent / "fixtures" / "model_corpus.py")
model_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model_corpus)

SEED = 20261203
WORD = re.compile(r"[A-Za-z_]\w*")

# Text typed over a word or at a point: names the caches are keyed on (classes, self attributes, transforms).
TOKENS = ("Cell0Attn", "Cell2Proj", "Cell3Norm", "Config6", "self.weight", "self.tanh", "Parameter(", "x", "dout",
          "out", "bprop", "construct", "nn.Cell", "object", "ops.GradOperation()(", "ms.grad(", "vjp(", "(", ")",
          ",", " ", "#", "=", "None", "requires_grad=False", "internal_params", "self.bprop")
LINES = ("        self.sub = Cell0Attn()", "        y = self.sub(x)", "    net = Cell2Proj()", "    net(x, x)",
         "    ops.GradOperation(get_all=True)(Cell3Norm())(x)", "        self.w = Parameter(Tensor(1.0), name='w')",
         "    def bprop(self, x, out, dout):", "        return (dout,)", "class Extra(Cell0Attn):", "    pass",
         "        self.bprop = self.construct", "Cell0Attn = nn.Dense", "")


def _edit(rnd: random.Random, text: str) -> str:
    lines = text.split("\n")
    kind = rnd.random()
    i = rnd.randrange(len(lines))
    line = lines[i]
    if kind < 0.45 and line.strip():  # type or delete within a line: the statement splice path
        col = rnd.randrange(len(line) + 1)
        if rnd.random() < 0.5:
            lines[i] = line[:col] + rnd.choice(TOKENS + ("a", "1", "_")) + line[col:]
        else:
            lines[i] = line[:col] + line[col + rnd.randint(1, 3):]
    elif kind < 0.7:  # replace a word (a class name, an attribute, a parameter)
        words = list(WORD.finditer(line))
        if not words:
            return text
        m = rnd.choice(words)
        lines[i] = line[:m.start()] + rnd.choice(TOKENS) + line[m.end():]
    elif kind < 0.8:
        lines.insert(i, rnd.choice(LINES))
    elif kind < 0.88:
        del lines[i]
    elif kind < 0.94:
        lines.insert(min(3, len(lines)), "")  # a newline near the top: every line below moves
    else:
        lines[i] = rnd.choice(LINES)
    return "\n".join(lines)


def _describe(findings) -> list:
    return [(f.code, f.span, f.message, f.severity, f.fix) for f in findings]


@pytest.mark.parametrize("size,edits", [(800, 30), (1200, 15)])
def test_incremental_findings_match_fresh_analysis_under_random_edits(size, edits):
    text = model_corpus.generate(size)
    rnd = random.Random(SEED + size)
    settings = Settings()
    with DocumentSession(f"model-{size}") as session:
        for step in range(edits + 1):
            if step:
                text = _edit(rnd, text)
            incremental = session.verify(session.analyse(text, settings))
            fresh = analyze(text, settings)
            assert _describe(incremental.findings) == _describe(fresh.findings), f"after edit {step}"
            assert incremental.findings == fresh.findings, f"after edit {step}"


def test_the_model_files_have_findings_to_compare():
    """The comparison above is only worth something if the generated files give findings."""
    findings = analyze(model_corpus.generate(800)).findings
    assert {f.code for f in findings}


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
