"""engine.fixes: which fixes a fix-all pass applies, chosen in O(n log n) (issue 25, item 11). The choice is the
one the pairwise comparison made (kept here as the reference), and a second pass over many changes parses from
scratch instead of through parso's diff parser (whose copy of old nodes is quadratic in the changed blocks)."""
from hypothesis import given, settings, strategies as st

from bprop_lsp.checker import fix_all
from bprop_lsp.engine import parsing
from bprop_lsp.engine.fixes import _non_overlapping
from bprop_lsp.engine.model import Applicability, Edit, Finding, Fix, Position, Severity, Span


def _reference(findings, include_unsafe):
    """The pairwise choice and count fix_all made before (quadratic)."""
    chosen, taken = [], []
    for f in findings:
        if f.fix is None or not (f.fix.is_safe or include_unsafe):
            continue
        spans = [(e.span.start, e.span.end) for e in f.fix.edits]
        if any(not (b_end < a_start or a_end < b_start) for a_start, a_end in spans for b_start, b_end in taken):
            continue
        taken.extend(spans)
        chosen.extend(f.fix.edits)
    count = sum(1 for f in findings if f.fix and any(e in chosen for e in f.fix.edits))
    return chosen, count


positions = st.builds(Position, st.integers(0, 4), st.integers(0, 6))


@st.composite
def edits(draw):
    a, b = sorted([draw(positions), draw(positions)])
    return Edit(Span(a, b), draw(st.sampled_from(["", "x", "dout"])))


@st.composite
def findings(draw):
    fix = Fix("f", tuple(draw(st.lists(edits(), min_size=1, max_size=3))),
              draw(st.sampled_from([Applicability.SAFE, Applicability.UNSAFE])))
    return Finding(code="BP001", name="n", message="m", severity=Severity.ERROR,
                   span=Span(Position(0, 0), Position(0, 1)), url="", fix=fix if draw(st.integers(0, 5)) else None)


@settings(max_examples=400, deadline=None)
@given(st.lists(findings(), max_size=12), st.booleans())
def test_the_choice_is_the_pairwise_one(found, include_unsafe):
    assert _non_overlapping(found, include_unsafe) == _reference(found, include_unsafe)


def test_many_changes_parse_from_scratch(monkeypatch):
    """The second pass of a fix-all of 100 findings re-parses the whole file, not 100 blocks through the diff
    parser; a few changes still go through it."""
    updates = []
    real = parsing._PrefixSuffixDiffParser.update

    def counting(self, old_lines, new_lines, *rest):
        updates.append(len(new_lines))
        return real(self, old_lines, new_lines, *rest)

    monkeypatch.setattr(parsing._PrefixSuffixDiffParser, "update", counting)
    template = ("class MulAdd{i}(nn.Cell):\n    def construct(self, x, y):\n        return 2 * x + y\n"
                "    def bprop(self, x, y, out):\n        return 2 * out, out\n")
    many = "from mindspore import nn\n" + "".join(template.format(i=i) for i in range(100))
    doc = parsing.ParsedDocument()
    fixed, count = fix_all(many, doc=doc)
    assert count == 100 and updates == []
    assert doc.last_parse == "full"
    few = "from mindspore import nn\n" + "".join(template.format(i=i) for i in range(3))
    fix_all(few, doc=parsing.ParsedDocument())
    assert updates


