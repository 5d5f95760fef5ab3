"""Plain regression tests for engine bugs the fuzzer found (issue 6). Each names the input that broke."""
from __future__ import annotations

import fuzzlib as F
from bprop_lsp.engine import analyze

CUSTOM_HEAD = ("from mindspore import ops\n"
               "def fwd(a):\n    return a\n"
               "def bwd(a, out, dout):\n    return (dout,)\n")


def test_dotted_name_before_equals_in_a_call_is_not_a_keyword():
    # Half-typed ``nn.Cellfunc_type="pyfunc"`` inside ops.Custom(...): parso's error recovery makes an
    # ``argument`` whose name is a dotted expression; reading it as a keyword raised AttributeError.
    text = CUSTOM_HEAD + 'op = ops.Custom(fwd, out_shape=lambda s: s, nn.Cellfunc_type="pyfunc", bprop=bwd)\n'
    analysis = analyze(text)
    F.check_positions(text, analysis)
