"""DocumentSession: the engine's per-document API (analyse, verify, fix_all, close), skeletons and hints."""
from pathlib import Path

from bprop_lsp.checker import RULES, DocumentSession, analyze
from bprop_lsp.engine import Settings
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


def test_hints_left_for_later_are_those_of_the_analysis_until_the_next_parse():
    """A keystroke's analysis may leave ``bprops`` for later (the server's diagnostics do not wait for them):
    ``session.bprops(text)`` then gives exactly what the analysis would have, and nothing once the tree is parsed
    again (it reads the tree as that analysis left it)."""
    text = SEED.replace("out):", "out, dout):")
    moved = "# 注释 😀\n\n" + text
    with DocumentSession() as session:
        for source in (text, moved, text):
            analysis = session.analyse(source, Settings(), with_bprops=False)
            assert analysis.bprops == []
            later = session.bprops(source)
            assert later == analyze(source).bprops and len(later) == 1
            assert session.bprops(source + "\n") is None  # (of another text)
        session.parse(moved)
        assert session.bprops(text) is None and session.bprops(moved) is None
        assert session.analyse(moved, Settings()).bprops == analyze(moved).bprops
        assert session.bprops(moved) is None  # (that analysis gave them itself)


def test_skeleton_for_a_cell_without_bprop_checks_clean():
    with DocumentSession() as session:
        assert session.analyse(SEED, Settings()).skeletons == []  # only when asked for
        analysis = session.analyse(SEED, Settings(), with_skeletons=True)
    (sk,) = analysis.skeletons
    assert sk.owner == "Plain" and sk.inputs == ("a", "b")
    fixed = apply_edits(SEED, [Edit(Span(sk.insert_at, sk.insert_at), sk.text())])
    assert "    def bprop(self, a, b, out, dout):\n        return ops.zeros_like(a), ops.zeros_like(b)\n" in fixed
    assert [f.code for f in analyze(fixed).findings] == ["BP001"]  # only MulAdd's own mistake remains
    assert "${1:ops.zeros_like(a)}" in sk.text(snippet=True)


# --------------------------------------------------------------------------------- parse state and fix checks
from test_engine import _tree_dump as _dump  # (every node's type, value, positions and prefix)


MANY = "from mindspore import nn\n# 中文注释 😀\n" + "".join(
    f"class C{i}(nn.Cell):\n    def construct(self, x, y):\n        return x + y\n"
    f"    def bprop(self, x, y, out):\n        return out, out\n\n" for i in range(12))


def test_a_fork_is_the_fixed_texts_tree_and_leaves_the_documents_tree_alone():
    from bprop_lsp.engine.parsing import ParsedDocument, grammar

    doc = ParsedDocument()
    module = doc.parse(MANY)
    before, children = _dump(module), list(module.children)
    fixed = MANY.replace("def bprop(self, x, y, out):", "def bprop(self, x, y, out, dout):", 3)
    fork, indices, _lines = doc.fork(MANY, fixed)
    assert fork is not module and len(indices) == 3
    assert fork.get_code() == fixed and _dump(fork) == _dump(grammar().parse(fixed))
    # The document's tree: the same nodes, unchanged; its unchanged statements are shared with the fork.
    assert module.children == children and _dump(module) == before
    assert sum(a is b for a, b in zip(fork.children, module.children)) == len(module.children) - 3
    # Not a fork of another text, nor across a change of line count: the caller parses in full.
    assert doc.fork(fixed, MANY) is None
    assert doc.fork(MANY, MANY.replace("out):", "out,\n dout):", 1)) is None


def test_fix_checks_fork_the_documents_tree_instead_of_parsing_the_file(monkeypatch):
    from bprop_lsp.engine import fix_checks as analysis_module

    session = DocumentSession("forks")
    result = session.analyse(MANY, with_syntax_errors=True)
    assert sum(f.fix is not None for f in result.findings) == 12
    full_parses = []
    real = analysis_module.parse_text
    monkeypatch.setattr(analysis_module, "parse_text", lambda text: full_parses.append(text) or real(text))
    tree = session._doc.module
    checked = session.verify(result)
    assert full_parses == []  # every fixed text (the batch, then each fix) was a fork
    assert all(f.fix is not None for f in checked.findings)
    assert session._doc.module is tree and tree.get_code() == MANY
    # And the same verdicts as checks on full parses.
    assert checked.findings == analysis_module.verified_findings(result.findings, MANY, Settings(), rules=RULES)
    assert full_parses


