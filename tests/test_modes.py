"""The mode a GRAPH-only finding is judged by is the one in effect where its Cell runs, along the file's code paths
(engine/modes.py; bprop-rules.md, further behaviours 30, 31, 43): an error only where GRAPH is known to run it.
Labelled by MindSpore: tests/fixtures/probes/cases/p51-p54 (test functions with their own ``class Net``, a helper,
``@jit``); the edits through a DocumentSession must give the severities a fresh analysis gives."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bprop_lsp.checker import DocumentSession, analyze
from bprop_lsp.engine import Severity


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


HEAD = dedent("""
    import numpy as np
    import mindspore as ms
    from mindspore import context, nn, Tensor, Parameter
    from mindspore.ops import composite as C

    grad_all = C.GradOperation(get_all=True)
    """)


def param_net(name: str = "Net", indent: str = "    ") -> str:
    """A Cell whose bprop reads its Parameter (BP030: GRAPH_MODE only; frozen, so that BP031 does not apply)."""
    return textwrap.indent(dedent(f"""
        class {name}(nn.Cell):
            def __init__(self):
                super().__init__()
                self.k = Parameter(Tensor(np.ones(1, np.float32)), name="k", requires_grad=False)

            def construct(self, x):
                return x * self.k

            def bprop(self, x, out, dout):
                return (dout * self.k,)
        """), indent)


def bp030(text: str) -> list[tuple[int, str]]:
    """(1-based def line, severity) of each BP030 finding."""
    return [(f.span.start.line + 1, f.severity.value) for f in analyze(text).findings if f.code == "BP030"]


def severities(text: str) -> list[str]:
    return [s for _line, s in bp030(text)]


def test_each_test_function_governs_its_own_class_net():
    """MindSpore's test_auto_grad.py pattern: every test function sets its mode and defines its own class Net."""
    text = HEAD + dedent("""
        def test_graph():
            context.set_context(mode=context.GRAPH_MODE)
        {net}
            grad_all(Net())(Tensor(np.ones(2, np.float32)))


        def test_pynative():
            context.set_context(mode=context.PYNATIVE_MODE)
        {net}
            grad_all(Net())(Tensor(np.ones(2, np.float32)))
        """).format(net=param_net())
    # The PYNATIVE function's own Net runs nowhere else: nothing is said of it (a finding MindSpore never raises
    # on the one path that runs that class); the GRAPH function's is an error.
    pynative_line = text.splitlines().index("def test_pynative():") + 1
    assert [(line < pynative_line, s) for line, s in bp030(text)] == [(True, "error")]
    swapped = text.replace("GRAPH_MODE", "@@").replace("PYNATIVE_MODE", "GRAPH_MODE").replace("@@", "PYNATIVE_MODE")
    assert [(line < pynative_line, s) for line, s in bp030(swapped)] == [(False, "error")]


def test_a_module_level_class_known_to_run_in_pynative_only_keeps_an_info():
    """A module-level class may be imported and run elsewhere in GRAPH: the GRAPH-only finding stays, as info."""
    text = HEAD + param_net("Net", "") + dedent("""

        def test_pynative():
            context.set_context(mode=context.PYNATIVE_MODE)
            grad_all(Net())(Tensor(np.ones(2, np.float32)))
        """)
    assert severities(text) == ["info"]


def test_a_class_named_like_one_mentioned_elsewhere_is_not_run_there():
    """The old substring match: ``Net`` inside ``GradNet`` or another function's own ``Net`` is not this Net."""
    text = HEAD + "context.set_context(mode=context.GRAPH_MODE)\n" + param_net("Net", "") + dedent("""

        def test_pynative():
            context.set_context(mode=context.PYNATIVE_MODE)
            grad_all(Net())(Tensor(np.ones(2, np.float32)))


        def test_graph_other():
            context.set_context(mode=context.GRAPH_MODE)

            class Net(nn.Cell):
                def construct(self, x):
                    return x

            class GradNet(nn.Cell):
                def construct(self, x):
                    return x
            grad_all(GradNet())(Net()(Tensor(1.0)))
        """)
    assert severities(text) == ["info"]


