"""The pure engine without LSP: positions, half-typed code, modes, settings, fixes and MRO resolution."""
from __future__ import annotations

import pytest

from bprop_lsp.checker import RULE_NAMES, DocumentSession, analyze, fix_all
from bprop_lsp.engine import Settings, Severity, apply_edits
from bprop_lsp.engine.settings import merge

SEED = ("from mindspore import nn\n"
        "class MulAdd(nn.Cell):\n"
        "    def construct(self, x, y):\n"
        "        return 2 * x + y\n"
        "    def bprop(self, x, y, out):\n"
        "        return 2 * out, out\n")


def only(text, code="BP001", settings=Settings()):
    found = [f for f in analyze(text, settings).findings if f.code == code]
    assert len(found) == 1, [(f.code, f.message) for f in analyze(text, settings).findings]
    return found[0]


def test_seed_span_is_the_bprop_name():
    f = only(SEED)
    assert (f.span.start.line, f.span.start.column, f.span.end.line, f.span.end.column) == (4, 8, 4, 13)
    assert f.related and f.related[0].span.start.line == 2  # points at construct


def test_columns_are_code_points_after_cjk_and_emoji():
    text = SEED.replace("    def bprop(self, x, y, out):", "    x_注释 = 1; 😀 = 2; exec = 3\n    def bprop(self, x, y, out):")
    text = ("# 中文注释 😀\nfrom mindspore import nn\nclass 乘加(nn.Cell):\n"
            "    def construct(self, 输入, y):\n        return 输入\n"
            "    甲 = '😀'; def_ = 1\n"
            "    def bprop(self, 输入, y, 输出):  # 反向 😀\n        return 输出, 输出\n")
    f = only(text)
    line = text.split("\n")[f.span.start.line]
    assert line[f.span.start.column:f.span.end.column] == "bprop"
    fixed = apply_edits(text, f.fix.edits)
    assert "    def bprop(self, 输入, y, 输出, dout):  # 反向 😀\n" in fixed


def test_crlf_and_tabs_are_kept_by_the_fix():
    text = SEED.replace("    ", "\t").replace("\n", "\r\n")
    fixed, n = fix_all(text)
    assert n == 1 and "\tdef bprop(self, x, y, out, dout):\r\n" in fixed
    assert fixed.replace("out, dout)", "out)") == text


def test_multiline_signature_gets_a_line_of_its_own():
    text = SEED.replace("    def bprop(self, x, y, out):",
                        "    def bprop(\n        self,\n        x,  # first\n        y,\n        out  # fwd\n    ):")
    fixed, _ = fix_all(text)
    assert "        out,  # fwd\n        dout\n    ):" in fixed


def test_name_clash_picks_a_fresh_name():
    text = SEED.replace("return 2 * out, out", "dout = 1\n        return 2 * out, out")
    f = only(text)
    assert "dout_1" in f.fix.edits[0].new_text
    # A module-level `dout` read by the body would be shadowed: a fresh name too.
    f = only("dout = 3\n" + SEED.replace("return 2 * out, out", "return dout, out"))
    assert "dout_1" in f.fix.edits[0].new_text


def test_free_name_the_body_reads_is_the_name_added():
    f = only(SEED.replace("return 2 * out, out", "return 2 * dout, dout"))
    assert f.fix.edits[0].new_text == ", dout"


def test_half_typed_file_still_reports():
    text = SEED + "\nclass Broken(nn.Cell:\n    def construct(self, x\n"
    analysis = analyze(text)
    assert analysis.syntax_errors
    assert [f.code for f in analysis.findings] == ["BP001"]


@pytest.mark.parametrize("cut", range(0, len(SEED), 7))
def test_every_prefix_of_the_seed_is_analysed_without_error(cut):
    analyze(SEED[:cut])


def test_file_without_bprop_is_not_parsed():
    assert analyze("x = (\n" * 1000).findings == []


def test_aliases_and_hierarchy():
    text = ("import mindspore.nn as mnn\nfrom mindspore.nn import Cell as C\n"
            "class Mixin:\n    def bprop(self, x, out):\n        return (out,)\n"
            "def factory():\n    if True:\n        class Inner(Mixin, C):\n            def construct(self, x):\n"
            "                return x\n    return Inner\n"
            "class Base(mnn.Cell):\n    pass\n"
            "class Leaf(Base):\n    def construct(self, a):\n        return a\n    bprop = lambda self, a, out: (out,)\n")
    codes = sorted((f.code, f.span.start.line) for f in analyze(text).findings)
    assert codes == [("BP001", 3), ("BP001", 16)]


