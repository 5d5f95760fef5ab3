"""Plain regression tests for engine bugs the fuzzer found (issue 6). Each names the input that broke."""
from __future__ import annotations

import fuzzlib as F
from bprop_lsp.checker import analyze

CUSTOM_HEAD = ("from mindspore import ops\n"
               "def fwd(a):\n    return a\n"
               "def bwd(a, out, dout):\n    return (dout,)\n")


def test_dotted_name_before_equals_in_a_call_is_not_a_keyword():
    # Half-typed ``nn.Cellfunc_type="pyfunc"`` inside ops.Custom(...): parso's error recovery makes an
    # ``argument`` whose name is a dotted expression; reading it as a keyword raised AttributeError.
    text = CUSTOM_HEAD + 'op = ops.Custom(fwd, out_shape=lambda s: s, nn.Cellfunc_type="pyfunc", bprop=bwd)\n'
    analysis = analyze(text)
    F.check_positions(text, analysis)


def test_fix_that_deletes_the_findings_own_line_is_rechecked_at_that_line():
    # BP013's fix deletes the first ``@ms.jit`` line, where the finding starts. The engine's re-check
    # shifted the expected line up by one, missed the finding the second ``@ms.jit`` still causes and
    # offered a fix that does not remove its finding.
    text = ("import mindspore as ms\nfrom mindspore import nn\n"
            "class Net(nn.Cell):\n    def construct(self, x):\n        return x\n"
            "    @ms.jit\n    @ms.jit\n    def bprop(self, x, out, dout):\n        return (dout,)\n")
    analysis = F.check_document(text)
    (finding,) = [f for f in analysis.findings if f.code == "BP013"]
    if finding.fix is not None:
        fixed = F.apply_edits(text, finding.fix.edits)
        assert not [f for f in F.analyze(fixed).findings if f.code == "BP013"]


def test_form_feed_inside_a_comment_before_an_unexpected_indent():
    # parso's tokenizer keeps a form feed inside a comment, its prefix splitter does not: its error finder
    # raised AttributeError on an unexpected indent after such a comment, and analyze raised with it.
    text = ("# ORACLE rule:\x0c\U0001d54fALID\n    bprop = None\nfrom mindspore import nn\n"
            "class Net(nn.Cell):\n    def construct(self, x):\n        return x\n"
            "    def bprop(self, x, out):\n        return (out,)\n")
    analysis = F.check_document(text)
    assert [f.code for f in analysis.findings] == ["BP001"]


def test_incremental_syntax_errors_follow_the_statement_after_an_unfinished_block():
    # parso puts "expected an indented block" on the leaf after the statement (past blank lines). The
    # per-statement issue cache of incremental parses was keyed by the statement's own text only, so
    # after a blank line was added below it, it kept reporting the error on the old line.
    before = "from mindspore import nn\nclass Net(nn.Cell):\n    def bprop(self, x, out, dout):\n\nx = 1\n"
    after = before.replace("\nx = 1", "\n\nx = 1")
    doc = F.IncrementalDoc()
    try:
        doc.check(before)
        errors = doc.check(after).syntax_errors
        assert errors and errors[-1][0].start.line == 5
    finally:
        doc.close()


def test_incremental_syntax_errors_keep_one_issue_per_line_like_parso():
    # The unclosed tuple puts "invalid syntax" on the next statement's first leaf; that statement, checked
    # on its own, adds "'return' outside function" on the same line. parso keeps only the first issue of a
    # line, the per-statement check of incremental parses kept both.
    text = ("from mindspore import nn\nclass Net(nn.Cell):\n    def bprop(self, x, out, dout):\n"
            "        return (dout,\nreturn 1\n")
    doc = F.IncrementalDoc()
    try:
        doc.check(text.replace("bprop(self", "bprop(  self"))
        errors = doc.check(text).syntax_errors
        assert len({span.start.line for span, _ in errors}) == len(errors)
    finally:
        doc.close()
