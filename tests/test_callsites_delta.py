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


# Module-level calls of the file's Cells through bindings, transforms and classes a keystroke renames in place.
CALLS_TAIL = '''

net = Inner()
other = Other()
print(ops.GradOperation(get_all=True)(net)(1, 2))
out = other(3, 4)
direct = Inner()(5, 6, 7)
'''
# Whole lines put in place of a line of the tail or of the Cells (the line count stays: one statement replaced).
CALL_LINES = ("net = Other()", "net = Inner()", "other = net", "other = Inner()", "spare = 1", "net = 2",
              "out = net(1)", "out = other(1, 2, 3)", "direct = Other()(5)", "Inner = Other",
              "class Inner(nn.Cell):", "class Other(nn.Cell):", "class Spare(nn.Cell):")


def _sites(program) -> list:
    """Every call site of the index, under its class's name (a class that is not one of this program's: a stale
    resolution)."""
    index = callsites.build_call_index(program)
    names = {id(cls): cls.name for cls in program.classes}
    return sorted((names.get(key, "<not a class of this program>"), site.node.get_code(include_prefix=False),
                   site.node.start_pos, len(site.positional))
                  for key, sites in index.by_class.items() for site in sites)


def test_the_call_index_carried_from_the_last_program_equals_a_fresh_one_under_random_edits():
    import random

    from bprop_lsp.engine.parsing import ParsedDocument, parse_text
    from bprop_lsp.engine.program import Program

    rnd = random.Random(4)
    lines = (CELLS.replace("import mindspore.nn as nn", "import mindspore.nn as nn\nfrom mindspore import ops")
             + CALLS_TAIL).split("\n")
    doc = ParsedDocument()
    tables = None
    carried = 0
    seen = set()
    # Edits run until 40 of them took the carried path (the file gathers syntax errors as they go, and a statement
    # after one is no longer re-parsed alone: fewer edits carry than at first), at most 900.
    for step in range(900):
        if carried >= 40 and step >= 300:
            break
        i = rnd.randrange(len(lines))
        line = lines[i]
        if line.strip() and not line.startswith(" "):
            lines[i] = rnd.choice(CALL_LINES)
        elif line.strip():
            col = rnd.randrange(len(line) + 1)
            lines[i] = line[:col] + rnd.choice(["x", "Inner", "(1)", ""]) + line[col + rnd.randint(0, 1):]
        text = "\n".join(lines)
        program = Program(doc.parse(text), text, doc.statements, lines=doc.lines, previous=tables)
        got = _sites(program)
        assert got == _sites(Program(parse_text(text), text)), f"after edit {step}"
        carried += program.delta is not None and "_calls_found" in program.delta.previous.__dict__
        seen.add(tuple(got))
        tables = program.tables()
    assert carried >= 40, carried
    assert len(seen) >= 10  # the edits do change what the calls resolve to


@pytest.mark.parametrize("old,new", [
    ("class Inner(nn.Cell):", "class Spare(nn.Cell):"),  # the class the calls name is gone
    ("class Other(nn.Cell):", "class Inner(nn.Cell):"),  # a second class Inner: the later one counts
    ("net = Inner()", "net = Other()"),  # the binding the transformed call resolves through
    ("spare = 1", "net = Other()"),  # a second binding: ``net`` names no one instance
    ("\nother = Other()", "\nother = net"),
])
def test_the_call_index_carried_from_the_last_program_follows_one_statement_replaced(old, new):
    from bprop_lsp.engine.parsing import ParsedDocument, parse_text
    from bprop_lsp.engine.program import Program

    base = CELLS.replace("import mindspore.nn as nn", "import mindspore.nn as nn\nfrom mindspore import ops") \
        + CALLS_TAIL + "spare = 1\n"
    edited = base.replace(old, new)
    assert _sites(Program(parse_text(edited), edited)) != _sites(Program(parse_text(base), base))
    doc = ParsedDocument()
    tables = None
    for text in (base, edited, base, edited):
        program = Program(doc.parse(text), text, doc.statements, lines=doc.lines, previous=tables)
        assert _sites(program) == _sites(Program(parse_text(text), text))
        if tables is not None:
            assert program.delta is not None  # one statement replaced in place
        tables = program.tables()