def test_non_cell_class_with_bprop_is_ignored():
    text = "class Helper:\n    def construct(self, x):\n        return x\n    def bprop(self, out):\n        return out\n"
    assert analyze(text).findings == []


def test_mode_specific_findings_follow_the_mode():
    text = SEED.replace("def bprop(self, x, y, out):", "def bprop(self, x, y, out, dout, scale=2.0):")
    text = text.replace("return 2 * out, out", "return 2 * dout * scale, dout")
    auto = only(text, "BP002")
    assert auto.severity is Severity.WARNING and "GRAPH_MODE" in auto.message
    assert only(text, "BP002", Settings(mode="graph")).severity is Severity.ERROR
    assert only(text, "BP002", Settings(mode="pynative")).severity is Severity.INFO
    inferred = "import mindspore as ms\nms.set_context(mode=ms.GRAPH_MODE)\n" + text
    assert only(inferred, "BP002").severity is Severity.ERROR


def test_settings_merge_reports_bad_values():
    result = merge(Settings(), {"mode": "fast", "select": ["BP001", "XYZ"], "bogus": 1, "ignore": 5}, "test",
                   rules=RULE_NAMES)
    assert result.settings.mode == "auto" and result.settings.select == ("BP001",)
    assert len(result.warnings) == 3 and all(w.startswith("test:") for w in result.warnings)
    # A selector that matches no rule changes what is checked: an error (the CLI exits 2), not a warning.
    assert result.errors == ["test: unknown rule selector `XYZ` in 'select'; `bprop-lsp rule` lists the rules"]


def test_incremental_parse_matches_a_fresh_parse():
    session = DocumentSession("test://incremental")
    text = SEED
    session.analyse(text)
    for edit in ["dout", ", dout", ""]:
        text2 = text.replace("out):", f"out{edit}):")
        inc = session.analyse(text2)
        fresh = analyze(text2)
        assert [(f.code, f.span, f.message) for f in inc.findings] == [(f.code, f.span, f.message) for f in fresh.findings]
        text = text2


def test_fix_all_is_idempotent():
    once, n = fix_all(SEED)
    twice, m = fix_all(once)
    assert n == 1 and m == 0 and once == twice


def test_noqa_inside_a_string_does_not_suppress():
    text = SEED.replace("def bprop(self, x, y, out):", "def bprop(self, x, y, out=' # noqa'):")
    assert "BP001" in {f.code for f in analyze(text).findings}


def test_lambda_bprop_gets_the_same_fix():
    text = SEED.replace("    def bprop(self, x, y, out):\n        return 2 * out, out\n",
                        "    bprop = lambda self, x, y, dout: (2 * dout, dout)\n")
    fixed, n = fix_all(text)
    assert n == 1 and "bprop = lambda self, x, y, out, dout: (2 * dout, dout)" in fixed


def test_import_spellings_of_cell():
    for head, base in [("import mindspore", "mindspore.nn.Cell"), ("import mindspore as ms", "ms.nn.Cell"),
                       ("from mindspore import nn as mnn", "mnn.Cell"), ("from mindspore.nn.cell import Cell as C", "C"),
                       ("import mindspore.nn as nn", "nn.Cell")]:
        text = SEED.replace("from mindspore import nn", head).replace("nn.Cell", base) if "nn.Cell" != base else SEED
        assert [f.code for f in analyze(text).findings] == ["BP001"], head


def test_torch_module_and_local_cell_class_are_not_mindspore():
    text = SEED.replace("from mindspore import nn", "import torch.nn as nn").replace("nn.Cell", "nn.Module")
    assert analyze(text).findings == []
    text = SEED.replace("from mindspore import nn", "class Cell:\n    pass").replace("nn.Cell", "Cell")
    assert analyze(text).findings == []


def _tree_dump(node):
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if hasattr(n, "children"):
            out.append((n.type, n.start_pos, n.end_pos))
            stack.extend(reversed(n.children))
        else:
            out.append((n.type, n.value, n.start_pos, n.prefix))
    return out


