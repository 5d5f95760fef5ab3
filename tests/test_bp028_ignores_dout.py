"""BP028 bprop-ignores-dout: against MindSpore-run probes (tests/fixtures/mindspore_probes, labels recorded by
run_probes.py under MindSpore 2.10 in GRAPH_MODE and PYNATIVE_MODE) and on the edges of what counts as a read."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from bprop_lsp.checker import analyze
from bprop_lsp.engine import Severity
from bprop_lsp.rules import RULES_BY_CODE
from bprop_lsp.engine.text import apply_edits

PROBES = Path(__file__).parent / "fixtures" / "mindspore_probes"
LABELS = json.loads((PROBES / "labels.json").read_text(encoding="utf-8"))
CASES = LABELS["probes"]


def bp028(code: str):
    return [f for f in analyze(code).findings if f.code == "BP028"]


def test_probe_labels_come_from_mindspore_and_cover_every_kind():
    assert LABELS["mindspore"] == "2.10.0"
    assert len(CASES) == len(list(PROBES.glob("p*.py")))
    observed = {c["observed"] for c in CASES}
    assert observed == {"ignores-dout", "reads-dout", "zero"}
    for case in CASES:
        assert case["expect_matches"], case["file"]
        assert case["GRAPH"]["status"] == case["PYNATIVE"]["status"] == "ok", case["file"]


@pytest.mark.parametrize("case", CASES, ids=[Path(c["file"]).stem for c in CASES])
def test_bp028_fires_exactly_where_mindspore_gradients_ignore_the_loss(case):
    """MindSpore printed the same non-zero gradients for loss*1 and loss*3 (dout ignored) in both modes: BP028
    warns at the bprop's def; where the gradients scale with the loss or are all zero it stays quiet."""
    text = (PROBES / case["file"]).read_text(encoding="utf-8")
    findings = bp028(text)
    if case["observed"] == "ignores-dout":
        assert len(findings) == 1, case["file"]
        finding = findings[0]
        assert finding.severity is Severity.WARNING
        def_line = next(i for i, line in enumerate(text.splitlines()) if "def " in line and "bprop" in line)
        assert finding.span.start.line == def_line
        for mode in ("GRAPH", "PYNATIVE"):
            assert case[mode]["matches_autodiff"] is False  # and the values are wrong, not just loss-independent
    else:
        assert findings == [], [f.message for f in findings]


def test_probe_messages_name_the_confusion():
    by_file = {c["file"]: c for c in CASES}
    assert by_file["p02_out_as_grad_output.py"]["observed"] == "ignores-dout"
    out_used = bp028((PROBES / "p02_out_as_grad_output.py").read_text(encoding="utf-8"))[0].message
    assert "never reads `dout`" in out_used and "it reads `out` (the forward output) — did you mean `dout`?" in out_used
    assert "PyTorch's grad_output" in out_used
    swapped = bp028((PROBES / "p03_torch_names_swapped.py").read_text(encoding="utf-8"))[0].message
    assert "never reads `out` (its last parameter: dout" in swapped
    assert "`grad_output` holds the forward output and `out` the incoming gradient" in swapped
    rebound_finding = bp028((PROBES / "p05_dout_reassigned.py").read_text(encoding="utf-8"))[0]
    rebound = rebound_finding.message
    assert "`dout` is overwritten before it is read" in rebound and "did you mean" not in rebound
    # The line overwriting dout is a related place (not a number in the message: a moved draft stays right).
    overwritten = [r for r in rebound_finding.related if "overwritten here" in r.message]
    assert [r.span.start.line + 1 for r in overwritten] == [12]
    custom = bp028((PROBES / "p04_custom_op_forgot_dout.py").read_text(encoding="utf-8"))[0].message
    assert custom.startswith("ops.Custom bprop square_bprop never reads `dout`")


def test_invalid_examples_point_at_the_bprop_name_and_the_dout_parameter():
    rule = RULES_BY_CODE["BP028"]
    for example in rule.invalid:
        finding = bp028(example.code)[0]
        lines = example.code.split("\n")
        line = next(i for i, text in enumerate(lines) if text.lstrip().startswith("def ") and "bprop" in text)
        name = lines[line].split("def ")[1].split("(")[0]
        last_param = lines[line].split(",")[-1].split(")")[0].strip()
        assert (finding.span.start.line, finding.span.end.line) == (line, line)
        assert lines[line][finding.span.start.column:finding.span.end.column] == name
        (related,) = finding.related
        assert lines[related.span.start.line][related.span.start.column:related.span.end.column] == last_param


