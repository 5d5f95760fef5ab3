"""A keystroke replaces one top-level statement in place: the new program patches the whole-file tables of the
last one (``program.StatementDelta``: the replaced statement's part swapped) instead of joining every statement's
again. The patched tables must be exactly a fresh join's — the same values, in the same order, at the same
offsets — after every edit of a random sequence, including edits that add or remove a name's only binding, a
class, a def or a line break inside the statement (then no delta is taken)."""
from __future__ import annotations

import importlib.util
import random
import re
from pathlib import Path

import pytest

from bprop_lsp.checker import DocumentSession
from bprop_lsp.engine import Settings, program as program_module
from bprop_lsp.engine.parsing import parse_text
from bprop_lsp.engine.program import Program

_spec = importlib.util.spec_from_file_location("model_corpus", Path(__file__).parent / "fixtures" / "model_corpus.py")
model_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model_corpus)

SEED = 20261204
WORD = re.compile(r"[A-Za-z_]\w*")
# Typed at a point or over a word: new names, names bound elsewhere, a def or class keyword, broken code.
TOKENS = ("x", "y0", "out", "dout", "helper", "weight", "Cell", "(", ")", ":", "=", " = 1", "def ", "class ",
          "self.", "#", "\"", "import os", "a", "_")
# Whole lines put in place of a line of the same indentation (the line count stays).
MODULE_LINES = ("FACTOR = 2", "def helper_new(a):", "class Fresh(nn.Cell):", "x = Tensor(1.0)", "import os",
                "y0 = helper(1)", "Cell0 = nn.Dense")
BODY_LINES = ("y0 = x * 2", "self.weight = 1.0", "def bprop(self, x, out, dout):", "fresh_name = 3", "pass",
              "return dout", "z = y0 = x")

# Appended: module-level names bound once and several times, read by Cells.
TAIL = """

FACTOR = 3
FACTOR_TWICE = 1
FACTOR_TWICE = 2


def helper(a):
    y0 = a * FACTOR
    return y0


class Tail(nn.Cell):
    def construct(self, x):
        y0 = helper(x)
        return y0

    def bprop(self, x, out, dout):
        return (dout * FACTOR,)
"""


def _edit(rnd: random.Random, text: str) -> str:
    lines = text.split("\n")
    i = rnd.randrange(len(lines)) if rnd.random() < 0.6 else len(lines) - 1 - rnd.randrange(TAIL.count("\n"))
    line = lines[i]
    indent = line[:len(line) - len(line.lstrip())]
    kind = rnd.random()
    if kind < 0.45:
        col = rnd.randrange(len(line) + 1)
        if rnd.random() < 0.6:
            lines[i] = line[:col] + rnd.choice(TOKENS) + line[col:]
        else:
            lines[i] = line[:col] + line[col + rnd.randint(1, 3):]
    elif kind < 0.65:
        words = list(WORD.finditer(line))
        if words:
            m = rnd.choice(words)
            lines[i] = line[:m.start()] + rnd.choice(TOKENS) + line[m.end():]
    elif kind < 0.95 and line.strip():
        lines[i] = indent + rnd.choice(MODULE_LINES if not indent else BODY_LINES)
    else:
        lines.insert(i, "")  # every line below moves: no delta
    return "\n".join(lines)


def _node(node) -> tuple:
    return node.type, node.start_pos, node.get_code(include_prefix=False)


def _values(value) -> object:
    if isinstance(value, program_module.Function):
        return "def", value.name, _node(value.node)
    if isinstance(value, program_module.ClassInfo):
        return "class", value.name, _node(value.node)
    return _node(value)