def test_incremental_trees_equal_fresh_parses_after_random_edits():
    """The statement splice and the diff parser give exactly the tree a fresh parse gives (types, values,
    positions, prefixes), over random one-character edits of the oracle programs."""
    import glob
    import random

    from bprop_lsp.engine.parsing import ParsedDocument, grammar

    rnd = random.Random(7)
    files = sorted(glob.glob(str(__import__("pathlib").Path(__file__).parent / "fixtures/oracle/cases/*.py")))[::7]
    for i, path in enumerate(files):
        doc = ParsedDocument()
        text = open(path, encoding="utf-8", newline="").read()
        doc.parse(text)
        for _ in range(40):
            pos = rnd.randrange(len(text) + 1)
            ch = rnd.choice(["a", " ", "(", ")", ":", "#", "'", "1", "\t", "中", "😀", ",", "=", "\\", "", "\n", "\n",
                             "\n    ", "\r\n"])
            if ch == "" and pos < len(text) and (text[pos] not in "\r\n" or rnd.random() < 0.5):
                text = text[:pos] + text[pos + 1:]
            elif ch:
                text = text[:pos] + ch + text[pos:]
            tree = doc.parse(text)
            assert tree.get_code() == text
            assert _tree_dump(tree) == _tree_dump(grammar().parse(text))


def test_checking_many_fixes_stays_incremental():
    """Each fix is re-parsed and re-checked; with 60 fixable findings in one file every check is a one-statement
    re-parse and a one-rule re-check, and every fix is still verified (none dropped)."""
    body = "".join(f"class C{i}(nn.Cell):\n    def construct(self, x, y):\n        return x + y\n"
                   f"    def bprop(self, x, y, out):\n        return out, out\n\n" for i in range(60))
    analysis = analyze("from mindspore import nn\n" + body)
    assert len(analysis.findings) == 60 and all(f.fix is not None for f in analysis.findings)
    assert analysis.rejected_fixes == []


def test_self_referencing_body_does_not_recurse_forever():
    """Issue 12: `dx = dx * 2; return dx` compiles and used to raise RecursionError in the return classifier."""
    code = (
        "from mindspore import nn\n"
        "class C(nn.Cell):\n"
        "    def construct(self, x, y):\n"
        "        return x * y\n"
        "    def bprop(self, x, y, out, dout):\n"
        "        dx = dx * 2\n"
        "        dy = dx + dy\n"
        "        return dx\n"
    )
    findings = analyze(code).findings
    # A bare value for two inputs is still reported: the classifier ended, it did not give up on the file.
    assert "BP020" in [f.code for f in findings]


def test_mutually_recursive_helpers_end():
    code = (
        "from mindspore import nn\n"
        "def f(d):\n    return g(d)\n"
        "def g(d):\n    return f(d)\n"
        "class C(nn.Cell):\n"
        "    def construct(self, x):\n        return x\n"
        "    def bprop(self, x, out, dout):\n        return f(dout)\n"
    )
    assert analyze(code).findings == []


def test_a_rule_that_raises_costs_only_its_own_findings(monkeypatch, caplog):
    from bprop_lsp.rules import RULES_BY_CODE

    def boom(self, ctx):
        raise RuntimeError("rule bug")
        yield  # pragma: no cover

    monkeypatch.setattr(type(RULES_BY_CODE["BP020"]), "check", boom)
    code = (
        "from mindspore import nn\n"
        "class C(nn.Cell):\n"
        "    def construct(self, x, y):\n        return x * y\n"
        "    def bprop(self, x, y, out):\n        return dout\n"
    )
    with caplog.at_level("WARNING"):
        codes = [f.code for f in analyze(code).findings]
        analyze(code)
    assert "BP001" in codes and "BP020" not in codes
    failures = [r for r in caplog.records if "BP020 failed" in r.getMessage()]
    assert len(failures) <= 1


def _severities(code: str) -> dict[str, str]:
    return {f.code: f.severity.name.lower() for f in analyze(code).findings}


_PARAM_CELL = (
    "import mindspore as ms\n"
    "from mindspore import nn, ops, Parameter, Tensor\n"
    "class {name}(nn.Cell):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.w = Parameter(Tensor(1.0), name='w')\n"
    "    def construct(self, x):\n"
    "        return x * self.w\n"
    "    def bprop(self, x, out, dout):\n"
    "        return (dout * self.w,)\n"
)


def test_mode_is_the_one_set_where_the_cell_runs():
    """Further behaviours 30: a set_context inside the function that runs the network beats the module's."""
    code = (_PARAM_CELL.format(name="InPynative") + _PARAM_CELL.format(name="InGraph").split("\n", 2)[2]
            + "ms.set_context(mode=ms.GRAPH_MODE)\n"
            "def test_pynative():\n"
            "    ms.set_context(mode=ms.PYNATIVE_MODE)\n"
            "    return ms.grad(InPynative())(Tensor(1.0))\n"
            "def test_graph():\n"
            "    ms.set_context(mode=ms.GRAPH_MODE)\n"
            "    return ms.grad(InGraph())(Tensor(1.0))\n")
    by_class = {}
    # (BP031 left out: where PYNATIVE runs the cell it is the one finding at the def, BP030 its note.)
    for f in analyze(code, Settings(ignore=("BP031",))).findings:
        if f.code == "BP030":
            by_class["InPynative" if "InPynative" in f.message or f.span.start.line < 12 else "InGraph"] = f.severity.name
    assert by_class == {"InPynative": "INFO", "InGraph": "ERROR"}, by_class