CELL = """\
from mindspore import nn, ops
class C(nn.Cell):
    def construct(self, x, y):
        return x * y
    def bprop(self, x, y, out, dout):
{body}"""


def cell(body: str) -> str:
    return CELL.format(body=textwrap.indent(textwrap.dedent(body), " " * 8))


@pytest.mark.parametrize("body", [
    "return dout * y, dout * x\n",
    "g = lambda v: v * dout\nreturn g(y), g(x)\n",
    "def scale(v):\n    return v * dout\nreturn scale(y), scale(x)\n",
    "if x is None:\n    dout = 1\nreturn dout * y, dout * x\n",  # a conditional rebind may keep the incoming value
    "dout = dout * 2\nreturn dout * y, dout * x\n",
    "return ops.zeros_like(x), ops.zeros_like(y)\n",
    "return x * 0, 0\n",
    "return None, None\n",
    "zx = ops.ZerosLike()(x)\nreturn zx, ops.fill(ops.dtype(y), y.shape, 0)\n",
    "return self._zero_grads(x, y)\n",
    "return x + 1, y + 1\n",  # MindSpore's tutorial placeholder (oracle case 082)
    "dx = x + 1\ndy = y + 1\nreturn dx, dy\n",
    "raise NotImplementedError\n",
    "pass\n",
    "return locals()['dout'] * y, x\n",
    "return eval('dout') * y, x\n",
    "for i in range(2):\n    yield x\n",
], ids=["reads", "lambda", "nested-def", "conditional-rebind", "rebind-from-itself", "zeros-like", "times-zero", "none",
        "zeroslike-primitive-fill", "zero-helper", "tutorial-placeholder", "tutorial-placeholder-names", "raise", "pass",
        "locals", "eval", "generator"])
def test_quiet(body):
    assert bp028(cell(body)) == []


@pytest.mark.parametrize("body", [
    "return y, x\n",
    "return self.dout * y, x\n",  # an attribute named dout is not the parameter
    "return self.mul(x, y, dout=out)\n",  # nor a keyword argument named dout
    "del dout\nreturn y, x\n",
    "dout = ops.ones_like(out)\nreturn dout * y, dout * x\n",
    "dout: int = 1\nreturn dout * y, dout * x\n",
    "return ops.zeros_like(x), 2 * x\n",  # one input's gradient is zero, the other's is not
    "if x.sum() > 0:\n    return ops.zeros_like(x), ops.zeros_like(y)\nreturn y, x\n",
], ids=["local-derivative", "attribute", "keyword", "del", "ones", "annotated-rebind", "partly-zero", "one-branch"])
def test_fires(body):
    assert len(bp028(cell(body))) == 1


def test_quiet_on_varargs_and_wrong_arity_which_other_rules_report():
    varargs = "from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x\n" \
              "    def bprop(self, *args):\n        return (args[0],)\n"
    missing = "from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x\n" \
              "    def bprop(self, x, out):\n        return (x,)\n"
    assert bp028(varargs) == [] and bp028(missing) == []
    assert {f.code for f in analyze(missing).findings} == {"BP001"}


def test_exact_dout_out_swap_is_left_to_bp014():
    code = "from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x):\n        return x * 2\n" \
           "    def bprop(self, x, dout, out):\n        return (dout * 2,)\n"
    assert {f.code for f in analyze(code).findings} == {"BP014"}


def test_lambda_bprop_and_inherited_bprop():
    lam = "from mindspore import nn, ops\nclass C(nn.Cell):\n    def construct(self, x):\n        return ops.sin(x)\n" \
          "    bprop = lambda self, x, out, dout: (ops.cos(x),)\n"
    (finding,) = bp028(lam)
    assert finding.message.startswith("bprop of C never reads `dout`")
    inherited = "from mindspore import nn, ops\nclass Base(nn.Cell):\n    def construct(self, x):\n        return ops.sin(x)\n" \
                "    def bprop(self, x, out, dout):\n        return (ops.cos(x),)\nclass Child(Base):\n    pass\n"
    findings = bp028(inherited)
    assert len(findings) == 1 and findings[0].span.start.line == 4  # one finding at the one def, not one per class


