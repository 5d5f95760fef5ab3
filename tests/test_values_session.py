"""Module constants and flags read by the value model (rules/_returns.py, engine/values.py) and by the Parameter
rules: an edit of the constant's own statement, elsewhere in the file, must change the findings a DocumentSession
shows exactly as a fresh analysis does (the returns kept per statement, the rule memo's keys, the carried tables)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bprop_lsp.checker import DocumentSession, analyze
from bprop_lsp.engine import Settings


def _same_as_fresh(session, text):
    got = session.analyse(text, Settings())
    want = analyze(text, Settings(), verify_fixes=False)
    assert [(f.code, f.span, f.message) for f in got.findings] == [(f.code, f.span, f.message) for f in want.findings]
    return {f.code for f in got.findings}


_REPEAT = '''from mindspore import nn, ops

N_SHARED = 2


class Other(nn.Cell):
    def construct(self, x):
        return x

    def bprop(self, x, out, dout):
        return (dout,)


class Sum3(nn.Cell):
    def construct(self, a, b, c):
        return a + b + c

    def bprop(self, a, b, c, out, dout):
        return (dout,) * N_SHARED
'''

_INIT_FLAG = '''import numpy as np
import mindspore as ms
from mindspore import nn, Parameter

LEARN_K = False


class Scaler(nn.Cell):
    def __init__(self):
        super().__init__()
        if LEARN_K:
            self.k = Parameter(ms.Tensor(np.array([2.0], np.float32)), name="k")
        else:
            self.k = 2.0

    def construct(self, x):
        return x * 2.0

    def bprop(self, x, out, dout):
        return (dout * self.k,)
'''

_CONSTRUCT_FLAG = '''import numpy as np
import mindspore as ms
from mindspore import nn, Parameter

USE_BIAS = False


class Biased(nn.Cell):
    def __init__(self):
        super().__init__()
        self.bias = Parameter(ms.Tensor(np.array([0.5], np.float32)), name="bias")

    def construct(self, x):
        if USE_BIAS:
            return x * 2.0 + self.bias
        return x * 2.0

    def bprop(self, x, out, dout):
        return (dout * 2.0,)
'''

_FROZEN = '''import numpy as np
import mindspore as ms
from mindspore import nn, Parameter


class Shift(nn.Cell):
    def __init__(self):
        super().__init__()
        self.offset = Parameter(ms.Tensor(np.array([0.5], np.float32)), name="offset")

    def construct(self, x):
        return x + self.offset

    def bprop(self, x, out, dout):
        return (dout,)


net = Shift()
net.offset.requires_grad = False
x = ms.Tensor(np.array([1.0, 2.0], np.float32))
'''

_NONE_ARM = '''from mindspore import nn, ops

KEEP_MASK = True


class Mask(nn.Cell):
    def construct(self, x, mask):
        return x * mask

    def bprop(self, x, mask, out, dout):
        return dout * mask, (ops.zeros_like(mask) if KEEP_MASK else None)
'''

_AUGMENTED_FLAG = '''from mindspore import nn, ops

WITH_BIAS = True


class Affine(nn.Cell):
    def construct(self, x, s, b):
        return x * s + b

    def bprop(self, x, s, b, out, dout):
        grads = (dout * s, dout * x)
        if WITH_BIAS:
            grads += (dout,)
        return grads
'''


_INSTANCE_ARM = '''from mindspore import nn, ops


class Gain(nn.Cell):
    def __init__(self, frozen):
        super().__init__()
        self.frozen = frozen

    def construct(self, x, g):
        return x * g

    def bprop(self, x, g, out, dout):
        dg = None if self.frozen else dout * x
        return dout * g, dg


net = Gain(False)
'''


@pytest.mark.parametrize("text, old, new, code, present_first", [
    (_REPEAT, "N_SHARED = 2", "N_SHARED = 3", "BP021", True),
    (_REPEAT, "N_SHARED = 2", "N_SHARED = 4", "BP022", False),
    (_INIT_FLAG, "LEARN_K = False", "LEARN_K = True", "BP030", False),
    (_CONSTRUCT_FLAG, "USE_BIAS = False", "USE_BIAS = True", "BP031", False),
    (_FROZEN, "requires_grad = False", "requires_grad = True", "BP031", False),
    (_NONE_ARM, "KEEP_MASK = True", "KEEP_MASK = False", "BP025", False),
    (_AUGMENTED_FLAG, "WITH_BIAS = True", "WITH_BIAS = False", "BP021", False),
    (_INSTANCE_ARM, "net = Gain(False)", "net = Gain(True)", "BP025", False),
], ids=["repeat-count", "repeat-count-too-many", "init-flag", "construct-flag", "instance-frozen", "none-arm",
        "augmented-flag", "instance-arm"])
def test_a_module_constant_edited_elsewhere_changes_the_findings_as_a_fresh_analysis(text, old, new, code,
                                                                                     present_first):
    assert old in text
    edited = text.replace(old, new)
    session = DocumentSession()
    seen = [_same_as_fresh(session, version) for version in (text, edited, text, edited)]
    assert [code in s for s in seen] == [present_first, not present_first] * 2


def test_the_constructs_output_read_for_dout_follows_an_edit_of_construct():
    text = _REPEAT.replace("return (dout,) * N_SHARED", "return dout").replace(
        "def construct(self, a, b, c):\n        return a + b + c", "def construct(self, a, b, c):\n        return a, b, c")
    tensor = text.replace("return a, b, c", "return a + b + c")
    pair = text.replace("return a, b, c", "return a, b")
    session = DocumentSession()
    seen = [_same_as_fresh(session, version) for version in (text, tensor, pair, text)]
    assert [("BP020" in s, "BP021" in s) for s in seen] == [(False, False), (True, False), (False, True),
                                                           (False, False)]


_FACTORY = '''from mindspore import nn, ops


class QuantBase(nn.Cell):
    def construct(self, x, scale=None):
        return ops.round(x) if scale is None else ops.round(x / scale) * scale

    def bprop(self, x, out, dout):
        return (dout,)


def build_quantizer(bits):
    class _Quant(QuantBase):
        BITS = bits
    return _Quant()


class Plain(QuantBase):
    pass


def make_plain():
    return Plain()


class Model(nn.Cell):
    def __init__(self):
        super().__init__()
        self.quant = build_quantizer(4)
        self.scale = 1.0

    def construct(self, x):
        return self.quant(x, self.scale)
'''


def test_a_factory_functions_class_gets_the_calls_of_its_instances():
    # ``self.quant = build_quantizer(4)``: the factory returns ``_Quant()``, so ``self.quant(x, s)`` calls _Quant,
    # whose inherited bprop must then list ``scale`` (bprop-rules.md item 44, case 321). Editing the call, the
    # factory's return or the attribute's value must follow in a session as in a fresh analysis.
    versions = [
        _FACTORY,
        _FACTORY.replace("return self.quant(x, self.scale)", "return self.quant(x)"),
        _FACTORY,
        _FACTORY.replace("    return _Quant()", "    return Plain()"),  # another class, called with scale too
        _FACTORY,
        _FACTORY.replace("self.quant = build_quantizer(4)", "self.quant = make_plain()"),
        _FACTORY,
    ]
    session = DocumentSession()
    seen = [_same_as_fresh(session, text) for text in versions]
    assert ["BP001" in s for s in seen] == [True, False, True, True, True, True, True]


_PROBES = sorted((Path(__file__).parent / "fixtures" / "probes" / "cases").glob("pv*.py"))
_CONSTANT = re.compile(r"^([A-Z_][A-Z0-9_]*) = (True|False|\d+)$", re.M)
_FLIPPED = {"True": "False", "False": "True"}


@pytest.mark.parametrize("path", _PROBES, ids=[p.stem for p in _PROBES])
def test_flipping_each_module_constant_of_the_value_probes_matches_a_fresh_analysis(path):
    # Every module-level flag and int constant of the labelled value probes, changed and changed back, along with
    # requires_grad values: a session's findings equal a fresh analysis's after each edit.
    text = path.read_text(encoding="utf-8")
    versions = [text]
    for m in _CONSTANT.finditer(text):
        value = m.group(2)
        new = _FLIPPED[value] if value in _FLIPPED else str(int(value) + 1)
        versions.append(versions[-1].replace(m.group(0), f"{m.group(1)} = {new}", 1))
    for old, new in (("requires_grad = False", "requires_grad = True"), ("requires_grad=False", "requires_grad=True")):
        if old in text:
            versions.append(versions[-1].replace(old, new, 1))
    versions += list(reversed(versions[:-1]))
    session = DocumentSession()
    for version in versions:
        _same_as_fresh(session, version)


def test_bp031_follows_a_module_level_requires_grad_toggle_with_the_memo_on(monkeypatch):
    """``net.w.requires_grad = ...`` at module level names no class: BP031 must not be read back from a per-Cell
    memo entry that did not record reading it (the old hand-keyed memo kept the stale finding)."""

    plain = "".join(f"class P{i}(nn.Cell):\n    def construct(self, x):\n        return x\n"
                    f"    def bprop(self, x, out, dout):\n        return (dout,)\n\n\n" for i in range(20))
    base = ("import numpy as np\nimport mindspore as ms\nfrom mindspore import nn, Parameter\n\n\n" + plain +
            "class Shift(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
            "        self.offset = Parameter(ms.Tensor(np.ones(1, np.float32)), name='offset')\n"
            "    def construct(self, x):\n        return x + self.offset\n"
            "    def bprop(self, x, out, dout):\n        return (dout,)\n\n\nnet = Shift()\n"
            "net.offset.requires_grad = FLAG\n")
    texts = [base.replace("FLAG", v) for v in ("True", "False", "True", "False")]
    session = DocumentSession()
    for text in texts:
        got = sorted((f.code, f.span.start.line) for f in session.analyse(text).findings)
        assert got == sorted((f.code, f.span.start.line) for f in analyze(text).findings)