def test_the_mode_reset_after_the_run_does_not_count():
    """test_custom_cell_bprop.py's PYNATIVE tests set PYNATIVE, run, then put GRAPH back for the next test."""
    text = HEAD + "context.set_context(mode=context.GRAPH_MODE)\n\n\n" + dedent("""
        def test_pynative():
            context.set_context(mode=context.PYNATIVE_MODE)
        {net}
            out = grad_all(Net())(Tensor(np.ones(2, np.float32)))
            assert out is not None
            context.set_context(mode=context.GRAPH_MODE)


        def test_after():
            pass
        """).format(net=param_net())
    assert severities(text) == []  # run in PYNATIVE only (an error if the reset were taken for the run's mode)


def test_helpers_take_the_mode_of_their_callers():
    helper = HEAD + "ms.set_context(mode=ms.GRAPH_MODE)\n" + param_net("Scale", "") + dedent("""

        def _run(net):
            return grad_all(net)(Tensor(np.ones(2, np.float32)))


        def _check():
            net = Scale()
            return _run(net)


        def test_pynative_a():
            ms.set_context(mode=ms.PYNATIVE_MODE)
            _check()


        def test_pynative_b():
            ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
            _check()
        """)
    assert severities(helper) == ["info"]
    both = helper + "\n\ndef test_graph():\n    ms.set_context(mode=ms.GRAPH_MODE)\n    _check()\n"
    assert severities(both) == ["error"]  # one caller runs it in GRAPH: it fails there


def test_module_level_mode_and_uncalled_functions():
    graph = HEAD + "ms.set_context(mode=ms.GRAPH_MODE)\n" + param_net("Scale", "") + dedent("""

        def test_scale():
            grad_all(Scale())(Tensor(np.ones(2, np.float32)))
        """)
    assert severities(graph) == ["error"]  # a test function starts in the mode the module leaves
    assert severities(graph.replace("GRAPH_MODE", "PYNATIVE_MODE")) == ["info"]
    leaking = graph + "\n\ndef test_switch():\n    ms.set_context(mode=ms.PYNATIVE_MODE)\n"
    assert severities(leaking) == ["warning"]  # another test leaves PYNATIVE behind: the order decides
    unused = HEAD + "ms.set_context(mode=ms.GRAPH_MODE)\n" + param_net("Scale", "")
    assert severities(unused) == ["error"]  # used by an importer: the module's mode
    nothing = HEAD + param_net("Scale", "")
    assert severities(nothing) == ["warning"]


def test_a_point_of_the_module_takes_the_calls_before_it():
    text = HEAD + param_net("Scale", "") + dedent("""
        ms.set_context(mode=ms.PYNATIVE_MODE)
        net = Scale()
        print(grad_all(net)(Tensor(np.ones(2, np.float32))))
        ms.set_context(mode=ms.GRAPH_MODE)
        """)
    assert severities(text) == ["info"]
    main = HEAD + param_net("Scale", "") + dedent("""

        def main():
            print(grad_all(Scale())(Tensor(np.ones(2, np.float32))))


        if __name__ == "__main__":
            ms.set_context(mode=ms.GRAPH_MODE)
            main()
        """)
    assert severities(main) == ["error"]
    assert severities(main.replace("GRAPH_MODE", "PYNATIVE_MODE")) == ["info"]


def test_what_the_file_does_not_tell_stays_unknown():
    chosen = HEAD + param_net("Scale", "") + dedent("""

        def main(mode):
            ms.set_context(mode=mode)
            print(grad_all(Scale())(Tensor(np.ones(2, np.float32))))
        """)
    assert severities(chosen) == ["warning"]
    conditional = HEAD + "ms.set_context(mode=ms.PYNATIVE_MODE)\n" + param_net("Scale", "") + dedent("""

        def main(graph):
            if graph:
                ms.set_context(mode=ms.GRAPH_MODE)
            print(grad_all(Scale())(Tensor(np.ones(2, np.float32))))
        """)
    assert severities(conditional) == ["warning"]
    branches = HEAD + param_net("Scale", "") + dedent("""

        def main(graph):
            if graph:
                ms.set_context(mode=ms.GRAPH_MODE)
            else:
                ms.set_context(mode=ms.PYNATIVE_MODE)
                print(grad_all(Scale())(Tensor(np.ones(2, np.float32))))
        """)
    assert severities(branches) == ["info"]  # the GRAPH branch excludes the run