def test_noqa_and_other_parameter_names():
    code = cell("return y, x\n").replace("out, dout", "fwd, grad_out")
    (finding,) = bp028(code)
    assert "never reads `grad_out` (its last parameter: dout, the incoming gradient)" in finding.message
    lines = code.split("\n")
    lines[finding.noqa_line] += "  # noqa: BP028"
    assert bp028("\n".join(lines)) == []


def test_quiet_when_defaulted_construct_inputs_leave_dout_position_open():
    code = "from mindspore import nn\nclass C(nn.Cell):\n    def construct(self, x, y=1):\n        return x * y\n" \
           "    def bprop(self, x, out, dout):\n        return (out,)\n"
    assert bp028(code) == []
    assert len(bp028(code.replace("def bprop(self, x, out, dout)", "def bprop(self, x, y, out, dout)")
                     .replace("return (out,)", "return out, out"))) == 1


# ------------------------------------------------------------------ MindSpore's own gradient tests (issue 22)
# Fixtures in our own words reproducing the deliberate patterns of tests/st/gradient/test_custom_cell_bprop.py,
# tests/ut/python/optimizer/test_auto_grad.py and the PYNATIVE hook tests of mindspore-ai/mindspore.

PYTEST_HEAD = "import numpy as np\nimport pytest\nfrom mindspore import nn, ops, Tensor\nfrom mindspore.ops import operations as P\n"


def fixture_cell(body: str, head: str = PYTEST_HEAD, construct: str = "return x * y") -> str:
    return head + "class C(nn.Cell):\n    def __init__(self):\n        super().__init__()\n        self.add = P.Add()\n" \
        f"    def construct(self, x, y):\n        {construct}\n    def bprop(self, x, y, out, dout):\n" \
        + textwrap.indent(textwrap.dedent(body), " " * 8)


@pytest.mark.parametrize("body", [
    "return 5 * x, 8 * y\n",  # hand-picked constants that tell the custom bprop from autodiff
    "return y, x\n",
    "dx = x + x\ndy = y + y\nreturn dx, dy\n",
    "return x * y, y + x\n",
    "k = Tensor(np.array([5.0], np.float32))\nmul = P.Mul()\nreturn mul(x, k), y\n",
    "dout = Tensor(np.ones([2, 2], np.float32))\nreturn dout, dout\n",  # a hook test overwriting dout
    "return out[1][0], y\n",
])
def test_quiet_on_deliberate_fixtures_of_a_test_module(body):
    assert bp028(fixture_cell(body)) == []
    # the same bodies outside a test module are the mistakes BP028 is for (the local derivative alone, ...)
    plain = fixture_cell(body, head=PYTEST_HEAD.replace("import pytest\n", ""))
    assert len(bp028(plain)) == 1


def test_quiet_in_a_test_function_without_a_test_framework_import():
    code = ("import numpy as np\nfrom mindspore import context, nn, ops, Tensor\n\n\ndef test_x():\n"
            "    context.set_context(mode=context.PYNATIVE_MODE)\n\n    class Net(nn.Cell):\n"
            "        def construct(self, x):\n            return ops.relu(x)\n\n        def bprop(self, x, out, dout):\n"
            "            return (5 * x,)\n\n    ops.GradOperation()(Net())(Tensor(np.ones(2, np.float32)))\n")
    assert bp028(code) == []
    assert len(bp028(code.replace("def test_x", "def run_x"))) == 1


@pytest.mark.parametrize("body", [
    "grads = grad_all(self.f)(x, y)\nreturn out[1][0], grads[1]\n",
    "grads = self.grad(x, y)\nreturn grads[0] * 2, grads[1] * 2\n",
    "g = ops.grad(self.f, grad_position=(0, 1))(x, y)\nreturn g\n",
])
def test_quiet_on_gradients_computed_inside_the_bprop_anywhere(body):
    head = "from mindspore import nn, ops\ngrad_all = ops.GradOperation(get_all=True)\n"
    assert bp028(fixture_cell(body, head=head)) == []


def test_add_placeholders_and_inputs_handed_back():
    head = "from mindspore import nn, ops\nfrom mindspore.ops import operations as P\n"
    assert bp028(fixture_cell("return self.add(5, x), self.add(y, 9)\n", head=head)) == []
    assert bp028(fixture_cell("return x, y\n", head=head)) == []
    assert len(bp028(fixture_cell("return self.add(x, y), y\n", head=head))) == 1


