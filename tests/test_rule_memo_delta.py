"""The rule memo under a keystroke that replaced one top-level statement in place (``program.StatementDelta``): the
whole file's part of the keys (``rule_memo._Basis``: statement index, env statements, class tops and names, the
names of the name tables, the imports, the values count) is patched from the last analysis's, and ``forget``
compares the replaced statement alone. After every edit of a random sequence on a generated model file, each
patched structure must be exactly what the join over every statement gives, and the patch must have been taken
(for edits that change a statement's kind, a class's name, the names bound and the imports, too)."""
from __future__ import annotations

import importlib.util
import random
import re
from pathlib import Path

import pytest

from bprop_lsp.checker import DocumentSession, analyze
from bprop_lsp.engine import Settings, rule_memo

_spec = importlib.util.spec_from_file_location("model_corpus", Path(__file__).parent / "fixtures" / "model_corpus.py")
model_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model_corpus)

SEED = 20261204
WORD = re.compile(r"[A-Za-z_]\w*")
# (Mostly names: a bracket typed opens a statement that swallows the ones after it, and no delta is taken.)
TOKENS = ("x", "y0", "out", "dout", "helper", "FACTOR", "Tail1", "Tail0", " ", "#", "a", "_", "self.weight", "nn.Cell",
          "(", "=")
# One-line module statements put in place of a one-line module statement: another kind ("env", "calls",
# "class"), a class (of a name the file has or a new one), a def, a name bound, an import.
MODULE_LINES = ("FACTOR = 2", "FRESH = 1", "def helper_new(a): return a", "def helper(a): return a",
                "class Fresh(nn.Cell): pass", "class Tail1(nn.Cell): pass", "import numpy as onp",
                "from mindspore import nn as nn2",
                "x = Tensor(1.0)", "print(ops.GradOperation(get_all=True)(net)(x))", "net = Tail0()",
                "Tail1 = nn.Dense", "helper(1)")
BODY_LINES = ("y0 = x * 2", "self.weight = 1.0", "fresh_name = 3", "pass", "return dout", "z = y0 = x",
              "return (dout * FACTOR,)")

# Appended: one-line module statements to replace, and Cells reading module-level names.
TAIL = """

FACTOR = 3
FACTOR_TWICE = 1
FACTOR_TWICE = 2
x = Tensor(np.ones(2, np.float32))
net = Tail0()
print(ops.GradOperation(get_all=True)(net)(x))


def helper(a):
    y0 = a * FACTOR
    return y0


class Tail0(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Tail1()
        self.weight = Parameter(Tensor(1.0), name='w')

    def construct(self, x):
        y0 = helper(x)
        return self.inner(y0) * self.weight

    def bprop(self, x, out, dout):
        return (dout * FACTOR,)


class Tail1(nn.Cell):
    def construct(self, x):
        return x

    def bprop(self, x, out, dout):
        return (dout,)
"""
TAIL_LINES = TAIL.count("\n")


def _edit(rnd: random.Random, text: str) -> str:
    lines = text.split("\n")
    i = rnd.randrange(len(lines)) if rnd.random() < 0.4 else len(lines) - 1 - rnd.randrange(TAIL_LINES)
    line = lines[i]
    indent = line[:len(line) - len(line.lstrip())]
    kind = rnd.random()
    if kind < 0.4:
        col = rnd.randrange(len(line) + 1)
        if rnd.random() < 0.6:
            lines[i] = line[:col] + rnd.choice(TOKENS) + line[col:]
        else:
            lines[i] = line[:col] + line[col + rnd.randint(1, 3):]
    elif kind < 0.55:
        words = list(WORD.finditer(line))
        if words:
            m = rnd.choice(words)
            lines[i] = line[:m.start()] + rnd.choice(TOKENS) + line[m.end():]
    elif kind < 0.97 and line.strip():
        if not indent:
            # (a one-line statement: the lines after it stay where they are, the statement is replaced in place)
            if i + 1 == len(lines) or lines[i + 1][:1] not in (" ", "\t"):
                lines[i] = rnd.choice(MODULE_LINES)
        else:
            lines[i] = indent + rnd.choice(BODY_LINES)
    else:
        lines.insert(i, "")  # every line below moves: no delta
    return "\n".join(lines)