def test_jit_functions_follow_graph_rules():
    jit = HEAD + "ms.set_context(mode=ms.PYNATIVE_MODE)\n" + param_net("Scale", "") + dedent("""

        @ms.jit
        def step(x):
            return grad_all(Scale())(x)
        """)
    assert severities(jit) == ["error"]
    passed = HEAD + "ms.set_context(mode=ms.PYNATIVE_MODE)\n" + param_net("Scale", "") + dedent("""

        @ms.jit
        def step(net, x):
            return grad_all(net)(x)


        def test_step():
            step(Scale(), Tensor(np.ones(2, np.float32)))
        """)
    assert severities(passed) == ["error"]
    elsewhere = passed.replace("step(Scale(), ", "grad_all(Scale())(")
    assert severities(elsewhere) == ["info"]  # @jit elsewhere does not switch the Cell's mode (item 31)


def test_a_cell_inside_another_runs_where_the_outer_one_does():
    text = HEAD + "context.set_context(mode=context.GRAPH_MODE)\n" + param_net("Inner", "") + dedent("""

        class Outer(nn.Cell):
            def __init__(self):
                super().__init__()
                self.inner = Inner()

            def construct(self, x):
                return self.inner(x)


        class Sub(Outer):
            pass


        def test_pynative():
            context.set_context(mode=context.PYNATIVE_MODE)
            grad_all(Sub())(Tensor(np.ones(2, np.float32)))
        """)
    assert severities(text) == ["info"]


def test_bprop_debug_in_a_helper_of_pynative_tests_is_no_error():
    """The hook tests: a helper sets ``bprop_debug`` (BP050, GRAPH only); each test sets PYNATIVE and calls it."""
    text = HEAD + dedent("""
        class WithBprop(nn.Cell):
            def construct(self, x):
                return x * 2

            def bprop(self, x, out, dout):
                return (dout * 2,)


        def record_grad():
            net = WithBprop()
            net.bprop_debug = True
            return grad_all(net)(Tensor(np.ones(2, np.float32)))


        def test_record_grad_cpu():
            context.set_context(mode=context.PYNATIVE_MODE, device_target="CPU")
            record_grad()
        """)
    found = [(f.code, f.severity) for f in analyze(text).findings]
    assert found == [("BP050", Severity.INFO)]
    graph = text.replace("PYNATIVE_MODE", "GRAPH_MODE")
    assert [(f.code, f.severity) for f in analyze(graph).findings] == [("BP050", Severity.ERROR)]


def _describe(analysis) -> list:
    return [(f.code, f.span, f.message, f.severity) for f in analysis.findings]


SESSION_TEXT = HEAD + "ms.set_context(mode=ms.GRAPH_MODE)\n\n\n" + dedent("""
    def test_a():
        ms.set_context(mode=ms.GRAPH_MODE)
    {net}
        grad_all(Net())(Tensor(np.ones(2, np.float32)))


    def helper():
        return grad_all(Free())(Tensor(np.ones(2, np.float32)))


    def test_b():
        ms.set_context(mode=ms.PYNATIVE_MODE)
        helper()
    """).format(net=param_net()) + "\n\n" + param_net("Free", "")