def test_torch_style_still_fires_in_a_test_module_with_a_fix_that_makes_the_chain():
    code = fixture_cell("return grad_output * y, grad_output * x\n").replace("out, dout", "grad_output, dout")
    (finding,) = bp028(code)
    assert "`grad_output`, which holds the forward output" in finding.message and "did you mean" not in finding.message
    assert finding.fix is not None and not finding.fix.is_safe
    fixed = apply_edits(code, finding.fix.edits)
    assert "def bprop(self, x, y, out, grad_output):" in fixed
    assert bp028(fixed) == [] and not [f for f in analyze(fixed).findings if f.code == "BP001"]


def test_the_hint_names_dout_only_where_out_is_read_like_a_gradient():
    sigmoid = cell("return out * (1 - out), y\n")
    (finding,) = bp028(sigmoid)
    assert "did you mean" not in finding.message  # a local derivative missing dout, not a mix-up of names
    indexed = cell("return out[0], y\n")
    assert "did you mean" not in bp028(indexed)[0].message
    mixed_up = cell("return out * y, out * x\n")
    assert "did you mean `dout`?" in bp028(mixed_up)[0].message
    assert bp028(mixed_up)[0].fix is None  # names out: which is meant is for the user to say


def test_quiet_on_a_module_level_fixture_a_test_function_uses():
    code = ("import numpy as np\nfrom mindspore import nn, ops, Tensor\n\n\nclass OneInput(nn.Cell):\n"
            "    def construct(self, x):\n        return ops.relu(x)\n\n    def bprop(self, x, out, dout):\n"
            "        return (5 * x,)\n\n\ndef test_one_input():\n"
            "    assert ops.GradOperation()(OneInput())(Tensor(np.ones(2, np.float32))) is not None\n")
    assert bp028(code) == []
    assert len(bp028(code.replace("def test_one_input", "def one_input"))) == 1


@pytest.mark.parametrize("old,new", [
    ("def test_one_input", "def one_input"),  # the statement naming the class is no test any more
    ("import numpy as np\n", "import numpy as np\nimport pytest\n"),  # a test framework imported
    ("    assert ops", "    assert OneInput and ops"),
])
def test_session_findings_follow_the_test_context(old, new):
    from bprop_lsp.checker import DocumentSession

    code = ("import numpy as np\nfrom mindspore import nn, ops, Tensor\n\n\nclass OneInput(nn.Cell):\n"
            "    def construct(self, x):\n        return ops.relu(x)\n\n    def bprop(self, x, out, dout):\n"
            "        return (5 * x,)\n\n\ndef test_one_input():\n"
            "    assert ops.GradOperation()(OneInput())(Tensor(np.ones(2, np.float32))) is not None\n")
    describe = lambda a: [(f.code, f.span, f.message, f.severity) for f in a.findings]  # noqa: E731
    with DocumentSession("bp028") as session:
        text = code.replace("def test_one_input", "def one_input") if old.startswith("import") else code
        for step in (text, text.replace(old, new), text):
            assert describe(session.analyse(step)) == describe(analyze(step, verify_fixes=False))


def test_torch_style_one_short_gets_the_chain_fix_beside_bp001s():
    """``bprop(self, x, top_grad)``: BP001 appends dout (top_grad then holds the forward output); BP028 offers,
    beside it, an unsafe fix inserting out before top_grad, and either way the chain ends up made."""
    code = ("from mindspore import nn, ops\nclass Sin(nn.Cell):\n    def construct(self, x):\n        return ops.sin(x)\n"
            "    def bprop(self, x, top_grad):\n        return (top_grad * ops.cos(x),)\n")
    findings = {f.code: f for f in analyze(code).findings}
    assert set(findings) == {"BP001", "BP028"}
    assert findings["BP001"].span == findings["BP028"].span
    chain = findings["BP028"].fix
    assert chain is not None and not chain.is_safe
    fixed = apply_edits(code, chain.edits)
    assert "def bprop(self, x, out, top_grad):" in fixed and analyze(fixed).findings == []
    appended = apply_edits(code, findings["BP001"].fix.edits)
    assert "def bprop(self, x, top_grad, dout):" in appended
    (after,) = analyze(appended).findings  # BP001's way: BP028 then says what is still wrong, with the chain fix
    assert after.code == "BP028" and "`top_grad`, which holds the forward output" in after.message
    assert "def bprop(self, x, out, top_grad):" in apply_edits(appended, after.fix.edits)


