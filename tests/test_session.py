"""DocumentSession: the engine's per-document API (analyse, verify, fix_all, close), skeletons and hints."""
from bprop_lsp.engine import DocumentSession, Settings, analyze
from bprop_lsp.engine.model import Edit, Span
from bprop_lsp.engine.text import apply_edits

SEED = """import mindspore.nn as nn
import mindspore.ops as ops


class MulAdd(nn.Cell):
    def construct(self, x, y):
        return 2 * x + y

    def bprop(self, x, y, out):
        return 2 * dout, dout


class Plain(nn.Cell):
    def construct(self, a, b):
        return a * b

x = 1
"""


def test_analyse_then_verify_offers_the_checked_fix():
    with DocumentSession("seed") as session:
        first = session.analyse(SEED, Settings())
        assert [f.code for f in first.findings] == ["BP001"]
        assert first.fixes_verified is False
        checked = session.verify(first)
        assert checked is not None and checked.fixes_verified
        assert checked.findings[0].fix is not None


def test_verify_stops_when_stale():
    with DocumentSession() as session:
        first = session.analyse(SEED, Settings())
        assert session.verify(first, stale=lambda: True) is None


def test_fix_all_gives_clean_text():
    with DocumentSession() as session:
        fixed, count = session.fix_all(SEED, Settings())
    assert count == 1
    assert "def bprop(self, x, y, out, dout):" in fixed
    assert analyze(fixed).findings == []


def test_parameter_and_return_hints():
    with DocumentSession() as session:
        analysis = session.analyse(SEED.replace("out):", "out, dout):"), Settings())
    (info,) = analysis.bprops
    labels = [h.label for h in info.hints]
    assert labels == ["← x", "← y", "← out", "← dout", "→ x", "→ y"]
    line = SEED.splitlines()[8].replace("out):", "out, dout):")
    assert line[:info.hints[0].position.column].endswith("self, x")


def test_skeleton_for_a_cell_without_bprop_checks_clean():
    with DocumentSession() as session:
        analysis = session.analyse(SEED, Settings())
    (sk,) = analysis.skeletons
    assert sk.owner == "Plain" and sk.inputs == ("a", "b")
    fixed = apply_edits(SEED, [Edit(Span(sk.insert_at, sk.insert_at), sk.text())])
    assert "    def bprop(self, a, b, out, dout):\n        return ops.zeros_like(a), ops.zeros_like(b)\n" in fixed
    assert [f.code for f in analyze(fixed).findings] == ["BP001"]  # only MulAdd's own mistake remains
    assert "${1:ops.zeros_like(a)}" in sk.text(snippet=True)