@pytest.mark.parametrize("edits", [
    [("    ms.set_context(mode=ms.GRAPH_MODE)\n    class Net", "    ms.set_context(mode=ms.PYNATIVE_MODE)\n    class Net"),
     ("    ms.set_context(mode=ms.PYNATIVE_MODE)\n    class Net", "    ms.set_context(mode=ms.GRAPH_MODE)\n    class Net")],
    [("    ms.set_context(mode=ms.PYNATIVE_MODE)\n    helper()", "    ms.set_context(mode=ms.GRAPH_MODE)\n    helper()"),
     ("    ms.set_context(mode=ms.GRAPH_MODE)\n    helper()", "    ms.set_context(mode=ms.PYNATIVE_MODE)\n    helper()")],
    [("    helper()\n", "    pass\n"), ("    pass\n", "    helper()\n")],  # the only caller goes and comes back
    [("    ms.set_context(mode=ms.GRAPH_MODE)\n    class Net", "    class Net"),  # test_a takes the module's mode
     ("ms.set_context(mode=ms.GRAPH_MODE)\n\n\ndef test_a", "ms.set_context(mode=ms.PYNATIVE_MODE)\n\n\ndef test_a"),
     ("ms.set_context(mode=ms.PYNATIVE_MODE)\n\n\ndef test_a", "ms.set_context(mode=ms.GRAPH_MODE)\n\n\ndef test_a")],
    [("\n\n" + param_net("Free", ""), ""),  # the class moves into test_b, then back
     ("def test_b():\n", "def test_b():\n" + param_net("Free")),
     ("def test_b():\n" + param_net("Free"), "def test_b():\n"),
     ("    helper()\n", "    helper()\n\n\n" + param_net("Free", ""))],
], ids=["test-function-mode", "caller-mode", "caller-removed", "module-mode", "class-moved"])
def test_session_severities_equal_a_fresh_analysis_after_each_edit(edits):
    with DocumentSession("modes") as session:
        text = SESSION_TEXT
        first = _describe(session.analyse(text))
        assert first == _describe(analyze(text, verify_fixes=False))
        seen = {tuple(s for c, _span, _m, s in first if c == "BP030")}
        for old, new in edits:
            assert old in text, old
            text = text.replace(old, new, 1)
            incremental = _describe(session.analyse(text))
            assert incremental == _describe(analyze(text, verify_fixes=False)), text
            seen.add(tuple(s for c, _span, _m, s in incremental if c == "BP030"))
        assert len(seen) >= 2, seen  # some edit changed a severity


def test_a_result_used_after_the_mode_is_put_back_does_not_run_the_cell():
    text = HEAD + "context.set_context(mode=context.GRAPH_MODE)\n\n\n" + dedent("""
        def test_pynative():
            context.set_context(mode=context.PYNATIVE_MODE)
        {net}
            net = Net()
            grad_net = GradNet(net)
            out = grad_net(Tensor(np.ones(2, np.float32)))
            context.set_context(mode=context.GRAPH_MODE)
            assert out is not None


        class GradNet(nn.Cell):
            def __init__(self, net):
                super().__init__()
                self.net = net

            def construct(self, x):
                return grad_all(self.net)(x)
        """).format(net=param_net())
    assert severities(text) == []  # the local Net ran in PYNATIVE only
    kept = text.replace("    assert out is not None\n", "    assert grad_net(Tensor(np.ones(2, np.float32)))\n")
    assert severities(kept) == ["error"]  # the network itself run again in GRAPH


def test_a_helper_that_sets_the_mode_counts_where_it_is_called():
    text = HEAD + "ms.set_context(mode=ms.GRAPH_MODE)\n" + param_net("Scale", "") + dedent("""

        def _use_pynative():
            ms.set_context(mode=ms.PYNATIVE_MODE)


        def test_scale():
            _use_pynative()
            grad_all(Scale())(Tensor(np.ones(2, np.float32)))
        """)
    assert severities(text) == ["info"]
    later = text.replace("    _use_pynative()\n    grad_all(Scale())(Tensor(np.ones(2, np.float32)))\n",
                         "    grad_all(Scale())(Tensor(np.ones(2, np.float32)))\n    _use_pynative()\n")
    assert severities(later) == ["error"]


MEMO_TEXT = SESSION_TEXT + "\n\ndef unrelated(x):\n    y = x + 1\n    return y\n"