@pytest.mark.parametrize("signature", ["bprop(self, x, out)", "bprop(self, x, grad_output)", "bprop(self, x, fwd)"])
def test_one_short_left_to_bp001_when_its_fix_is_right(signature):
    body = "return (grad_output * ops.cos(x),)" if "grad_output" in signature else "return (ops.cos(x),)"
    code = ("from mindspore import nn, ops\nclass Sin(nn.Cell):\n    def construct(self, x):\n        return ops.sin(x)\n"
            f"    def {signature}:\n        {body}\n")
    assert {f.code for f in analyze(code).findings} == {"BP001"}


# ------------------------------------------------------------------ ops.Custom bprops in a test (issue 22)
# A Custom op's bprop is a plain function: the test context is where that function, or the ops.Custom(...) call
# taking it, stands (MindSpore's custom-op tests define both inside the test function), as for a Cell's class.

CUSTOM_IN_TEST = """\
import numpy as np
from mindspore import ops, Tensor


def test_custom_square_bprop():
    def square_bprop(x, out, dout):
        return (x * 4,)

    op = ops.Custom(lambda x: x * x, out_shape=lambda s: s, out_dtype=lambda t: t, func_type="pyfunc",
                    bprop=square_bprop)
    assert ops.GradOperation()(op)(Tensor(np.ones(2, np.float32))) is not None
"""

CUSTOM_CALLED_IN_TEST = """\
import numpy as np
from mindspore import ops, Tensor


def cube_bprop(x, out, dout):
    return (x * 3,)


def test_custom_cube_bprop():
    op = ops.Custom(lambda x: x * x * x, out_shape=lambda s: s, out_dtype=lambda t: t, func_type="pyfunc",
                    bprop=cube_bprop)
    assert ops.GradOperation()(op)(Tensor(np.ones(2, np.float32))) is not None
"""


@pytest.mark.parametrize("code", [CUSTOM_IN_TEST, CUSTOM_CALLED_IN_TEST], ids=["bprop-in-test", "custom-in-test"])
def test_quiet_on_a_custom_ops_fixture_in_a_test_function_without_a_test_framework_import(code):
    assert bp028(code) == []
    # the same program outside a test function is the mistake: the local derivative, dout never multiplied in
    (finding,) = bp028(code.replace("def test_custom", "def run_custom"))
    assert finding.message.startswith("ops.Custom bprop ") and "never reads `dout`" in finding.message


def test_torch_style_custom_bprop_still_fires_in_a_test_function():
    code = CUSTOM_IN_TEST.replace("(x, out, dout)", "(x, grad_output, dout)").replace("(x * 4,)",
                                                                                      "(grad_output * 2 * x,)")
    (finding,) = bp028(code)
    assert "`grad_output`, which holds the forward output" in finding.message and finding.fix is not None


# ------------------------------------------------------------------ more of a test's deliberate gradients
# Patterns of MindSpore's gradient tests (tests/st/pynative hook and high-order tests, the view/inplace and
# auto-monad tests), in our own programs: quiet in a test module, the mistake BP028 is for elsewhere.

MARKS_HEAD = ("import numpy as np\nfrom mindspore import nn, ops, Tensor\nfrom mindspore.ops import operations as P\n"
              "from tests.common.marks import level0\n")


@pytest.mark.parametrize("body", [
    "a = Tensor(np.full([2], 2.0, np.float32))\nb = Tensor(np.full([2], 3.0, np.float32))\nreturn a, b\n",
    "return (Tensor(1.5),) * 2\n",
    "return x * 2, y * 3\n",
    "k = Tensor(np.array([4.0], np.float32))\nreturn P.Mul()(x, k), y\n",
])
def test_quiet_on_hand_picked_gradients_in_a_module_importing_the_projects_test_helpers(body):
    assert bp028(fixture_cell(body, head=MARKS_HEAD)) == []
    assert len(bp028(fixture_cell(body, head=MARKS_HEAD.replace("from tests.common.marks import level0\n", "")))) == 1