def _basis_view(basis: rule_memo._Basis) -> dict:
    """A basis in terms that compare by identity where it holds nodes and lists."""
    return {"entries": id(basis.entries), "index": basis.index, "env_indices": basis.env_indices,
            "imports": basis.imports, "imports_digest": basis.imports_digest,
            "class_tops": {name: [id(top) for top in tops] for name, tops in basis.class_tops.items()},
            "class_names": basis.class_names, "table_names": basis.table_names, "values": basis.values,
            "line_count": basis.line_count}


def _known_view(known: dict) -> dict:
    return {key: (id(entry.facts), entry.bound, entry.index, id(entry.node), id(entry.scan))
            for key, entry in known.items()}


def _changes_view(found: tuple) -> tuple:
    current, added, removed = found
    return _known_view(current), [_known_view({0: e})[0] for e in added], [_known_view({0: e})[0] for e in removed]


class _Checked:
    """Wraps the memo's delta paths: each patched result is compared with the full computation on the spot."""

    def __init__(self, monkeypatch):
        self.bases = self.swaps = self.tables = 0
        self.kinds = self.class_tops = self.table_names = self.imports = 0
        self.mismatches: list = []
        self.program = None
        patched_basis, swapped, kept_tables, basis_of = (rule_memo._patched_basis, rule_memo._swapped_statement,
                                                         rule_memo._kept_tables, rule_memo._basis_of)

        def recorded_basis_of(p):
            self.program = p
            return basis_of(p)

        def checked_basis(before, p, delta):
            found = patched_basis(before, p, delta)
            self.program = p
            if found is not None:
                self.bases += 1
                fresh = _basis_view(basis_of(p))
                if _basis_view(found) != fresh:
                    self.mismatches.append(("basis", {k: (v, fresh[k]) for k, v in _basis_view(found).items()
                                                      if fresh[k] != v}))
                self.kinds += found.env_indices != before.env_indices
                self.class_tops += found.class_tops is not before.class_tops
                self.table_names += found.table_names != before.table_names
                self.imports += found.imports_digest != before.imports_digest
            return found

        def checked_swap(known, delta):
            fresh = _changes_view(rule_memo._changed_statements(known, self.program._entries))
            found = swapped(known, delta)
            if found is not None:
                self.swaps += 1
                if _changes_view(found) != fresh:
                    self.mismatches.append(("forget", _changes_view(found), fresh))
            return found

        def checked_tables(tables, current, changed, delta):
            if delta is None:
                return kept_tables(tables, current, changed, delta)
            fresh = kept_tables(dict(tables), current, changed, None)
            found = kept_tables(tables, current, changed, delta)
            self.tables += 1
            if {k: id(v) for k, v in found.items()} != {k: id(v) for k, v in fresh.items()}:
                self.mismatches.append(("tables", sorted(found), sorted(fresh)))
            return found

        monkeypatch.setattr(rule_memo, "_basis_of", recorded_basis_of)
        monkeypatch.setattr(rule_memo, "_patched_basis", checked_basis)
        monkeypatch.setattr(rule_memo, "_swapped_statement", checked_swap)
        monkeypatch.setattr(rule_memo, "_kept_tables", checked_tables)


def _describe(findings) -> list:
    return [(f.code, f.span, f.message, f.severity, f.fix) for f in findings]


@pytest.fixture(autouse=True)
def _memo_on_small_files(monkeypatch):
    monkeypatch.setattr(rule_memo.RuleMemo, "min_sites", 0)


def test_patched_basis_and_forget_equal_the_full_computation_under_random_edits(monkeypatch):
    checked = _Checked(monkeypatch)
    text = model_corpus.generate(600) + TAIL
    rnd = random.Random(SEED)
    settings = Settings()
    with DocumentSession("memo-delta") as session:
        session.analyse(text, settings)
        history = []
        for step in range(250):
            if history and rnd.random() < 0.35:
                text = history.pop()  # undone (broken code typed is often undone: the file heals)
            else:
                history.append(text)
                text = _edit(rnd, text)
            incremental = session.analyse(text, settings)
            assert not checked.mismatches, (step, checked.mismatches[0])
            if step % 20 == 0:
                assert _describe(incremental.findings) == _describe(analyze(text, settings).findings), step
    # The delta paths were taken for most edits, and for edits that change what they patch.
    assert checked.bases >= 60 and checked.swaps == checked.bases and checked.tables > 60, vars(checked)
    assert checked.kinds >= 3 and checked.class_tops >= 5 and checked.table_names >= 3 and checked.imports >= 1, \
        vars(checked)


