"""Valid expressions hundreds or thousands of levels deep (issue 25, item 3): no finding is lost to a recursion.

parso's nodes found their positions, leaves and code by recursing one call per level (engine/parsing.py now
walks them in loops), so a bprop returning ``not not ... dout`` lost its BP001 and the CLI said "All checks
passed!". And a fix that cannot be built costs the fix, never the finding; the CLI's warning names the file.
"""
from __future__ import annotations

import pytest

from bprop_lsp.checker import DocumentSession, analyze, fix_all
from bprop_lsp.cli.main import main


def deep(kind: str, n: int, base: str = "dout", other: str = "x") -> str:
    """A valid Python expression ``n`` levels deep (CPython parses the 300-deep ones; parso every one)."""
    k = max(1, n // 5)
    return {
        "not": "not " * n + base,
        "neg": "-" * n + base,
        "cond": f"{base} if {other} else " * n + base,
        "pow": f"{other} ** " * n + base,
        "lambda": "lambda: " * n + base,
        "add": f"{other} + " * n + base,
        "and": f"{other} and " * n + base,
        "cmp": f"{other} < " * n + base,
        "attr": base + ".a" * n,
        "sub": base + "[0]" * n,
        "call": "f(" * n + base + ")" * n,
        "mix": f"not -(lambda: -{other} if {base} else " * k + base + ")" * k,
    }[kind]


KINDS = ["not", "neg", "cond", "pow", "lambda", "add", "and", "cmp", "attr", "sub", "call", "mix"]
HEAD = "import mindspore as ms\nfrom mindspore import nn, ops\n\n\n"
ONE = "class {c}(nn.Cell):\n    def construct(self, x):\n        return x\n\n"
TWO = "class {c}(nn.Cell):\n    def construct(self, x, y):\n        return x\n\n"


def shapes(kind: str, n: int) -> dict[str, str]:
    """rule code -> a Cell (``{c}``: its name) whose bprop gets that finding, the deep expression in its return."""
    e, ex = deep(kind, n), deep(kind, n, base="x")
    return {
        "BP001": ONE + f"    def bprop(self, x, out):\n        return ({e},)\n",
        "BP028": ONE + f"    def bprop(self, x, out, dout):\n        return ({ex},)\n",
        "BP021": TWO + f"    def bprop(self, x, y, out, dout):\n        return ({e},)\n",
        "BP022": ONE + f"    def bprop(self, x, out, dout):\n        g = {e}\n        return (g, g)\n",
    }


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("kind,n", [(kind, 300) for kind in KINDS]
                         + [(kind, 3000) for kind in ("not", "neg", "cond", "pow", "lambda", "mix")])
def test_the_cli_reports_bp001_for_a_deep_return(capsys, tmp_path, kind, n):
    path = tmp_path / f"deep_{kind}.py"
    path.write_text(HEAD + shapes(kind, n)["BP001"].format(c="Net"))
    code, out, err = _run(capsys, "check", "--jobs", "1", "--output-format", "concise", str(path))
    assert code == 1, (out, err)
    assert "BP001" in out
    assert "failed" not in err and "could not be built" not in err, err
    code, out, err = _run(capsys, "check", "--jobs", "1", "--fix", str(path))
    assert "dout" in path.read_text().split("def bprop(")[1].split(")")[0], err  # the fix applied


@pytest.mark.parametrize("kind", ["not", "neg", "cond", "pow", "lambda", "mix"])
def test_every_rule_reads_a_deep_expression_as_it_reads_a_shallow_one(kind, monkeypatch):
    """The findings of each shape, 600 levels deep (parso's walks took two calls a level: past Python's limit of
    1000), in a one-off analysis (fixes checked) and in a session whose memo stands in, equal those of the same
    shape one level deep; fix-all ends."""
    for code, cell in shapes(kind, 600).items():
        text = HEAD + cell.format(c="Net")
        shallow = HEAD + shapes(kind, 1)[code].format(c="Net")
        found = analyze(text)
        assert code in {f.code for f in found.findings}, (kind, code)
        assert not found.failures
        assert sorted(f.code for f in found.findings) == sorted(f.code for f in analyze(shallow).findings)
        assert [f.fix is not None for f in found.findings] == [f.fix is not None for f in analyze(shallow).findings]
        many = HEAD + "".join(cell.format(c=f"Net{i}") + "\n\n" for i in range(4))
        with DocumentSession("deep") as session:
            session.analyse(many)
            edited = many.replace("class Net3(", "class Net3b(")
            incremental = session.verify(session.analyse(edited))
            assert session._doc.cell_memo.reused > 0
            assert [(f.code, f.span, f.fix) for f in incremental.findings] == \
                [(f.code, f.span, f.fix) for f in analyze(edited).findings]
        fix_all(text)


def test_a_fix_that_cannot_be_built_costs_the_fix_not_the_finding(capsys, tmp_path, monkeypatch):
    """A fix whose building raises (here made to, in BP001's parameter edits): the finding stands without a fix,
    and the CLI's warning names the file."""
    from bprop_lsp.rules import _signature

    def broken(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(_signature, "insert_after", broken)
    path = tmp_path / "net.py"
    path.write_text(HEAD + shapes("not", 1)["BP001"].format(c="Net"))
    found = analyze(path.read_text())
    assert [(f.code, f.fix) for f in found.findings] == [("BP001", None)]
    assert found.failures == ["the fix of BP001 could not be built (RecursionError); BP001 is reported without it"]
    code, out, err = _run(capsys, "check", "--jobs", "1", "--output-format", "concise", str(path))
    assert code == 1 and "BP001" in out
    assert f"bprop-lsp: warning: {path}: the fix of BP001 could not be built" in err


def test_a_rule_whose_fixes_raise_is_run_again_without_them(capsys, tmp_path, monkeypatch):
    """Any rule: when it raises with fixes wanted, it runs again without them (``want_fixes`` off); its findings
    stand, without fixes, and the warning names the file."""
    from bprop_lsp.rules.bp001_missing_params import MissingParams

    real = MissingParams.check

    def check(self, ctx):
        if ctx.want_fixes:
            raise ValueError("a fix we cannot build")
        yield from real(self, ctx)

    monkeypatch.setattr(MissingParams, "check", check)
    path = tmp_path / "net.py"
    path.write_text(HEAD + shapes("not", 1)["BP001"].format(c="Net"))
    code, out, err = _run(capsys, "check", "--jobs", "1", "--output-format", "concise", str(path))
    assert code == 1 and "BP001" in out
    assert f"bprop-lsp: warning: {path}: the fix of BP001 could not be built (ValueError)" in err


def test_a_rule_that_raises_is_named_with_the_file(capsys, tmp_path, monkeypatch):
    from bprop_lsp.rules.bp001_missing_params import MissingParams

    def check(self, ctx):
        raise RuntimeError("a bug")
        yield

    monkeypatch.setattr(MissingParams, "check", check)
    path = tmp_path / "net.py"
    path.write_text(HEAD + shapes("not", 1)["BP001"].format(c="Net"))
    code, out, err = _run(capsys, "check", "--jobs", "1", str(path))
    assert f"bprop-lsp: warning: {path}: rule BP001 failed on this input (RuntimeError); its findings are dropped" in err


def test_parsos_tree_walks_give_parsos_answers():
    """The loops installed on parso's nodes answer as parso's own recursive walks, on every node of every oracle
    case and of this package's sources."""
    from pathlib import Path

    from parso.tree import BaseNode

    from bprop_lsp.engine.parsing import _PARSO_WALKS, parse_text

    root = Path(__file__).resolve().parents[1]
    files = sorted((root / "tests" / "fixtures" / "oracle" / "cases").glob("*.py"))[::6]
    files += [root / "server" / "bprop_lsp" / "engine" / name for name in ("cell_runs.py", "tracked.py", "query.py", "parsing.py")]
    checked = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        for source in (text, text[: len(text) // 2]):  # (the half: error nodes)
            module = parse_text(source)
            assert module.get_code() == source
            stack = [module]
            while stack:
                node = stack.pop()
                if not isinstance(node, BaseNode):
                    continue
                stack.extend(node.children)
                assert node.start_pos == _PARSO_WALKS["start_pos"].fget(node)
                assert node.end_pos == _PARSO_WALKS["end_pos"].fget(node)
                assert node.get_first_leaf() is _PARSO_WALKS["get_first_leaf"](node)
                assert node.get_last_leaf() is _PARSO_WALKS["get_last_leaf"](node)
                for prefix in (True, False):
                    assert node.get_code(prefix) == _PARSO_WALKS["_get_code_for_children"](
                        node, node.children, prefix)
                assert node.get_start_pos_of_prefix() == _PARSO_WALKS["get_start_pos_of_prefix"](node)
                checked += 1
            lines = source.splitlines()
            for line in range(1, len(lines) + 1, 7):
                for column in (0, 4):
                    if (line, column) <= module.end_pos:
                        for prefixes in (True, False):
                            assert module.get_leaf_for_position((line, column), prefixes) is \
                                _PARSO_WALKS["get_leaf_for_position"](module, (line, column), prefixes)
    assert checked > 10_000


def test_the_memo_path_keeps_a_deep_file_s_findings(monkeypatch):
    text = HEAD + shapes("not", 3000)["BP001"].format(c="Net")
    with DocumentSession("deep") as session:
        assert "BP001" in {f.code for f in session.analyse(text).findings}
        assert "BP001" in {f.code for f in session.analyse(text.replace("return x\n", "return x + 1\n")).findings}



def test_a_name_bound_to_itself_ends_bp024_s_walk(capsys, tmp_path):
    """``t = t`` then ``net(t)``: BP024's "is the argument a Tensor" followed the name for ever (RecursionError:
    the rule's findings dropped for the file)."""
    path = tmp_path / "cycle.py"
    path.write_text("from mindspore import nn, ops\nt = t\n\nclass Net(nn.Cell):\n    def construct(self, x):\n"
                    "        return x\n\n    def bprop(self, x, out, dout):\n        return (1,)\n\nnet = Net()\nnet(t)\n")
    assert not analyze(path.read_text()).failures
    code, out, err = _run(capsys, "check", "--jobs", "1", str(path))
    assert "failed" not in err, err


def test_a_target_nested_deeper_than_python_recurses():
    """A bprop assigning to a tuple target 600 levels deep (BP020/BP021's walk over the names it binds)."""
    target = "(" * 600 + "a," + ")," * 599 + ")"
    text = HEAD + ONE.format(c="Net") + f"    def bprop(self, x, out, dout):\n        {target} = dout\n" \
        "        return (a,)\n"
    assert not analyze(text).failures
