"""engine.text.line_opcodes and lsp.edits.minimal_edits: the edits of a fix-all in time about linear in the
findings (issue 25, items 8 and 11). Shapes are asserted, not times: which matcher runs on how many lines, and
that the edits are the ones the old matcher gave."""
import difflib

import pytest
from hypothesis import given, settings, strategies as st

from bprop_lsp.checker import fix_all
from bprop_lsp.engine import text as text_module
from bprop_lsp.engine.model import Edit
from bprop_lsp.engine.text import apply_edits, line_opcodes
from bprop_lsp.lsp.edits import minimal_edits

BAD = """class MulAdd{i}(nn.Cell):
    def construct(self, x, y):
        return 2 * x + y
    def bprop(self, x, y, out):
        return 2 * out, out
"""


def program(n: int) -> str:
    return "from mindspore import nn\n" + "".join(BAD.format(i=i) for i in range(n))


def _old_minimal_edits(old: str, new: str):
    """What minimal_edits computed before: difflib over the changed middle (the reference on small inputs)."""
    from bprop_lsp.engine.model import Span
    from bprop_lsp.engine.text import LineIndex

    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    index = LineIndex(old)
    offsets = [0]
    for line in a:
        offsets.append(offsets[-1] + len(line))
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a[p:len(a) - s], b[p:len(b) - s],
                                                       autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        start, end = offsets[p + i1], offsets[p + i2]
        oc, nc = old[start:end], "".join(b[p + j1:p + j2])
        k = 0
        while k < min(len(oc), len(nc)) and oc[k] == nc[k]:
            k += 1
        m = 0
        while m < min(len(oc), len(nc)) - k and oc[-1 - m] == nc[-1 - m]:
            m += 1
        out.append((Span(index.position(start + k), index.position(end - m)), nc[k:len(nc) - m]))
    return out


def _check_opcodes(a: list, b: list, ops: list) -> None:
    """Opcodes that tile both sequences in order, with equal blocks equal, and that rebuild ``b``."""
    i = j = 0
    rebuilt = []
    for tag, i1, i2, j1, j2 in ops:
        assert (i1, j1) == (i, j)
        assert i1 <= i2 and j1 <= j2 and (i1 < i2 or j1 < j2)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        else:
            assert tag == {(True, True): "replace", (True, False): "delete", (False, True): "insert"}[
                (i1 < i2, j1 < j2)]
        rebuilt += b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))
    assert rebuilt == b


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("abcdefgh"), max_size=30), st.lists(st.sampled_from("abcdefgh"), max_size=30))
def test_opcodes_tile_and_rebuild(a, b):
    _check_opcodes(a, b, line_opcodes(a, b))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text("ab\n ", max_size=6), max_size=12), st.lists(st.text("ab\n ", max_size=6), max_size=12))
def test_minimal_edits_turn_old_into_new(a, b):
    old, new = "\n".join(a), "\n".join(b)
    edits = minimal_edits(old, new)
    assert apply_edits(old, [Edit(span, text) for span, text in edits]) == new


@pytest.mark.parametrize("n", [1, 3, 20])
def test_fix_all_edits_are_the_old_matchers(n):
    text = program(n)
    fixed, count = fix_all(text)
    assert count == n
    assert minimal_edits(text, fixed) == _old_minimal_edits(text, fixed)


def test_lines_changed_in_place_are_edited_per_line(monkeypatch):
    """A fix-all that keeps the line count: one edit per changed line, and difflib never runs."""
    def refuse(*args, **kwargs):
        raise AssertionError("difflib ran on a middle with as many lines in both")

    text = program(800)
    fixed = text.replace("out):", "out, dout):")  # what the fix-all of these findings writes
    assert fixed == fix_all(program(3))[0] + "".join(BAD.format(i=i) for i in range(3, 800)).replace(
        "out):", "out, dout):")
    monkeypatch.setattr(difflib, "SequenceMatcher", refuse)
    edits = minimal_edits(text, fixed)
    assert len(edits) == 800
    assert {text for _, text in edits} == {", dout"}
    assert all(span.start.line == span.end.line for span, _ in edits)


def test_lines_added_are_matched_in_small_gaps(monkeypatch):
    """Lines added all over a file: difflib runs only on the gaps between lines unique to both texts (patience
    diff's anchors), never on pairs of line lists over ``_MATCH_CELLS``."""
    sizes = []
    real = difflib.SequenceMatcher

    def recording(isjunk, a, b, **kwargs):
        sizes.append(len(a) * len(b))
        return real(isjunk, a, b, **kwargs)

    monkeypatch.setattr(difflib, "SequenceMatcher", recording)
    text = program(800)
    fixed = text.replace("        return 2 * out, out\n", "        # gradient of x, then of y\n        return 2 * dout, dout\n")
    edits = minimal_edits(text, fixed)
    assert apply_edits(text, [Edit(span, t) for span, t in edits]) == fixed
    assert len(edits) == 800
    assert sizes and max(sizes) <= text_module._MATCH_CELLS
    assert sum(sizes) <= 800 * 20


def test_no_anchor_and_large_gap_is_one_block(monkeypatch):
    """No line unique to both and too many lines for difflib: one replaced block (still exact after trimming)."""
    monkeypatch.setattr(text_module, "_MATCH_CELLS", 100)
    a = ["x\n"] * 50 + ["y\n"] * 50
    b = ["x\n"] * 49 + ["y\n"] * 52
    ops = line_opcodes(a, b)
    _check_opcodes(a, b, ops)
    old, new = "".join(a), "".join(b)
    edits = minimal_edits(old, new)
    assert apply_edits(old, [Edit(span, t) for span, t in edits]) == new