def _table(name: str, value) -> object:
    """A table of a program in terms that compare across trees (nodes by type, position and code)."""
    if name in ("assignments", "functions", "classes_by_name"):
        return {key: [_values(v) for v in values] for key, values in value.items()}
    if name in ("import_nodes", "classes", "_funcdefs", "_assignment_stmts"):
        return [_values(v) for v in value]
    if name == "_layout":
        return None if value is None else [(facts["code"], offset) for facts, offset in value]
    if name == "_facts_owners":
        return sorted(child.start_pos for child in value.values())
    if name == "_entries":
        return [_node(child) for child, _scan, _facts in value]
    if name == "_calls_found":
        return [None if kept is None else ([(cls.name, _node(site.node) if hasattr(site.node, "start_pos") else None,
                                              len(site.positional)) for cls, site in kept[0]], kept[1])
                for kept in value]
    return value  # imports, _layout_words, _statement_ends, _line_layout


def test_patched_tables_equal_a_fresh_join_under_random_edits(monkeypatch):
    deltas = _spy_deltas(monkeypatch)
    text = model_corpus.generate(700) + TAIL
    rnd = random.Random(SEED)
    settings = Settings()
    compared = set()
    with DocumentSession("delta") as session:
        session.analyse(text, settings)
        for step in range(120):
            text = _edit(rnd, text)
            session.analyse(text, settings)
            patched = session._doc.last_tables.__dict__
            fresh = Program(parse_text(text), text)
            for name in program_module._HANDED_ON:
                if name not in patched:
                    continue
                compared.add(name)
                if name == "_substring_counts":  # (what this analysis asked for)
                    assert patched[name] == {needle: text.count(needle) for needle in patched[name]}, step
                    continue
                if name == "_calls_found":  # (the call index's, per statement)
                    from bprop_lsp.engine.callsites import build_call_index

                    build_call_index(fresh)
                expected = {id(f): child for child, _, f in fresh._entries} if name == "_facts_owners" \
                    else fresh.noqa_matches() if name == "_noqa_matches" else getattr(fresh, name)
                assert _table(name, patched[name]) == _table(name, expected), f"{name} after edit {step}"
    # The sequence must have exercised the patching, on every table it hands on.
    assert sum(delta is not None for delta in deltas) >= 25
    assert compared >= set(program_module._HANDED_ON) - {"_facts_owners", "_statement_ends", "_line_layout"}, compared


def _spy_deltas(monkeypatch) -> list:
    deltas = []
    taken = program_module._delta

    def spy(previous, program):
        found = taken(previous, program)
        deltas.append(found)
        return found

    monkeypatch.setattr(program_module, "_delta", spy)
    return deltas


def test_a_delta_is_taken_for_typing_in_one_statement_only(monkeypatch):
    deltas = _spy_deltas(monkeypatch)
    lines = (model_corpus.generate(300) + TAIL).split("\n")
    bprops = [i for i, line in enumerate(lines) if line.startswith("    def bprop(")]
    assert len(bprops) >= 2
    with DocumentSession("delta") as session:
        session.analyse("\n".join(lines), Settings())
        typed = list(lines)
        typed[bprops[0]] = typed[bprops[0]].replace("dout", "doutx", 1)
        session.analyse("\n".join(typed), Settings())
        assert deltas[-1] is not None and "doutx" in deltas[-1].new[2]["code"]
        assert deltas[-1].old[0].start_pos == deltas[-1].new[0].start_pos
        two = list(typed)
        two[bprops[1]] = two[bprops[1]].replace("dout", "doutx", 1)
        two[bprops[0]] = two[bprops[0]].replace("doutx", "dout", 1)
        session.analyse("\n".join(two), Settings())
        assert deltas[-1] is None  # two statements replaced
        moved = list(two)
        moved[bprops[0]] += "\n"  # a line break typed: every statement below moves
        session.analyse("\n".join(moved), Settings())
        assert deltas[-1] is None


# Needles the engine and the rules look for in the whole text (present and absent ones), and what a keystroke may
# type: one of them, a ``# noqa`` comment, a ``#`` at a line's end before a line starting ``noqa`` (a match running
# from one statement into the next).
NEEDLES = ("custom_vjp", ".register", "_grad", "get_bprop", "bprop_getters", "jit", "ms_function", "construct",
           "dout", "# noqa", "noqa", "type(")
