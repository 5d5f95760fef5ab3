"""MindSpore knowledge as data (bprop_lsp/data, derived from the 2.10 wheel by scripts/extract_mindspore_data.py)
and the rules that use it: BP044 (which ops have a C++ bprop, how a registration names its op), BP045 (imports
that cannot raise), BP050 (what sets bprop_debug on which cell)."""
from __future__ import annotations

from importlib import resources

import pytest

from bprop_lsp.checker import analyze
from bprop_lsp.engine.mindspore_api import (
    builtin_ops, is_nn_cell_qualname, nn_cell_signature, nn_cells, ops_with_cpp_bprop,
)


def codes(text: str, code: str) -> list[int]:
    """1-based start lines of the findings of ``code``."""
    return [f.span.start.line + 1 for f in analyze(text).findings if f.code == code]


# ------------------------------------------------------------------------------------------------ data files
@pytest.mark.parametrize("name", ["builtin_ops.txt", "cpp_bprop_ops.txt", "nn_cells.txt"])
def test_data_files_say_how_they_were_made(name):
    text = resources.files("bprop_lsp").joinpath(f"data/{name}").read_text(encoding="utf-8")
    assert "Made by scripts/extract_mindspore_data.py from MindSpore 2.10.0" in text


def test_cpp_bprop_list_is_what_graph_mode_uses():
    cpp = ops_with_cpp_bprop()
    # Probed: GRAPH_MODE never calls a Python getter for these (oracle 054, 055, 099, 218; bprop-rules item 27).
    assert {"ReLU", "Abs", "Sigmoid", "MaskedFill", "Neg"} <= cpp
    # Exported by mindspore.ops.operations but without a C++ bprop: the _thor_ops Cus* ops (item 26).
    assert "CusMatMulCube" in builtin_ops() and "CusMatMulCube" not in cpp
    assert len(cpp) < len(builtin_ops() | cpp)


def test_nn_cells_know_construct_signatures_and_export_paths():
    relu = nn_cells()["mindspore.nn.ReLU"]
    assert relu.params == ("input",) and relu.defaults == 0 and relu.vararg is None  # 2.10 names it `input`
    assert nn_cells()["mindspore.nn.layer.activation.ReLU"] is relu
    dense = nn_cell_signature("mindspore.nn.Dense")
    assert dense is not None and dense.params == ("x",)
    assert is_nn_cell_qualname("mindspore.nn.Cell")
    assert is_nn_cell_qualname("mindspore.nn.ReLU")
    assert is_nn_cell_qualname("nn.ReLU")  # unresolved snippet spelling, like the engine's bare nn.Cell
    assert is_nn_cell_qualname("mindspore.mint.nn.ReLU")
    cell = nn_cells()["mindspore.nn.Cell"]
    assert cell.params == () and cell.vararg == "args" and cell.varkw == "kwargs"
    assert not is_nn_cell_qualname("mindspore.ops.ReLU")
    assert not is_nn_cell_qualname("torch.nn.ReLU")
    assert not is_nn_cell_qualname(None)


# ------------------------------------------------------------------------------------------------ BP044
GETTER = ("from mindspore import ops\nfrom mindspore.ops import operations as P\n"
          "from mindspore.ops._grad_experimental.grad_base import bprop_getters, bprops\n"
          "{pre}\n@{registry}.register({key})\ndef get_bprop(self):\n    def bprop(x, out, dout):\n"
          "        return (dout,)\n    return bprop\n")


@pytest.mark.parametrize("pre,registry,key", [
    ("", "bprop_getters", '"Sigmoid"'),
    ("", "bprop_getters", "'ReLU'"),
    ("", "bprop_getters", "P.MaskedFill"),
    ("", "bprop_getters", "ops.ReLU"),
    ("KEY = 'Sigmoid'", "bprop_getters", "KEY"),
    ("RELU = ops.ReLU", "bprop_getters", "RELU"),
    ("", "bprops", "'Abs'"),
])
def test_bp044_registration_for_an_op_with_a_cpp_bprop(pre, registry, key):
    assert codes(GETTER.format(pre=pre, registry=registry, key=key), "BP044")


@pytest.mark.parametrize("pre,key", [
    ("", '"CusMatMulCube"'),  # exported, no C++ bprop: the registered getter is used
    ("", '"MyOwnOp"'),
    ("", "f'{NAME}'"),  # not a constant: unknown, no guess
    ("KEY = 'Sigmoid'\nKEY = 'MyOp'", "KEY"),  # bound twice: unknown
    ("", "some_module.ReLU"),  # not MindSpore
])
def test_bp044_silent_without_a_known_cpp_bprop(pre, key):
    assert codes(GETTER.format(pre=pre, registry="bprop_getters", key=key), "BP044") == []


def test_bp044_aliased_registry_import():
    text = ("from mindspore.ops._grad_experimental.grad_base import bprop_getters as bg\n\n@bg.register('ReLU')\n"
            "def get_bprop(self):\n    def bprop(x, out, dout):\n        return (dout,)\n    return bprop\n")
    assert codes(text, "BP044") == [5]


