"""BP031: a Cell with a custom bprop owns Parameters used in construct: their gradients are silently zero."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Related
from ..engine.trees import iter_own_nodes, scope_of
from .base import example, NEVER, Draft, Invalid, Rule, Valid
from ..engine.conditions import never_taken
from ._parameters import sets_internal_params, trainable_parameter_attrs
from ._returns import anchor_span, returns_of
from ._signature import view


class ParameterGradsZero(Rule):
    code = "BP031"
    # Whether a Parameter is trainable also depends on ``net.w.requires_grad = False`` statements at module level,
    # which name no class: read through ``ctx.program``, so a document's Cell memo sees them change.
    scope = "cell"
    position_free = True
    same_mistake = ("BP030",)  # a Parameter owned by a custom-bprop cell: one finding at the def
    name = "bprop-parameter-grads-zero"
    summary = ("A cell with a custom bprop gets zero gradients for the Parameters it uses in construct, and a "
               "returned {name: grad} dict is not honoured: keep Parameters outside the bprop cell and pass them in.")
    mindspore_says = "No error and no warning: the Parameter gradients are silently zero."
    valid = (
        Valid(example("""
            import numpy as np
            import mindspore as ms
            from mindspore import nn, Parameter

            class Shift(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.offset = Parameter(ms.Tensor(np.ones(1, np.float32)), name="offset")
                def construct(self, x):
                    return x + self.offset
                def bprop(self, x, out, dout):
                    return (dout,)

            net = Shift()
            net.offset.requires_grad = False
            """), "frozen on the instance before the gradient is taken"),
        Valid(example("""
            import numpy as np
            import mindspore as ms
            from mindspore import nn, Parameter

            USE_BIAS = False

            class Biased(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.bias = Parameter(ms.Tensor(np.ones(1, np.float32)), name="bias")
                def construct(self, x):
                    if USE_BIAS:
                        return x * 2.0 + self.bias
                    return x * 2.0
                def bprop(self, x, out, dout):
                    return (dout * 2.0,)
            """), "construct uses the Parameter only in a branch a module flag never takes"),
        Valid(example("""
            from mindspore import nn, Parameter, Tensor

            class Frozen(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.scale = Parameter(Tensor(2.0), name="scale", requires_grad=False)
                def construct(self, x):
                    return x * self.scale
                def bprop(self, x, out, dout):
                    return (dout * 2.0,)
            """), "a frozen Parameter gets no gradient at all: nothing is lost"),
        Valid(example("""
            import numpy as np
            import mindspore as ms
            from mindspore import nn, ops, Parameter

            def test_custom_bprop_input_gradient():
                class Net(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.w = Parameter(ms.Tensor(np.ones(2, np.float32)), name="w")
                    def construct(self, x):
                        return x * self.w
                    def bprop(self, x, out, dout):
                        return (dout * 2.0,)

                x = ms.Tensor(np.ones(2, np.float32))
                return ops.GradOperation(get_all=True)(Net())(x)
            """), "a test function's own Cell whose input gradients alone are taken: no weight gradient is lost"),
        Valid("from mindspore import nn\nclass Mul(nn.Cell):\n    def construct(self, a, b):\n        return a * b\n"
              "    def bprop(self, a, b, out, dout):\n        return dout * b, dout * a\n",
              "the weight is passed in as an input by the parent cell"),
    )
    invalid = (
        Invalid("import numpy as np\nfrom mindspore import nn, Parameter, Tensor\nclass L(nn.Cell):\n    def __init__(self):\n"
                "        super().__init__()\n        self.weight = Parameter(Tensor(np.ones(3, np.float32)), name='weight')\n"
                "    def construct(self, x):\n        return x * self.weight\n    def bprop(self, x, out, dout):\n"
                "        return (dout * 2.0,)\n",
                at="9:9", message=("L uses its Parameter self.weight in construct but has a custom bprop: the "
                                   "gradient of self.weight is silently zero; pass it in as a construct input "
                                   "instead")),
        Invalid(example("""
            import numpy as np
            import mindspore as ms
            from mindspore import nn, ops, Parameter, ParameterTuple

            def test_weight_gradient():
                class Net(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.w = Parameter(ms.Tensor(np.ones(2, np.float32)), name="w")
                    def construct(self, x):
                        return x * self.w
                    def bprop(self, x, out, dout):
                        return (dout * 2.0,)

                net = Net()
                x = ms.Tensor(np.ones(2, np.float32))
                return ops.GradOperation(get_by_list=True)(net, ParameterTuple(net.trainable_params()))(x)
            """),
                at="12:13", message=("Net uses its Parameter self.w in construct but has a custom bprop: the "
                                     "gradient of self.w is silently zero; pass it in as a construct input instead")),
        Invalid(example("""
            import numpy as np
            import mindspore as ms
            from mindspore import nn, Parameter

            def build():
                class Net(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.w = Parameter(ms.Tensor(np.ones(2, np.float32)), name="w")
                    def construct(self, x):
                        return x * self.w
                    def bprop(self, x, out, dout):
                        return (dout * 2.0,)
                return Net()
            """),
                at="12:13", message=("Net uses its Parameter self.w in construct but has a custom bprop: the "
                                     "gradient of self.w is silently zero; pass it in as a construct input instead")),
    )

    def check(self, ctx: Context):
        for site in ctx.cell_sites:
            v = view(ctx, site)
            if v is None or site.construct is None or not site.inputs:
                continue  # without inputs the bprop exists only for its side: nothing to warn about (case 073)
            info = returns_of(v.fn, ctx.program) if v.fn.node.type == "funcdef" else None
            dict_return = info is not None and any(
                r.shape.kind == "tuple" and any(i.type == "atom" and i.children[0] == "{" for i in r.shape.items)
                for r in info.returns)
            if dict_return and sets_internal_params(ctx, site.cls):
                continue  # PYNATIVE honours the dict; GRAPH rejects the Parameter access (BP030)
            params = trainable_parameter_attrs(ctx, site.cls)
            used = None
            for attr, node in ctx.program.node_fact(site.construct.node, "self_reads", _self_reads):
                if attr in params and not never_taken(ctx.program, node, site.construct.node):
                    used = (attr, node)
                    break
            if used is None and not dict_return:
                continue
            if not dict_return and (_weights_never_asked(site.cls) or _file_takes_input_gradients_only(ctx)):
                continue
            if dict_return:
                msg = (f"bprop of {site.owner_label} returns a {{name: gradient}} dict for Parameters: MindSpore does "
                       f"not honour it and the Parameter gradients stay zero")
            else:
                msg = (f"{site.cls.name} uses its Parameter self.{used[0]} in construct but has a custom bprop: the "
                       f"gradient of self.{used[0]} is silently zero; pass it in as a construct input instead")
            related = (Related(ctx.program.span(used[1]), f"self.{used[0]} used here"),) if used else ()
            yield Draft(anchor_span(ctx, v.fn), msg, fails_in=NEVER, related=related, noqa_line=v.fn.def_line)


# What asks for the gradients of a network's weights (or trains them): where a function that defines a Cell class
# mentions none of these, no gradient of that class's Parameters is ever taken.
_WEIGHT_WORDS = ("get_by_list", "weights", "params", "get_parameters", "parameters_dict", "ParameterTuple",
                 "TrainOneStep", "optimizer", "Optimizer", "Momentum", "Adam", "SGD", "Lamb", "Model(")


def _weights_never_asked(cls) -> bool:
    """Whether the class is local to a function that takes no weight gradients and does not hand the class (or an
    instance made at its return) to its caller: a test function's own ``class Net`` whose input gradients alone
    are taken (``GradOperation(get_all=True)``) loses nothing to the custom bprop. Anything else may train the
    weights somewhere, so the finding stands."""
    scope = scope_of(cls.node)
    if scope is None or scope.type != "funcdef":
        return False
    code = scope.get_code()
    if any(word in code for word in _WEIGHT_WORDS) or "yield" in code or "global " in code or "nonlocal " in code:
        return False
    name = cls.name
    for node in iter_own_nodes(scope):
        if node.type == "return_stmt" and len(node.children) == 2:
            value = node.children[1].get_code(include_prefix=False).strip()
            if value == name or (value.startswith(name + "(") and value.endswith(")")
                                 and value.count("(") == 1):
                return False  # the class, or an instance of it, leaves the function
    return True


# What takes a gradient in a file (a script or a test module, rather than a library of layers).
_GRADIENT_WORDS = ("GradOperation", "grad(", "value_and_grad", "vjp(", "jvp(")


def _file_takes_input_gradients_only(ctx: Context) -> bool:
    """Whether the file takes gradients (a script, a test module) and nothing in it asks for weight gradients or
    trains: then no Parameter gradient of this program is ever read, and MindSpore's silently zero ones are
    unobservable (probe q25: ``GradOperation(get_all=True)`` of a cell whose construct uses a Parameter runs in both
    modes). A file that takes no gradient at all is a library of layers: some training script will, so the finding
    stands there."""
    p = ctx.program
    return (any(p.text_contains(word) for word in _GRADIENT_WORDS)
            and not any(p.text_contains(word) for word in _WEIGHT_WORDS))


def _self_reads(fn_node) -> list:
    """(attribute, node) of each ``self.attr...`` in the function's own body, in order."""
    found = []
    for node in iter_own_nodes(fn_node):
        if node.type in ("power", "atom_expr") and node.children[0].type == "name" and node.children[0].value == "self":
            t = node.children[1]
            if t.children[0] == ".":
                found.append((t.children[1].value, node))
    return found