TYPED = ("custom_vjp", ".register", "_grad", "jit", "noqa", "noqa: BP001", "type(", "dout", "get_bprop", "")
SUFFIXES = ("_grad", "jit", "custom_vjp", "dout", "x", "_register")


def test_text_searches_carried_from_the_last_program_equal_the_text_s():
    from bprop_lsp.engine.parsing import ParsedDocument
    from bprop_lsp.engine.program import NOQA

    rnd = random.Random(SEED + 1)
    lines = (model_corpus.generate(400) + TAIL).split("\n")
    doc = ParsedDocument()
    tables = None
    carried = 0
    for step in range(150):
        i = rnd.randrange(len(lines))
        line = lines[i]
        kind = rnd.random()
        words = list(WORD.finditer(line))
        if kind < 0.15 and line.strip():
            lines[i] = line[:len(line) - len(line.lstrip())] + "noqa = 1"
        elif kind < 0.55:
            lines[i] = line + "  # " + rnd.choice(TYPED)  # a comment
        elif kind < 0.7:
            lines[i] = line + "#"  # a bare ``#`` before the next line
        elif words:
            end = rnd.choice(words).end()  # a name made longer, or cut
            lines[i] = line[:end] + rnd.choice(SUFFIXES) + line[end:] if rnd.random() < 0.7 else \
                line[:end - 1] + line[end:]
        text = "\n".join(lines)
        program = Program(doc.parse(text), text, doc.statements, lines=doc.lines, previous=tables)
        for needle in NEEDLES:
            assert program.text_contains(needle) == (needle in text), f"{needle!r} after edit {step}"
            # (a document's program counts, so that the next one can count from it)
            assert program._substring_counts[needle] == text.count(needle), f"{needle!r} after edit {step}"
        expected = [(m.start(), m.group("codes")) for m in NOQA.finditer(text)]
        assert program.noqa_matches() == expected, f"after edit {step}"
        carried += program.delta is not None and "_substring_counts" in program.delta.previous.__dict__
        tables = program.tables()
    assert carried >= 40, carried


@pytest.mark.parametrize("before,after", [
    ("x = 1\nnoqa = 2\n", "x = 1#\nnoqa = 2\n"),  # ``#\nnoqa``: a match running into the next statement
    ("x = 1#\nnoqa = 2\n", "x = 1\nnoqa = 2\n"),
    ("x = 1\n\nnoqa = 2\n", "x = 1  #\n\nnoqa = 2\n"),
    ("y = 0\nx = 1\nnoqa = 2\n", "y = 0#\nx = 1\nnoqa = 2\n"),
    ("x = 1  # noqa\ny = 2\n", "x = 1  # noqa: BP001\ny = 2\n"),
    ("x = 1  # noqa\ny = 2\n", "x = 11  # noqa\ny = 2\n"),
])
def test_a_noqa_match_across_the_replaced_statement_s_edges(before, after):
    from bprop_lsp.engine.parsing import ParsedDocument
    from bprop_lsp.engine.program import NOQA

    head = "import os\n\n\ndef f():\n    return 1\n\n\n"
    doc = ParsedDocument()
    first = Program(doc.parse(head + before), head + before, doc.statements, lines=doc.lines)
    assert first._layout is not None  # (read by every analysis: what a keystroke's counts are carried along)
    first.noqa_matches()
    first.text_contains("noqa")
    text = head + after
    program = Program(doc.parse(text), text, doc.statements, lines=doc.lines, previous=first.tables())
    assert program.delta is not None and program._layout is not None
    assert program.noqa_matches() == [(m.start(), m.group("codes")) for m in NOQA.finditer(text)]
    assert program.text_contains("noqa")