PRIM = ("from mindspore import ops\nfrom mindspore.ops import PrimitiveWithInfer, prim_attr_register\n\n"
        "class {name}(PrimitiveWithInfer):\n    @prim_attr_register\n    def __init__(self):\n        pass\n"
        "    def infer_shape(self, x):\n        return x\n    def get_bprop(self):\n        def bprop(x, out, dout):\n"
        "            return (dout,)\n        return bprop\n")


def test_bp044_user_primitive_named_like_a_cpp_op():
    assert codes(PRIM.format(name="Neg"), "BP044") == [11]


@pytest.mark.parametrize("name", ["MyNeg", "CusMatMulCube"])
def test_bp044_user_primitive_whose_get_bprop_graph_mode_calls(name):
    assert codes(PRIM.format(name=name), "BP044") == []


# ------------------------------------------------------------------------------------------------ BP045
OLD = "from mindspore.ops._grad.grad_base import bprop_getters"
NEW = "from mindspore.ops._grad_experimental.grad_base import bprop_getters"


@pytest.mark.parametrize("handler", ["except ImportError:", "except ModuleNotFoundError:", "except Exception:",
                                     "except:", "except (ImportError, AttributeError) as e:"])
def test_bp045_try_with_fallback_is_fine(handler):
    assert codes(f"try:\n    {OLD}\n{handler}\n    {NEW}\n", "BP045") == []


def test_bp045_try_whose_handler_reraises_still_fails():
    assert codes(f"try:\n    {OLD}\nexcept ImportError:\n    raise\n", "BP045") == [2]


def test_bp045_other_exception_does_not_guard():
    assert codes(f"try:\n    {OLD}\nexcept KeyError:\n    {NEW}\n", "BP045") == [2]


def test_bp045_fallback_in_handler_is_not_itself_guarded():
    # The 1.x import in the *handler* runs only after the 2.x one failed: still reported.
    assert codes(f"try:\n    {NEW}\nexcept ImportError:\n    {OLD}\n", "BP045") == [4]


def test_bp045_type_checking_only():
    assert codes(f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    {OLD}\n", "BP045") == []
    assert codes(f"import typing\nif typing.TYPE_CHECKING:\n    pass\nelse:\n    {OLD}\n", "BP045") == [5]


def test_bp045_importlib_string_and_fix_for_other_modules():
    text = "import importlib\nbprop_getters = importlib.import_module('mindspore.ops._grad.grad_math_ops')\n"
    assert codes(text, "BP045") == [2]
    finding = next(f for f in analyze("from mindspore.ops._grad.grad_nn_ops import bprop_getters\n").findings)
    assert finding.fix is not None and "mindspore.ops._grad_experimental.grad_nn_ops" in finding.fix.title


# ------------------------------------------------------------------------------------------------ BP050
CELL = ("from mindspore import nn\nDEBUG = True\nclass GRL(nn.Cell):\n    def __init__(self, debug=True):\n"
        "        super().__init__()\n{init}\n    def construct(self, x):\n        return x\n"
        "    def bprop(self, x, out, dout):\n        return (-dout,)\n\nclass Net(nn.Cell):\n"
        "    def __init__(self, debug=True):\n        super().__init__()\n        self.grl = GRL()\n{net_init}\n"
        "    def construct(self, x):\n        return self.grl(x)\n\n{tail}\n")
BPROP_LINE = 9


@pytest.mark.parametrize("init,net_init,tail", [
    ("        self.bprop_debug = True", "", ""),
    ("        self.bprop_debug = DEBUG", "", ""),
    ("        self.bprop_debug = debug", "", "g = GRL()"),
    ("", "        self.grl.bprop_debug = debug", "n = Net()"),
    ("", "", "net = Net()\nfor _, c in net.cells_and_names():\n    c.bprop_debug = True"),
    ("", "", "net = Net()\nfor c in net.cells():\n    c.bprop_debug = DEBUG"),
    ("", "", "def make(n):\n    for c in n.cells():\n        c.bprop_debug = True"),
    ("", "        for _, c in self.cells_and_names():\n            c.bprop_debug = True", ""),
])
def test_bp050_reaches_a_cell_with_a_bprop(init, net_init, tail):
    assert codes(CELL.format(init=init, net_init=net_init, tail=tail), "BP050") == [BPROP_LINE]


@pytest.mark.parametrize("init,net_init,tail", [
    ("        self.bprop_debug = debug", "", "g = GRL(debug=False)"),
    ("        self.bprop_debug = debug", "", "g = GRL(False)"),
    ("        self.bprop_debug = debug", "", "g = GRL(debug=flag)"),  # unknown: no guess
    ("        self.bprop_debug = False", "", ""),
    ("", "        self.bprop_debug = True", ""),  # the parent has no bprop (oracle 256)
    ("", "", "net = Net()\nfor name, c in net.cells_and_names():\n    name.bprop_debug = True"),
])
def test_bp050_silent_when_no_cell_with_a_bprop_gets_the_flag(init, net_init, tail):
    assert codes(CELL.format(init=init, net_init=net_init, tail=tail), "BP050") == []