def test_jit_elsewhere_does_not_switch_to_graph_rules():
    """Further behaviours 31: @jit on construct leaves PYNATIVE's rules; a gradient inside @jit does not."""
    cell = (
        "import mindspore as ms\n"
        "from mindspore import nn\n"
        "class C(nn.Cell):\n"
        "    @ms.jit\n"
        "    def construct(self, x):\n"
        "        return x\n"
        "    def bprop(self, *args):\n"
        "        return (args[-1],)\n"
    )
    assert _severities(cell) == {"BP003": "warning"}
    train = cell + "@ms.jit\ndef step(x):\n    return ms.grad(C())(x)\n"
    assert _severities(train) == {"BP003": "error"}


def test_set_context_at_the_start_of_a_line_is_read():
    """`set_context(...)` imported by name and called at column 0 (parso hands back the previous line's newline
    for a position at a leaf boundary)."""
    code = (
        "from mindspore import nn, set_context, GRAPH_MODE\n"
        "set_context(mode=GRAPH_MODE)\n"
        "class C(nn.Cell):\n"
        "    def construct(self, x):\n"
        "        return x\n"
        "    def bprop(self, *args):\n"
        "        return (args[-1],)\n"
    )
    assert _severities(code) == {"BP003": "error"}


def test_names_bound_to_each_other_end_as_unknown():
    """`a = b; b = a` handed to ops.Custom as bprop: resolution is bounded, no finding, no crash."""
    code = (
        "from mindspore import ops\n"
        "a = b\n"
        "b = a\n"
        "op = ops.Custom(lambda x: x, out_shape=lambda s: s, out_dtype=lambda t: t, func_type='pyfunc', bprop=a)\n"
    )
    assert analyze(code).findings == []


def test_per_statement_syntax_errors_equal_parsos_whole_tree_check():
    """The syntax-issue cache (checked per top-level statement, by its text) gives what parso's error finder gives
    over the whole tree, over random edits of oracle programs with ``__future__`` imports, ``global`` and
    ``nonlocal`` in them (statements whose errors depend on others)."""
    import glob
    import random

    from bprop_lsp.engine.parsing import ParsedDocument, grammar

    def issues(found):
        return [(i.start_pos, i.end_pos, i.code, i.message) for i in found]

    rnd = random.Random(11)
    files = sorted(glob.glob(str(__import__("pathlib").Path(__file__).parent / "fixtures/oracle/cases/*.py")))[3::9]
    extras = ["from __future__ import annotations\n", "global_step = 0\n", "def f():\n    global g\n    g = 1\n",
              "def outer():\n    x = 1\n    def inner():\n        nonlocal x\n        x = 2\n    return inner\n",
              "x = 1\nfrom __future__ import division\n", "nonlocal y\n"]
    for path in files:
        doc = ParsedDocument()
        text = open(path, encoding="utf-8", newline="").read()
        for _ in range(25):
            if rnd.random() < 0.3:
                lines = text.splitlines(keepends=True)
                at = rnd.randrange(len(lines) + 1)
                text = "".join(lines[:at]) + rnd.choice(extras) + "".join(lines[at:])
            else:
                pos = rnd.randrange(len(text) + 1)
                text = text[:pos] + rnd.choice(["a", " ", "(", ":", "#", "\n", "'", ""]) + text[pos:]
            module = doc.parse(text)
            assert issues(doc.syntax_errors(module)) == issues(grammar().iter_errors(grammar().parse(text))), text


