"""One finding per mistake (issue 22): a ``def`` with one mistake gets one finding, related facts in its notes.

BP030 (a Parameter read in the bprop: GRAPH rejects it) and BP031 (the cell's Parameter gets a zero gradient) are
one mistake, a Parameter owned by a custom-bprop cell, with one remedy: pass it in as a construct input. Where both
apply to one ``def`` the finding of the higher severity stays and the other becomes a note; findings that are
separate mistakes (BP028: dout never read) stay separate."""
from __future__ import annotations

import textwrap

from bprop_lsp.checker import DocumentSession, analyze
from bprop_lsp.engine import Settings, Severity

CELL = textwrap.dedent("""\
    import numpy as np
    import mindspore as ms
    from mindspore import nn, Tensor, Parameter

    ms.set_context(mode=ms.{mode})


    class Scale(nn.Cell):
        def __init__(self):
            super().__init__()
            self.k = Parameter(Tensor(np.ones(1, np.float32)), name="k")

        def construct(self, x):
            return x * self.k

        def bprop(self, x, out, dout):{noqa}
            return ({grad},)


    net = Scale()
    print(ms.grad(net, 0, weights=net.trainable_params())(Tensor(np.ones(2, np.float32))))
    """)


def cell(mode="GRAPH_MODE", noqa="", grad="dout * self.k") -> str:
    return CELL.format(mode=mode, noqa=noqa, grad=grad)


def test_graph_one_bp030_error_with_bp031_as_a_note():
    findings = analyze(cell()).findings
    assert [(f.code, f.severity) for f in findings] == [("BP030", Severity.ERROR)]
    notes = [r.message for r in findings[0].related]
    assert any(n.startswith("also BP031") and "silently zero" in n for n in notes), notes
    assert any(n == "self.k used here" for n in notes)


def test_pynative_one_bp031_warning_with_bp030_as_a_note():
    findings = analyze(cell("PYNATIVE_MODE")).findings
    assert [(f.code, f.severity) for f in findings] == [("BP031", Severity.WARNING)]
    assert any(r.message.startswith("also BP030") and "[fails in GRAPH_MODE]" in r.message for r in findings[0].related)


def test_input_gradients_only_leave_bp031_out():
    """A file that takes gradients but asks for no weight's (no ``weights=``, optimizer, ``get_by_list`` …) never
    sees the zero Parameter gradients (probe q25): PYNATIVE gives no BP031, GRAPH no BP031 note."""
    only_inputs = "print(ms.grad(Scale())(Tensor(np.ones(2, np.float32))))\n"
    for mode, expected in (("PYNATIVE_MODE", [("BP030", Severity.INFO)]), ("GRAPH_MODE", [("BP030", Severity.ERROR)])):
        text = cell(mode)
        text = text[:text.index("net = Scale()")] + only_inputs
        findings = analyze(text).findings
        assert [(f.code, f.severity) for f in findings] == expected
        assert not any("BP031" in r.message for r in findings[0].related)


def test_unknown_mode_keeps_the_rule_mindspore_raises_for():
    text = cell().replace("ms.set_context(mode=ms.GRAPH_MODE)\n", "")
    assert [(f.code, f.severity) for f in analyze(text).findings] == [("BP030", Severity.WARNING)]


def test_noqa_and_ignore_leave_the_other_finding_whole():
    only_31 = analyze(cell(noqa="  # noqa: BP030")).findings
    assert [f.code for f in only_31] == ["BP031"] and not any("BP030" in r.message for r in only_31[0].related)
    only_30 = analyze(cell(), Settings(ignore=("BP031",))).findings
    assert [f.code for f in only_30] == ["BP030"] and not any("BP031" in r.message for r in only_30[0].related)


def test_separate_mistakes_stay_separate():
    findings = analyze(cell("PYNATIVE_MODE", grad="x * self.k")).findings
    assert sorted(f.code for f in findings) == ["BP028", "BP031"]


def test_session_keeps_one_finding_through_mode_edits():
    describe = lambda a: [(f.code, f.span, f.message, f.severity, f.related) for f in a.findings]  # noqa: E731
    with DocumentSession("one") as session:
        for text in (cell(), cell("PYNATIVE_MODE"), cell()):
            assert describe(session.analyse(text)) == describe(analyze(text, verify_fixes=False))


def test_bp014_quiet_when_swapped_names_are_used_by_position():
    """(dout, out) read the way MindSpore fills them (out: the incoming gradient) is right; read by name it is
    wrong, and the unsafe fix swaps the names."""
    base = ("from mindspore import nn, ops\nclass C(nn.Cell):\n    def construct(self, x):\n        return ops.sin(x)\n"
            "    def bprop(self, x, dout, out):\n        return ({grad},)\n")
    assert analyze(base.format(grad="out * ops.cos(x)")).findings == []
    (wrong,) = analyze(base.format(grad="dout * ops.cos(x)")).findings
    assert wrong.code == "BP014" and wrong.fix is not None and not wrong.fix.is_safe
    (mixed,) = analyze(base.format(grad="out * dout")).findings
    assert mixed.code == "BP014"