def test_quiet_on_a_cell_that_a_helper_of_the_tests_builds_in_a_test_module():
    """A hook test's Cell is used by a helper function (not named test_...) that the test functions call: the
    module's test imports say it is a fixture; without them BP028 warns (the helper's callers are not read)."""
    code = MARKS_HEAD + (
        "class Scaled(nn.Cell):\n    def construct(self, x):\n        return ops.relu(x)\n"
        "    def bprop(self, x, out, dout):\n        return (P.Mul()(x, Tensor(np.array([6.0], np.float32))),)\n\n\n"
        "def check_scaled_gradient():\n    net = Scaled()\n    grad = ops.GradOperation()(net)(Tensor(np.ones(2, np.float32)))\n"
        "    assert np.allclose(grad.asnumpy(), 6.0)\n\n\n"
        "@level0\ndef test_scaled():\n    check_scaled_gradient()\n")
    assert bp028(code) == []
    assert len(bp028(code.replace("from tests.common.marks import level0\n", "").replace("@level0\n", ""))) == 1


def test_quiet_on_a_cell_built_in_a_method_of_a_test_class():
    code = ("from mindspore import nn, ops\n\n\nclass TestBpropFixtures:\n    def _net(self):\n"
            "        class Net(nn.Cell):\n            def construct(self, x):\n                return ops.relu(x)\n\n"
            "            def bprop(self, x, out, dout):\n                return (3 * x,)\n        return Net()\n\n"
            "    def test_net(self):\n        assert self._net() is not None\n")
    assert bp028(code) == []
    assert len(bp028(code.replace("class TestBpropFixtures", "class BpropFixtures"))) == 1


# ------------------------------------------------------------------ computed returns
# A return whose tuple is built (``grads + (dx,)``, ``(g,) * 2``, ``tuple([...])``) has no entries written out in
# the return itself: its gradients are read from what it is built of, never taken as zeros for having none.

@pytest.mark.parametrize("body", [
    "grads = (y,)\nreturn grads + (x,)\n",
    "grads = ()\ngrads += (y,)\ngrads += (x,)\nreturn grads\n",
    "return (ops.cos(x),) * 2\n",
    "return tuple([y, x])\n",
], ids=["concatenated", "augmented", "repeated", "converted"])
def test_fires_on_a_local_derivative_returned_as_a_built_tuple(body):
    (finding,) = bp028(cell(body))
    assert "never reads `dout`" in finding.message


@pytest.mark.parametrize("body", [
    "return (ops.zeros_like(x),) * 2\n",
    "grads = (ops.zeros_like(x),)\nreturn grads + (ops.zeros_like(y),)\n",
    "return (0,) * 2\n",
    "return tuple([ops.zeros_like(x), None])\n",
], ids=["repeated-zeros", "concatenated-zeros", "repeated-literal", "converted-zeros"])
def test_quiet_on_zero_gradients_returned_as_a_built_tuple(body):
    assert bp028(cell(body)) == []


def test_the_hint_reads_the_entries_of_a_built_tuple():
    (sigmoid,) = bp028(cell("g = (out * (1 - out),)\nreturn g + (y,)\n"))
    assert "did you mean" not in sigmoid.message  # a local derivative missing dout, not a mix-up of the names
    (mixed_up,) = bp028(cell("g = (out * y,)\nreturn g + (out * x,)\n"))
    assert "did you mean `dout`?" in mixed_up.message


@pytest.mark.parametrize("old,new", [
    ("def test_custom_cube_bprop", "def run_custom_cube_bprop"),  # the call taking the bprop is no test any more
    ("import numpy as np\n", "import numpy as np\nimport pytest\n"),  # a test framework imported
])
def test_session_findings_follow_the_test_context_of_a_custom_op(old, new):
    from bprop_lsp.checker import DocumentSession

    describe = lambda a: [(f.code, f.span, f.message, f.severity) for f in a.findings]  # noqa: E731
    with DocumentSession("bp028-custom") as session:
        text = CUSTOM_CALLED_IN_TEST.replace("def test_custom", "def run_custom") if old.startswith("import") \
            else CUSTOM_CALLED_IN_TEST
        for step in (text, text.replace(old, new), text):
            assert describe(session.analyse(step)) == describe(analyze(step, verify_fixes=False))