def test_a_line_index_patched_for_an_edit_equals_one_built_afresh():
    # The server patches its line table on each keystroke instead of building it over every line again; the
    # result must be the fresh table for any edit: line breaks typed, deleted, joined, at the ends, CJK, emoji.
    import random

    from bprop_lsp.engine.text import LineIndex

    rnd = random.Random(11)
    pieces = ["a", "中", "😀", "\n", "\n\n", "  ", "def f():\n", "x = 1\n", ""]
    for _ in range(3000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randrange(12)))
        start = rnd.randrange(len(text) + 1)
        end = rnd.randrange(start, len(text) + 1)
        new = "".join(rnd.choice(pieces) for _ in range(rnd.randrange(4)))
        old = LineIndex(text)
        old.starts  # built: the patch path
        patched = old.replaced(start, end, new)
        assert patched.text == text[:start] + new + text[end:]
        assert patched._starts is not None, "a text without \\r is patched"
        assert patched.starts == LineIndex(patched.text).starts, (text, start, end, new)
    crlf = LineIndex("a\r\nb\r\n")
    crlf.starts
    assert crlf.replaced(1, 2, "").starts == LineIndex("a\nb\r\n").starts  # \r: built afresh


def test_a_line_index_patched_keystroke_after_keystroke_answers_as_one_built_afresh():
    # Typing along a line only records that the lines below move (the table is shared, not copied); the moves
    # pile up while the typing stays on that line and are applied when another line is edited or the whole table
    # is asked for. Every answer (line starts, positions, offsets, line texts, the count) must be a fresh index's.
    import random

    from bprop_lsp.engine.model import Position
    from bprop_lsp.engine.text import LineIndex

    rnd = random.Random(12)
    pieces = ["a", "中", "😀", "\n", "  ", "x = 1\n", ""]
    shared = 0
    for _ in range(150):
        text = "".join(rnd.choice(["x = 1\n", "中文 😀\n", "\n", "def f():\n    pass\n"]) for _ in range(12))
        index = LineIndex(text)
        index.starts
        for step in range(25):
            line = rnd.randrange(index.line_count)
            if rnd.random() < 0.7:  # typing or deleting within one line
                start = index.line_start(line) + rnd.randrange(len(index.line_text(line)) + 1)
                end = start + (rnd.randrange(2) if start < index.line_end(line) else 0)
                new = rnd.choice(["a", "中", "😀", ""])
            else:
                start = rnd.randrange(len(index.text) + 1)
                end = rnd.randrange(start, min(len(index.text), start + 8) + 1)
                new = "".join(rnd.choice(pieces) for _ in range(rnd.randrange(3)))
            before = index
            index = index.replaced(start, end, new)
            if index._starts is not None and index._starts is before._starts:
                shared += 1
            fresh = LineIndex(index.text)
            assert index.line_count == fresh.line_count
            for k in range(fresh.line_count):
                assert index.line_start(k) == fresh.starts[k]
                assert index.line_text(k) == fresh.line_text(k)
            for offset in range(len(index.text) + 1):
                assert index.position(offset) == fresh.position(offset)
            for _ in range(5):
                pos = Position(rnd.randrange(-1, fresh.line_count + 2), rnd.randrange(-1, 12))
                assert index.offset(pos) == fresh.offset(pos)
            if step % 7 == 6:
                assert index.starts == fresh.starts  # the pending move applied
    assert shared > 1000  # most keystrokes patched nothing


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\nb", "a\r\nb\r\n", "a\rb", "a\r\n\rb\n", "中文\n😀\n\n", "x\x0cy\n"])
def test_a_line_index_given_the_parser_s_lines_counts_them_as_one_built_from_the_text(text):
    # (the count is read from the parser's lines, not from a count of the text's line breaks: ~0.8 ms a keystroke
    # in a 10,000-line file with CJK comments)
    from bprop_lsp.engine.parsing import split_lines
    from bprop_lsp.engine.text import LineIndex

    given = LineIndex(text, split_lines(text))
    assert given.line_count == len(LineIndex(text).starts) == LineIndex(text).line_count


def test_a_staticmethod_binding_is_noted_where_it_is_made():
    """BP005 stands at f's def (where MindSpore's messages about a bprop point); `bprop = staticmethod(f)` is what
    made it static, so the note names that line. The decorator form has no separate binding to note."""
    text = (
        "from mindspore import nn\n"
        "def _grad(x, out, dout):\n"
        "    return (dout,)\n"
        "class A(nn.Cell):\n"
        "    def construct(self, x):\n"
        "        return x\n"
        "    bprop = staticmethod(_grad)\n"
        "class B(nn.Cell):\n"
        "    def construct(self, x):\n"
        "        return x\n"
        "    @staticmethod\n"
        "    def bprop(x, out, dout):\n"
        "        return (dout,)\n"
    )
    a, b = [f for f in analyze(text).findings if f.code == "BP005"]
    assert a.span.start.line == 1 and [(r.span.start.line, r.message) for r in a.related] == [
        (6, "bound with staticmethod here")]
    assert b.span.start.line == 11 and b.related == ()