def test_no_engine_module_keeps_parse_state():
    """Parse state lives in a session's ParsedDocument: no engine module has a module-level dict, list or set
    (but the log-once record of failing rules: a process-wide logging concern, not parse state)."""
    import importlib
    import pkgutil

    import bprop_lsp.engine as engine

    offenders = []
    for info in pkgutil.iter_modules(engine.__path__):
        module = importlib.import_module(f"bprop_lsp.engine.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, (dict, list, set)) and not name.startswith("__") and not name.isupper() \
                    and not name.lstrip("_").isupper() and name != "_reported_rule_failures":
                offenders.append(f"{info.name}.{name}")
    assert offenders == []


def test_a_session_keeps_no_analysis_program_alive_between_versions():
    # The facts kept with each statement (class infos, their members) outlive the analysis that read them; they
    # must not keep that analysis's Program (its text, line index, call index) alive: 4 MiB per 10,000 lines.
    import gc

    from bprop_lsp.engine.program import Program

    cells = "".join(
        f"class Cell{i}(nn.Cell):\n"
        f"    def construct(self, x, y):\n        return x * y\n"
        f"    def bprop(self, x, y, out):\n        return dout * y, dout * x\n\n"
        f"class User{i}(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.inner = Cell{i}()\n    def construct(self, x):\n        return self.inner(x, x)\n\n"
        for i in range(4))
    text = "import mindspore.nn as nn\n\n" + cells
    session = DocumentSession()
    for version in (text, text.replace("return x * y", "return x * y  # 改"), text + "\nz = 1\n"):
        analysis = session.analyse(version, Settings())
        assert analysis.findings
        assert session.verify(analysis, stale=lambda: False) is not None
        del analysis
    gc.collect()
    alive = [o for o in gc.get_objects() if isinstance(o, Program)]
    assert not alive, f"{len(alive)} programs kept alive by the session"
    session.close()


def test_a_statement_read_afresh_takes_its_code_from_the_lines_exactly(monkeypatch):
    # The statement an edit touched gets its code (digests, words) from the parser's lines, not from a walk of its
    # leaves: it must be exactly the tree's code, with CJK, emoji, CRLF, comments and blank lines around.
    from parso.tree import BaseNode

    base = SEED.replace("class Plain", "# 注释 😀 between\n\n\nclass Plain") + "\n\n# trailing 注释\n"
    for text in (base, base.replace("\n", "\r\n")):
        with DocumentSession("codes") as session:
            session.analyse(text, Settings())
            walked = []
            real = BaseNode.get_code

            def counted(node, include_prefix=True):
                if node.parent is not None and node.parent.type == "file_input":
                    walked.append(node)
                return real(node, include_prefix)

            monkeypatch.setattr(BaseNode, "get_code", counted)
            for old, new in (("return 2 * x + y", "return 2 * x + y  # 改"), ("return a * b", "return a * b * 2"),
                             ("x = 1", "x = 2")):
                edited = text.replace(old, new)
                assert session.analyse(edited, Settings()).findings == analyze(edited, Settings(),
                                                                               verify_fixes=False).findings
                doc = session._doc
                monkeypatch.setattr(BaseNode, "get_code", real)
                for child, _, facts in doc.statements.values():
                    assert facts["code"] == child.get_code()
                monkeypatch.setattr(BaseNode, "get_code", counted)
            assert [n.type for n in walked if n.type in ("classdef", "decorated")] == []
            monkeypatch.setattr(BaseNode, "get_code", real)


# Oracle case 259 (MindSpore: valid in both modes), with a spare statement the edits below rewrite.
_SHADOWED = (Path(__file__).parent / "fixtures" / "oracle" / "cases" /
             "259_outer_bprop_shadows_inner_wrong_bprop.py").read_text(encoding="utf-8") + "\nprobe = None\n"
_INNER_BPROP = _SHADOWED.split("\n").index("    def bprop(self, x, out):")  # Quantize's, lacking dout


def _inner_bprop_codes(session, text):
    got = session.analyse(text, Settings())
    want = analyze(text, Settings(), verify_fixes=False)
    assert [(f.code, f.span) for f in got.findings] == [(f.code, f.span) for f in want.findings]
    return sorted({f.code for f in got.findings if f.span.start.line in (_INNER_BPROP, _INNER_BPROP + 1)})


def test_a_child_cells_shadowing_follows_every_keystroke_that_adds_or_removes_a_use_of_it():
    # Quantize's wrong bprop is shadowed while QuantBlock's child is its only use; a use elsewhere (typed into
    # another statement) makes it checked again, and removing the use shadows it again. The mentions of the Cells'
    # names are kept per statement between keystrokes: each version must still equal a fresh analysis.
    with_other = _SHADOWED.replace("probe = None", "class Other(nn.Cell):\n    def bprop(self, out, dout):\n"
                                                   "        return (dout,)\n")
    without_inner_bprop = with_other.replace("def bprop(self, x, out)", "def bprox(self, x, out)")
    versions = [
        _SHADOWED,
        _SHADOWED.replace("probe = None", "probe = Quantize()"),  # a second use: checked
        _SHADOWED.replace("probe = None", "probe = None  # Quantize()"),  # a comment still mentions the name
        _SHADOWED.replace("probe = None", "probe = ops.Quantize"),  # after a dot: another statement naming it
        _SHADOWED,
        _SHADOWED.replace("probe = None", "class Other(nn.Cell):\n    def bprop(self, out, dout):\n"
                                          "        return (dout,)\n\n\nprobe = Quantize"),  # the names change
        _SHADOWED,
        without_inner_bprop,
        with_other,
    ]
    session = DocumentSession()
    codes = [_inner_bprop_codes(session, text) for text in versions]
    assert codes[0] == codes[4] == codes[6] == codes[7] == codes[8] == []
    assert codes[1] == codes[2] == codes[3] == codes[5] == ["BP001"]
    # Opened without Quantize's bprop (beside two Cells with bprops: every statement's mentions are read for
    # their names), then Quantize gets one: its name joins the names, and QuantBlock's statement, untouched since,
    # must be read again for it.
    session = DocumentSession()
    assert _inner_bprop_codes(session, without_inner_bprop) == []
    assert _inner_bprop_codes(session, with_other) == []


_FLAGGED = '''from mindspore import nn

FLAG = True


def custom_grad(x, out, dout):
    return (dout * 100,)


class Sq(nn.Cell):
    if FLAG:
        def __init__(self):
            super().__init__()
            self.bprop = custom_grad
    else:
        def __init__(self):
            super().__init__()

    def construct(self, x):
        return x * x

    def helper(self):
        return self.bprop
'''


def test_a_class_body_condition_edited_elsewhere_changes_which_self_bprop_assignments_count():
    # Which ``__init__`` the class keeps depends on FLAG, a statement of its own: editing it re-reads the class's
    # members, and BP011's per-class answer (kept with the class while its members stay the same) with them.
    session = DocumentSession()
    for text in (_FLAGGED, _FLAGGED.replace("FLAG = True", "FLAG = False"), _FLAGGED):
        got = session.analyse(text, Settings())
        want = analyze(text, Settings(), verify_fixes=False)
        assert [(f.code, f.span) for f in got.findings] == [(f.code, f.span) for f in want.findings]
        assert ("BP011" in {f.code for f in got.findings}) == ("FLAG = True" in text)


def test_nodes_found_from_a_statements_own_lines_equal_those_found_through_the_line_table():
    # A statement read afresh finds the nodes around a word from where its code starts and its own line breaks
    # (no line table of the whole text, no statement ends): the same nodes as through the line table, with CJK,
    # emoji and tabs before the words, a statement after a one-line one, and the file's last statement.
    import re

    from bprop_lsp.engine.parsing import parse_text
    from bprop_lsp.engine.program import Program, _word_hits

    text = ("import mindspore.nn as nn  # 注释 😀\nx = 1; y = Net()\n\n\nclass Net(nn.Cell):\n\t'''文档 😀'''\n"
            "\tdef construct(self, 中, y):\n\t\tself.q = Net()  # Net 😀\n\t\treturn (Net(), 中)\n\n"
            "net = Net() if x else Net\nprint(net)")
    program = Program(parse_text(text), text)
    layout = program._layout
    assert layout is not None
    compared = 0
    for word in sorted(set(re.findall(r"\w+", text))):
        for types in (("expr_stmt",), ("power", "atom_expr"), ("name",)):
            for facts, offset in program._word_statements(word) or []:
                rels = _word_hits(facts, word)
                own = program._nodes_in_statement(facts, rels, types)
                assert own is not None
                assert own == program.nodes_at([offset + rel for rel in rels], types), (word, types)
                compared += len(own)
    assert compared > 15


_CALLS = '''from mindspore import nn, ops


class A(nn.Cell):
    def construct(self, x, y):
        return x * y


class B(nn.Cell):
    def construct(self, x):
        return x


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = A()

    def construct(self, x):
        return self.inner(x, x)


net = A()
spare = 1
out = net(1, 2)
grads = ops.GradOperation()(net)(3, 4)
direct = A()(5, 6)
'''


def test_the_call_index_kept_per_statement_follows_what_its_lookups_answer():
    # A statement's resolved calls are kept with it while the class names and the one bindings its resolution
    # looked up answer the same: rebinding ``net`` elsewhere, a second binding of it, a renamed class must each
    # give the call index a fresh parse gives.
    from bprop_lsp.engine.callsites import build_call_index
    from bprop_lsp.engine.parsing import ParsedDocument, parse_text
    from bprop_lsp.engine.program import Program

    def sites(program):
        index = build_call_index(program)
        return sorted((cls.name, site.node.get_code(include_prefix=False), site.node.start_pos, len(site.positional))
                      for cls in program.classes for site in index.sites(cls))

    versions = [
        _CALLS,
        _CALLS.replace("net = A()", "net = B()"),  # the binding another statement's calls resolve through
        _CALLS.replace("spare = 1", "net = B()"),  # a second binding: ``net`` names no one instance
        _CALLS.replace("class A(nn.Cell):", "class A2(nn.Cell):"),  # the class the calls name is gone
        _CALLS.replace("spare = 1", "class A(nn.Cell):\n    pass"),  # a second class A: the later one counts
        _CALLS,
    ]
    doc = ParsedDocument()
    seen = set()
    for text in versions:
        module = doc.parse(text)
        got = sites(Program(module, text, doc.statements, lines=doc.lines))
        assert got == sites(Program(parse_text(text), text)), text
        seen.add(tuple(got))
    assert len(seen) >= 4  # the versions do differ in their call sites