def _collections_during(fn):
    """(automatic collections, all collections) while ``fn()`` runs, by the collector's own callbacks."""
    import gc

    seen = []

    def callback(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    gc.collect()
    gc.callbacks.append(callback)
    try:
        fn()
    finally:
        gc.callbacks.remove(callback)
    return seen


TEMPLATE = ("class MulAdd{i}(nn.Cell):\n    def construct(self, x, y):\n        return 2 * x + y\n"
            "    def bprop(self, x, y, out):\n        return 2 * out, out\n")


def test_fix_all_collects_once_per_pass():
    """The collector does not re-walk the growing trees while fix-all runs: one full collection per pass (two
    passes here), no automatic ones (there were hundreds for 300 findings)."""
    text = "from mindspore import nn\n" + "".join(TEMPLATE.format(i=i) for i in range(300))
    fix_all(text[:2000])  # (the rules and parso's grammar loaded first)
    seen = _collections_during(lambda: fix_all(text))
    assert seen == [2, 2], seen


def test_check_fix_of_a_large_file_collects_once(tmp_path, capsys):
    from bprop_lsp.cli import jobs
    from bprop_lsp.cli.main import main

    text = "from mindspore import nn\n" + "".join(TEMPLATE.format(i=i) for i in range(2200))
    assert len(text) >= jobs.LARGE_TEXT
    path = tmp_path / "model.py"
    path.write_text(text)
    fix_all(text[:2000])  # (the rules and parso's grammar loaded first)
    seen = _collections_during(lambda: main(["check", "--fix", "--quiet", "--isolated", str(path)]))
    assert "dout" in path.read_text()
    assert seen.count(2) <= 2 and len(seen) <= 10, seen  # (a few young ones reading and printing)


TORCH_STYLE = (
    "from mindspore import nn\n"
    "class Scale(nn.Cell):\n"
    "    def construct(self, x):\n"
    "        return x * 2\n"
    "    def bprop(self, x, 梯度):\n"
    "        return (梯度 * 2,)\n"
)


def test_alternative_fixes_of_one_parameter_list_are_never_both_applied():
    """BP001 appends `dout`, BP028 (unsafe) inserts `out` before `梯度` (read as the gradient): two repairs of one parameter list whose
    edits do not overlap. Both applied gave `(self, x, out, grad, dout)`, which MindSpore rejects (probe q13's
    fixed program failed in both modes); one of them is applied, and the next pass chains the gradient."""
    from bprop_lsp.checker import analyze

    safe, _ = fix_all(TORCH_STYLE)
    assert "def bprop(self, x, 梯度, dout):" in safe
    fixed, count = fix_all(TORCH_STYLE, include_unsafe=True)
    assert "def bprop(self, x, out, 梯度):" in fixed and count == 2
    assert not {f.code for f in analyze(fixed).findings} & {"BP001", "BP002", "BP028"}


def test_fix_all_never_leaves_a_bprop_with_too_many_parameters():
    """Over every labelled program with fixes: what fix-all (unsafe fixes included) writes has no BP002 the program
    did not have (two repairs of one def applied together add a parameter too many)."""
    from pathlib import Path

    from bprop_lsp.checker import analyze

    root = Path(__file__).parent / "fixtures"
    bad = []
    for path in sorted((root / "oracle" / "cases").glob("*.py")) + sorted((root / "probes" / "cases").glob("*.py")):
        text = path.read_bytes().decode("utf-8")
        before = analyze(text).findings
        if not any(f.fix for f in before):
            continue
        fixed, _ = fix_all(text, include_unsafe=True)
        if sum(f.code == "BP002" for f in analyze(fixed).findings) > sum(f.code == "BP002" for f in before):
            bad.append(path.name)
    assert bad == []


def test_no_parameter_fix_under_a_wraps_adapter_that_picks_its_arguments():
    """``@functools.wraps(fn) def adapter(self, *args): return fn(self, args[-1])``: GRAPH reads the wrapped def's
    signature, PYNATIVE calls it through the adapter with one argument. Adding the missing parameters satisfied
    GRAPH and broke PYNATIVE (probe p22_13's fixed program, run by verify_fixes_mindspore.py): BP001 stands
    without a fix there."""
    from pathlib import Path

    from bprop_lsp.checker import analyze

    text = (Path(__file__).parent / "fixtures" / "probes" / "cases" /
            "p22_13_functools_wraps_torch_style.py").read_text(encoding="utf-8")
    assert [(f.code, f.fix) for f in analyze(text).findings] == [("BP001", None)]
