"""A keystroke re-parses one statement of a class body; the call index reads the class's calls and ``self.``
assignments per simple statement, and a statement typed in takes the ones it shares with the statement it replaced
(the same nodes) instead of walking its whole class again. What changed must still be read: the findings follow
an edit of ``self.inner = Inner()`` or of the call ``self.inner(x, x)`` exactly as a fresh analysis does."""
from __future__ import annotations

import pytest

from bprop_lsp.checker import DocumentSession, analyze
from bprop_lsp.engine import Settings, callsites

CELLS = '''import mindspore.nn as nn


class Inner(nn.Cell):
    def construct(self, x, *rest):
        return x

    def bprop(self, x, y, z, out, dout):
        return (dout,)


class Other(nn.Cell):
    def construct(self, x, y=None):
        return x

    def bprop(self, x, out, dout):
        return (dout,)


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scale = 2
        self.inner = Inner()
        self.other = Other()

    def construct(self, x):
        y = self.other(x, x)
        return self.inner(x, x)
'''


def _described(analysis) -> list:
    return [(f.code, f.span, f.message, f.severity, f.fix) for f in analysis.findings]


@pytest.mark.parametrize("old,new", [
    ("self.inner = Inner()", "self.inner = Other()"),
    ("self.other = Other()", "self.other = Inner()"),
    ("return self.inner(x, x)", "return self.inner(x)"),
    ("y = self.other(x, x)", "y = self.other(x)"),
    ("self.scale = 2", "self.inner = 2"),
])
def test_findings_follow_an_edit_of_a_call_or_an_attribute_in_place(old, new):
    edited = CELLS.replace(old, new)
    assert _described(analyze(edited, Settings())) != _described(analyze(CELLS, Settings())), \
        "the edit must change the findings, or the test shows nothing"
    with DocumentSession("cells") as session:
        for text in (CELLS, edited, CELLS, edited):
            incremental, fresh = session.analyse(text, Settings()), analyze(text, Settings())
            assert _described(incremental) == _described(fresh)
            # what hover and inlay hints show of each bprop (its inputs follow the calls' counts)
            assert incremental.bprops == fresh.bprops


def test_a_keystroke_reads_only_the_simple_statement_it_changed(monkeypatch):
    read = []
    original_assignments, original_calls = callsites._self_assignments_in, callsites._calls_under

    def assignments_in(node):
        read.append(("self", node.get_code().strip()))
        return original_assignments(node)

    def calls_under(node, only_root=False):
        if node.type == "simple_stmt":
            read.append(("calls", node.get_code().strip()))
        return original_calls(node, only_root)

    monkeypatch.setattr(callsites, "_self_assignments_in", assignments_in)
    monkeypatch.setattr(callsites, "_calls_under", calls_under)
    with DocumentSession("cells") as session:
        session.analyse(CELLS, Settings())
        session.analyse(CELLS.replace("self.scale = 2", "self.scale = 3"), Settings())
        read.clear()
        session.analyse(CELLS.replace("self.scale = 2", "self.scale = 34"), Settings())
    assert ("self", "self.scale = 34") in read and ("calls", "self.scale = 34") in read
    assert {code for _, code in read} == {"self.scale = 34"}, read