def test_no_patch_from_a_basis_of_another_version(monkeypatch):
    """The memo's state is of the analysis before the last when the last one stood the memo aside (``drafts``
    returns early): its basis is then not ``delta.previous``'s, and the keys are joined afresh."""
    checked = _Checked(monkeypatch)
    text = model_corpus.generate(300) + TAIL
    settings = Settings()
    with DocumentSession("memo-stale") as session:
        session.analyse(text, settings)
        memo = session._doc.rule_memo
        first = memo._basis
        assert first is not None
        lines = text.split("\n")
        at = lines.index("FACTOR = 3")
        lines[at] = "FACTOR = 4"
        # The memo stands aside for this version (as for a file with few Cells): its basis stays the first one's.
        monkeypatch.setattr(rule_memo.RuleMemo, "min_sites", 10 ** 6)
        session.analyse("\n".join(lines), settings)
        assert memo._basis is first
        monkeypatch.setattr(rule_memo.RuleMemo, "min_sites", 0)
        lines[at] = "FACTOR = 5"
        text = "\n".join(lines)
        incremental = session.analyse(text, settings)
        assert session._doc.last_tables is not None
        assert checked.bases == 0 and checked.swaps == 0  # a delta from the version before, not from the memo's
        assert memo._basis is not first
        assert checked.program.delta is not None  # (the program patched its tables: the memo did not)
        assert _basis_view(memo._basis) == _basis_view(rule_memo._basis_of(checked.program))
        assert _describe(incremental.findings) == _describe(analyze(text, settings).findings)
        # The next keystroke patches again.
        lines[at] = "FACTOR = 6"
        session.analyse("\n".join(lines), settings)
        assert checked.bases == 1 and checked.swaps == 1 and not checked.mismatches



def test_each_kind_of_replacement_is_patched_as_joined(monkeypatch):
    """One module statement replaced in turn by a class of a name a later class has (its top goes before that
    one's), a class of a new name, a line of bare calls, an import, a def and what it was: each patched."""
    checked = _Checked(monkeypatch)
    text = model_corpus.generate(300) + TAIL
    settings = Settings()
    lines = text.split("\n")
    at = lines.index("FACTOR = 3")
    with DocumentSession("memo-kinds") as session:
        session.analyse(text, settings)
        for step, line in enumerate(("class Tail1(nn.Cell): pass", "class Fresh(nn.Cell): pass", "helper(1)",
                                     "import numpy as onp", "def helper(a): return a", "FACTOR = 3")):
            lines[at] = line
            session.analyse("\n".join(lines), settings)
            assert checked.bases == step + 1 and checked.swaps == step + 1, line
            assert not checked.mismatches, (line, checked.mismatches[0])
        tops = session._doc.rule_memo._basis.class_tops
        assert len(tops["Tail1"]) == 1 and "Fresh" not in tops
    assert checked.kinds >= 2 and checked.class_tops >= 3 and checked.table_names >= 2 and checked.imports == 2


def test_a_statement_table_is_dropped_with_its_statement_when_no_name_changed(monkeypatch):
    """A line of bare calls naming a Cell (read by its key, so its table is kept) replaced by one of two lines (no
    delta) binds no name: its table is still dropped, so that the next patched analysis keeps exactly the tables a
    full comparison keeps."""
    checked = _Checked(monkeypatch)
    text = model_corpus.generate(300) + TAIL
    settings = Settings()
    lines = text.split("\n")
    at = lines.index("FACTOR_TWICE = 1")
    with DocumentSession("memo-calls") as session:
        session.analyse(text, settings)
        lines[at] = "print(Tail1()(x))"
        session.analyse("\n".join(lines), settings)
        memo = session._doc.rule_memo
        facts = memo._basis.entries[memo._basis.index[id(_statement_at(session, at))]][2]
        assert id(facts) in memo._tables  # (read by Tail1's key)
        lines[at] = "print(Tail1()(x,\n                 x))"  # a line more, in it: no delta
        session.analyse("\n".join(lines), settings)
        assert checked.bases == 1
        lines[at] = "print(Tail1()(x, x,\n                 x))"
        session.analyse("\n".join(lines), settings)
        assert checked.bases == 2 and checked.tables == 2, vars(checked)
        assert not checked.mismatches, checked.mismatches[0]


def _statement_at(session, line: int):
    """The top-level statement starting on 0-based ``line`` of the document's tree."""
    for child in session._doc.module.children:
        if child.start_pos[0] == line + 1:
            return child
    raise AssertionError(line)