@pytest.mark.parametrize("edits", [
    [("y = x + 1", "y = x + 2"), ("y = x + 2", "y = x + 1")],  # nothing the modes were read from: read back
    [("    return y\n", "    return grad_all(Free())(y)\n"), ("    return grad_all(Free())(y)\n", "    return y\n")],
    [("    return y\n", "    return grad_all(Net())(y)\n"), ("y = x + 1", "y = x + 3")],  # a name never used
    [("    helper()\n", "    helpers()\n"), ("    helpers()\n", "    helper()\n")],  # the caller of the helper
    [("def helper():", "def helper_():"), ("def helper_():", "def helper():")],
    [("def test_b():", "def tst_b():"), ("def tst_b():", "def test_b():")],
    [("class Free(nn.Cell)", "class Free(Base)"), ("def unrelated(x):", "class Base(nn.Cell):\n    pass\n\n\n"
                                                   "def unrelated(x):")],
    [("import numpy as np\n", "import numpy as np\n\n"), ("import numpy as np\n\n", "import numpy as np\n")],
    [("    y = x + 1\n", "    y = x + 1\n\n"), ("    y = x + 1\n\n", "    y = x + 1\n")],  # (below the Cells)
    [("import numpy as np\n", "import numpy as np\nFree()\n"), ("    helper()\n", "\n    helper()\n"),
     ("import numpy as np\nFree()\n", "import numpy as np\n")],  # a use comes and goes with lines
    [("import numpy as np\n", "import numpy as np\n\n\ndef test_c():\n    Net()\n\n"),
     ("    return y\n", "    return y\n\n\n\n")],
    [("def test_b():\n    ms.set_context(mode=ms.PYNATIVE_MODE)\n    helper()\n",
      "def test_b():\n    ms.set_context(mode=ms.PYNATIVE_MODE)\n\n    helper()\n")],
    [("\n\ndef unrelated(x):\n    y = x + 1\n    return y\n", ""),  # a statement goes, then comes back above
     ("def helper():", "def unrelated(x):\n    y = x + 1\n    return y\n\n\ndef helper():")],
], ids=["unrelated", "use-added", "other-name", "caller-renamed", "helper-renamed", "test-renamed", "base",
        "lines-above", "lines-below", "use-with-lines", "test-with-lines", "mode-with-lines", "statement-moved"])
def test_the_mode_memo_reads_back_only_what_an_edit_cannot_change(edits):
    with DocumentSession("mode memo") as session:
        text = MEMO_TEXT
        assert _describe(session.analyse(text)) == _describe(analyze(text, verify_fixes=False))
        for old, new in edits:
            assert old in text, old
            text = text.replace(old, new, 1)
            incremental = _describe(session.analyse(text))
            assert incremental == _describe(analyze(text, verify_fixes=False)), text
        memo = session._doc.mode_memo
        assert memo.asked
        if edits[0][0] in ("y = x + 1", "import numpy as np\n") and len(edits) == 2:
            # (the edits replaced a statement that names nothing read, or moved every statement)
            assert memo.reused == memo.asked


def test_the_mode_memo_sees_statements_change_places():
    a, b = "\n\nms.set_context(mode=ms.GRAPH_MODE)\n", "\n\nms.set_context(mode=ms.PYNATIVE_MODE)\n"
    body = HEAD + a + "\n\n" + param_net("Lone", "") + b
    swapped = HEAD + b + "\n\n" + param_net("Lone", "") + a
    with DocumentSession("mode memo") as session:
        for text in (body, swapped, body):
            assert _describe(session.analyse(text)) == _describe(analyze(text, verify_fixes=False)), text
    assert severities(body) != severities(swapped)  # (the mode the module leaves decides)


# ------------------------------------------------------------ what pytest runs around the tests (setup_module)

_PYTEST_PROBES = Path(__file__).parent / "fixtures" / "pytest_probes"


def _pytest_probe_cases():
    import json

    return json.loads((_PYTEST_PROBES / "labels.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", _pytest_probe_cases(), ids=lambda c: Path(c["file"]).stem)
def test_setup_module_sets_the_mode_every_test_starts_in(case):
    """pytest runs ``setup_module`` after the module's statements and before its tests: the mode it sets is the one
    each test starts in (labels: scripts/run_pytest_probes.py, MindSpore 2.10 under pytest — GRAPH: the test
    fails on the Parameter in the bprop; PYNATIVE: it passes). Before, the setup counted as one more uncalled
    function changing the mode, so the mode was unknown and BP030 only a warning."""
    text = (_PYTEST_PROBES / case["file"]).read_text(encoding="utf-8")
    errors = [f for f in analyze(text).findings if f.severity is Severity.ERROR]
    failed = any(t["status"] == "error" for t in case["tests"])
    assert [f.code for f in errors] == (["BP030"] if failed else [])
    if not failed:
        assert not [f for f in analyze(text).findings if f.code == "BP030" and f.severity is Severity.WARNING]
