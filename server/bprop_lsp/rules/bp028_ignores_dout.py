"""BP028: a bprop that never reads ``dout``: its gradients do not depend on the downstream loss.

MindSpore calls ``bprop(*inputs, out, dout)`` by position; the last parameter is the incoming gradient.
A bprop that never reads it returns the local derivative only, so the chain rule is broken and the
gradients are the same whatever the loss (tests/fixtures/mindspore_probes record it). Straight-through
estimators (``(dout,)``) and gradient reversal (``-dout * k``) read it; zero-gradient and stop-gradient
bprops return zeros for every input. Anything the reading cannot see (``*args``, ``locals()``) is left alone.
"""
from __future__ import annotations

from ..engine.context import Context, Signature
import re

from ..engine.definitions import Function
from ..engine.model import Applicability, Edit, Fix, Related
from ..engine.param_edits import fresh, is_dout_like, is_out_like, parameters_span, used_names
from ..engine.parsing import POSITIONAL
from ..engine.trees import iter_scope_nodes, statement_words
from .base import example, NEVER, Draft, Invalid, Rule, Valid
from ._returns import local_assignments, returns_of
from ._signature import def_span, view

# Calls that can read a function's variables without naming them.
_INTROSPECTION = {"locals", "vars", "eval", "exec", "currentframe", "_getframe", "getframe"}
_STUB_STATEMENTS = {"pass_stmt", "raise_stmt"}

_CELL = ("from mindspore import nn, ops\nclass Sin(nn.Cell):\n    def construct(self, x):\n        return ops.sin(x)\n"
         "    def bprop(self, x, out, dout):\n")


class IgnoresDout(Rule):
    code = "BP028"
    scope = "cell"
    position_free = True
    name = "bprop-ignores-dout"
    summary = ("A bprop that never reads dout (its last parameter, the incoming gradient) returns gradients that do "
               "not depend on the downstream loss: multiply the local derivative by dout (chain rule).")
    mindspore_says = ("No error: the gradients are silently wrong (the same whatever the loss). In MindSpore `out` is "
                      "the forward result and `dout` the incoming gradient (PyTorch's grad_output).")
    valid = (
        Valid("from mindspore import nn, Tensor\nclass Z(nn.Cell):\n    def construct(self, x):\n        return x\n"
              "    def bprop(self, x, out, dout):\n        return (Tensor(0.0),)\n", "a constant zero Tensor"),
        Valid(_CELL + "        return (dout * ops.cos(x),)\n"),
        Valid("from mindspore import nn\nclass RoundSTE(nn.Cell):\n    def construct(self, x):\n        return x.round()\n"
              "    def bprop(self, x, out, dout):\n        return (dout,)\n", "a straight-through estimator reads dout"),
        Valid("from mindspore import nn\nclass GradReverse(nn.Cell):\n    def __init__(self, coeff=1.0):\n"
              "        super().__init__()\n        self.coeff = coeff\n    def construct(self, x):\n        return x * 1.0\n"
              "    def bprop(self, x, out, dout):\n        return (-dout * self.coeff,)\n", "gradient reversal reads dout"),
        Valid("from mindspore import nn, ops\nclass StopGrad(nn.Cell):\n    def construct(self, x, mask):\n        return x * mask\n"
              "    def bprop(self, x, mask, out, dout):\n        return ops.zeros_like(x), ops.zeros_like(mask)\n",
              "a stop-gradient bprop returns zeros for every input"),
        Valid(_CELL + "        return (x * 0,)\n", "a zero-gradient bprop"),
        Valid("from mindspore import nn, ops\nclass Net(nn.Cell):\n    def construct(self, x, y):\n        return ops.matmul(x, y)\n"
              "    def bprop(self, x, y, out, dout):\n        dx = x + 1\n        dy = y + 1\n        return dx, dy\n",
              "the demonstration bprop of MindSpore's Cell-bprop tutorial (each input plus a literal) is left alone"),
        Valid(example("""
            import pytest
            from mindspore import nn, ops

            class OneInputBprop(nn.Cell):
                def construct(self, x):
                    return ops.relu(x)
                def bprop(self, x, out, dout):
                    return (5 * x,)
            """), "a test's fixture: a hand-picked constant gradient that tells the custom bprop from autodiff"),
        Valid(example("""
            from mindspore import nn, ops, Tensor

            def test_hook_changes_dout():
                class Net(nn.Cell):
                    def construct(self, x):
                        return ops.relu(x)
                    def bprop(self, x, out, dout):
                        dout = Tensor([[1.0, 1.0], [1.0, 1.0]])
                        return (dout,)
                assert Net() is not None
            """), "a cell defined in a test function whose bprop overwrites dout on purpose"),
        Valid(example("""
            from mindspore import nn, ops

            grad_all = ops.GradOperation(get_all=True)

            class Inner(nn.Cell):
                def construct(self, x, y):
                    return x * y

            class Outer(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.f = Inner()
                def construct(self, x, y):
                    return self.f(x, y)
                def bprop(self, x, y, out, dout):
                    grads = grad_all(self.f)(x, y)
                    return grads[0] * 2, grads[1] * 2
            """), "gradients computed by a gradient transform inside the bprop"),
        Valid(example("""
            from mindspore import nn, ops

            class Crop(nn.Cell):
                def construct(self, x, boxes, idx):
                    return x[0] + boxes[0] + idx[0]
                def bprop(self, x, boxes, idx, out, dout):
                    return x, boxes, idx
            """), "each input handed back as its own gradient: a stand-in, not a derivative"),
    )
    invalid = (
        Invalid(_CELL + "        return (ops.cos(x),)\n", note="the local derivative only: dout is never multiplied in",
                at="5:9", message=("bprop of Sin never reads `dout`: its gradients do not depend on the downstream "
                                   "loss (chain rule)")),
        Invalid(_CELL + "        return (out * ops.cos(x),)\n",
                note="`out` used where the incoming gradient belongs (PyTorch's grad_output): the message says so",
                at="5:9", message=("bprop of Sin never reads `dout`: its gradients do not depend on the downstream "
                                   "loss (chain rule); it reads `out` (the forward output) — did you mean `dout`? "
                                   "In MindSpore `out` is the forward result and `dout` the incoming gradient "
                                   "(PyTorch's grad_output)")),
        Invalid(_CELL.replace("x, out, dout", "x, grad_output, out") + "        return (grad_output * ops.cos(x),)\n",
                fixed=_CELL.replace("x, out, dout", "x, out, grad_output") + "        return (grad_output * ops.cos(x),)\n",
                note="PyTorch names: by position `grad_output` is the forward output and `out` the incoming gradient; "
                     "the (unsafe) fix makes `grad_output` the last parameter",
                at="5:9", message=("bprop of Sin never reads `out` (its last parameter: dout, the incoming "
                                   "gradient): its gradients do not depend on the downstream loss (chain rule); "
                                   "MindSpore passes (inputs..., out, dout) by position, so `grad_output` holds the "
                                   "forward output and `out` the incoming gradient")),
        Invalid(_CELL.replace("x, out, dout", "x, top_grad, dout") + "        return (top_grad * ops.cos(x),)\n",
                fixed=_CELL.replace("x, out, dout", "x, out, top_grad") + "        return (top_grad * ops.cos(x),)\n",
                note="a torch-style bprop(self, x, top_grad) after BP001's fix appended dout: the body still reads "
                     "top_grad, which MindSpore fills with the forward output; the (unsafe) fix makes the chain",
                at="5:9", message=("bprop of Sin never reads `dout`: its gradients do not depend on the downstream "
                                   "loss (chain rule); it reads `top_grad`, which holds the forward output "
                                   "(MindSpore passes (inputs..., out, dout) by position): if `top_grad` is meant "
                                   "as the incoming gradient (PyTorch's grad_output), it must be the last parameter")),
        Invalid("import numpy as np\nfrom mindspore import ops\n\ndef sq(x):\n    return x * x\n\n"
                "def sq_bprop(x, out, dout):\n    return (2 * x,)\n\nop = ops.Custom(sq, out_shape=lambda s: s, "
                "out_dtype=lambda t: t, func_type='pyfunc',\n                bprop=sq_bprop)\n",
                note="an ops.Custom bprop",
                at="7:5", message=("ops.Custom bprop sq_bprop never reads `dout`: its gradients do not depend on "
                                   "the downstream loss (chain rule)")),
    )

    def check(self, ctx: Context):
        for fn, label, positional, anchors in _subjects(ctx):
            finding = _ignored_dout(ctx, fn, label, positional, _in_test(ctx, anchors))
            if finding is not None:
                yield finding
        for site in ctx.cell_sites:
            finding = _before_bp001(ctx, site)
            if finding is not None:
                yield finding


def _subjects(ctx: Context):
    """(function, label, positional parameters MindSpore fills, anchors) for Cell and ops.Custom bprops whose dout is
    known; anchors are the (node, name) pairs whose place in the file tells a test's fixture (``_in_test``): a Cell's
    class statement, an ops.Custom bprop's def and the ``ops.Custom(...)`` call that takes it."""
    seen = set()
    for site in ctx.cell_sites:
        v = view(ctx, site)
        if v is None or v.fn in seen or v.input_range is None or not v.has_self:
            continue
        if v.kind in ("staticmethod", "classmethod") or v.opaque_decorator or v.unwrapped_decorator:
            continue
        if v.count != v.input_range[1] + 2:
            continue  # the signature is wrong (BP001/BP002), or dout's position depends on the call (BP007)
        a, b = v.params[-2].name, v.params[-1].name
        if (a, b) == ("dout", "out"):
            continue  # BP014 reports the swapped names
        seen.add(v.fn)
        cls_node = getattr(site.cls, "node", None)
        anchors = ((cls_node, site.cls.name),) if cls_node is not None and cls_node.type == "classdef" else ()
        yield v.fn, f"bprop of {site.owner_label}", v.params, anchors
    for op in ctx.custom_op_sites:
        fn = op.function
        if fn is None or op.inputs is None or fn in seen:
            continue
        sig = Signature(fn, skip_self=op.bound)
        if len(sig.positional) != op.inputs + 2:
            continue  # BP040
        seen.add(fn)
        name = fn.name if fn.node.type == "funcdef" else None
        yield fn, f"ops.Custom bprop {fn.name}", sig.positional, ((fn.node, name), (op.call, None))


def _before_bp001(ctx: Context, site) -> Draft | None:
    """A torch-style ``bprop(self, x, top_grad)``, one parameter short (BP001): BP001's fix appends ``dout`` after
    ``top_grad``, which MindSpore then fills with the forward output while the body reads it as the gradient.
    Beside BP001's fix, an (unsafe) one that makes the gradient chain: ``out`` inserted before ``top_grad``."""
    v = view(ctx, site)
    if v is None or v.input_range is None or not v.has_self or v.input_range[0] != v.input_range[1]:
        return None
    if v.kind in ("staticmethod", "classmethod") or v.opaque_decorator or v.unwrapped_decorator:
        return None
    fn = v.fn
    if fn.node.type != "funcdef" or v.count != v.input_range[1] + 1 or v.count < 2:
        return None
    if any(q.kind in ("vararg", "varkw", "kwonly") for q in fn.params):
        return None
    last = v.params[-1]
    if is_dout_like(last.name) or is_out_like(last.name):
        return None  # BP001 inserts out before a gradient's name itself; an out's name gets dout after it
    info = returns_of(fn)
    if info is None or not info.returns or not _returns_depend_on(fn, last.name, info):
        return None
    if _dout_state(fn, last.name)[0] != "read" or _is_stub(fn) or _uses_introspection(fn.body):
        return None
    fix = None
    if ctx.want_fixes:
        from ..engine.param_edits import insert_after

        taken = used_names(fn, ctx.program)
        edits = insert_after(fn, v.params[-2], [fresh("out", taken)], ctx.program.index)
        if edits:
            fix = Fix(f"Make `{last.name}` the incoming gradient: insert `out` before it", tuple(edits),
                      Applicability.UNSAFE, repairs=parameters_span(fn))
    message = (f"bprop of {site.owner_label} reads `{last.name}` like an incoming gradient (PyTorch's grad_output), "
               f"but it stands where MindSpore passes the forward output once `dout` is appended (BP001's fix): if "
               f"`{last.name}` is meant as the gradient, insert `out` before it instead")
    related = (Related(ctx.program.span(last.node.name), f"`{last.name}`: read as the gradient"),)
    return Draft(def_span(ctx, fn), message, fails_in=NEVER, fix=fix, related=related, noqa_line=fn.def_line)


def _ignored_dout(ctx: Context, fn: Function, label: str, positional, in_test: bool) -> Draft | None:
    if any(p.kind in ("vararg", "varkw") for p in fn.params):
        return None
    dout = positional[-1]
    # What follows the label is read from the function alone: kept with its statement, by parameter names.
    memo = ctx.program.node_fact(fn.node, POSITIONAL + "ignored_dout", lambda node: {})
    key = (tuple(p.name for p in positional), in_test)
    if key not in memo:
        memo[key] = _never_reads(fn, positional, in_test)
    found = memo[key]
    if found is None:
        return None
    rest, torch_style, rebinding = found
    related = (Related(ctx.program.span(dout.node.name), "the incoming gradient (dout), never read"),)
    if rebinding is not None:
        related += (Related(ctx.program.span(rebinding), f"`{dout.name}` is overwritten here, before it is read"),)
    fix = _chain_fix(ctx, fn, positional) if torch_style and ctx.want_fixes else None
    return Draft(def_span(ctx, fn), label + rest, fails_in=NEVER, fix=fix, related=related, noqa_line=fn.def_line)


def _never_reads(fn: Function, positional, in_test: bool = False) -> tuple[str, bool, object] | None:
    """(the message after the label, whether the body reads the parameter before dout as the incoming gradient,
    the statement overwriting dout or None) when the bprop never reads dout and its gradients are no stand-ins."""
    dout, out = positional[-1], positional[-2]
    body = fn.body
    if _is_stub(fn) or _uses_introspection(body):
        return None
    state, rebinding = _dout_state(fn, dout.name)
    if state == "read":
        return None
    info = returns_of(fn)
    if info is None or not info.returns:
        return None  # a generator, or nothing returned (BP012/BP020 speak)
    assignments = local_assignments(fn) if fn.node.type != "lambdef" else {}
    if all(_all_zero(r.shape, assignments) for r in info.returns):
        return None  # zero-gradient / stop-gradient bprop: the loss does not matter by design
    inputs = [p.name for p in positional[:-2]]
    if all(_is_placeholder(r.shape, assignments, inputs) for r in info.returns):
        return None  # MindSpore's tutorial bprop (dx = x + 1, dy = y + 1) only shows that the custom bprop runs
    if _takes_gradient_itself(fn):
        return None  # gradients computed by a gradient transform inside the bprop (MindSpore's nested-grad tests)
    reads_out = rebinding is None and _returns_depend_on(fn, out.name, info)
    # A bprop written for PyTorch: the parameter before dout, read as the gradient, is named for something else
    # than the forward output (grad_output, g, top_grad: BP001's fix appends dout after such a last parameter).
    torch_style = reads_out and not is_out_like(out.name)
    if in_test and not torch_style:
        return None  # a test's fixture: constant or hand-picked gradients, a hook overwriting dout, out[1]
    what = f"`{dout.name}`" if dout.name == "dout" else f"`{dout.name}` (its last parameter: dout, the incoming gradient)"
    message = f" never reads {what}: its gradients do not depend on the downstream loss (chain rule)"
    if rebinding is not None:
        message += f"; `{dout.name}` is overwritten before it is read"
    swapped = is_dout_like(out.name) and is_out_like(dout.name)
    if swapped:
        message += (f"; MindSpore passes (inputs..., out, dout) by position, so `{out.name}` holds the forward output "
                    f"and `{dout.name}` the incoming gradient")
    elif torch_style:
        message += (f"; it reads `{out.name}`, which holds the forward output (MindSpore passes (inputs..., out, dout) "
                    f"by position): if `{out.name}` is meant as the incoming gradient (PyTorch's grad_output), it must "
                    f"be the last parameter")
    elif reads_out and _out_read_as_gradient(fn, out.name, info, assignments):
        message += (f"; it reads `{out.name}` (the forward output) — did you mean `{dout.name}`? In MindSpore `out` is "
                    f"the forward result and `dout` the incoming gradient (PyTorch's grad_output)")
    return message, torch_style or swapped, rebinding


def _chain_fix(ctx: Context, fn: Function, positional) -> Fix | None:
    """Rename the last two parameters so that the one the body reads as the gradient receives dout: ``(..., g,
    dout)`` -> ``(..., out, g)`` (unsafe: it changes what the body computes)."""
    if fn.node.type not in ("funcdef", "lambdef"):
        return None
    before, last = positional[-2], positional[-1]
    taken = set(used_names(fn)) - {before.name, last.name}
    out_name = fresh("out", taken)
    if out_name == before.name:
        return None
    p = ctx.program
    edits = (Edit(p.span(before.node.name), out_name), Edit(p.span(last.node.name), before.name))
    return Fix(f"Make `{before.name}` the incoming gradient: rename the parameters to ({out_name}, {before.name})",
               edits, Applicability.UNSAFE, repairs=parameters_span(fn))


# Calls of a gradient transform inside the bprop: ``grad_all(self.f)(x, y)``, ``self.grad(x)``, ``ms.grad(f)``.
_GRADIENT_CALL = re.compile(r"(?:^|_)grads?(?:_|$)|Grad|^(?:vjp|jvp|value_and_grad)$")


def _takes_gradient_itself(fn: Function) -> bool:
    """Whether the bprop calls a gradient transform (its gradients come from MindSpore's autodiff of another
    function or cell: externally computed, not a local derivative missing dout)."""
    for n in iter_scope_nodes(fn.body):
        if n.type not in ("power", "atom_expr"):
            continue
        for i, t in enumerate(n.children[1:], start=1):
            if t.type == "trailer" and t.children[0] == "(":
                callee = n.children[i - 1]
                name = callee.children[1].value if callee.type == "trailer" and callee.children[0] == "." else (
                    callee.value if callee.type == "name" else "")
                if name and "stop_gradient" not in name and _GRADIENT_CALL.search(name):
                    return True
                break
    return False


def _out_read_as_gradient(fn: Function, name: str, info, assignments) -> bool:
    """Whether ``out`` is read the way an incoming gradient is, so that "did you mean dout?" is the likely fix:
    as a whole value (not ``out[1]``, ``out.shape``), once in each gradient that reads it (``out * (1 - out)`` is
    a local derivative missing dout, not a mix-up of the names)."""
    for leaf in _name_leaves(fn.body, name):
        nxt = leaf.get_next_sibling()
        if nxt is not None and nxt.type == "trailer":
            return False
    for r in info.returns:
        entries = r.shape.entries if r.shape.kind in ("tuple", "list") else None
        items = entries if entries is not None else ([r.shape.node] if r.shape.node is not None else [])
        for item in items:
            node = _resolve(item, assignments)
            if sum(1 for _ in _name_leaves(node, name)) > 1:
                return False
    return True


def _name_leaves(node, name: str):
    if node.type == "name":
        if node.value == name:
            yield node
        return
    for n in iter_scope_nodes(node):
        if n.type == "name" and n.value == name:
            prev = n.get_previous_sibling()
            if not (n.parent is not None and n.parent.type == "trailer" and prev == "."):
                yield n


# Imports that make a file a test module: its custom-bprop cells are fixtures whose gradients are picked by hand.
_TEST_IMPORTS = ("pytest", "unittest", "tests.", "mark_utils")


def _in_test(ctx: Context, anchors) -> bool:
    """Whether a bprop is a test's fixture: the file imports a test framework, or an anchor (a Cell's class
    statement; an ops.Custom bprop's def and the ``ops.Custom(...)`` call) stands in a test function or test class
    (what pytest and unittest collect: ``def test...``, ``class Test...``), or is named by one (MindSpore's own
    gradient tests). (For a Cell all of it is in what the rule memo keys it by: the imports whole, the top-level
    statement the class stands in, the statements naming it; a file with an ops.Custom site is never read back
    from the memo.)"""
    p = ctx.program
    if any(full == t or full.startswith(t + ".") or (t.endswith(".") and full.startswith(t)) or t in full.split(".")
           for full in p.imports.values() for t in _TEST_IMPORTS):
        return True
    for node, name in anchors:
        if _inside_test(node):
            return True
        if name and _named_by_test(p, node, name):
            return True
    return False


def _is_test_def(node) -> bool:
    if node.type == "funcdef":
        return node.name.value.startswith("test")
    return node.type == "classdef" and node.name.value.startswith("Test")


def _inside_test(node) -> bool:
    """Whether ``node`` stands in the body of a test function or a test class (not counting itself)."""
    n = node.parent
    while n is not None:
        if n.type in ("funcdef", "classdef") and _is_test_def(n):
            return True
        n = n.parent
    return False


def _named_by_test(p, node, name: str) -> bool:
    """Whether a top-level test function or test class other than the one holding ``node`` names ``name`` (the
    file's tests read through the program: they are other statements)."""
    own = node
    while own.parent is not None and own.parent.type != "file_input":
        own = own.parent
    if own.type == "decorated":
        own = own.children[-1]
    for top in p.test_definitions():
        if top is not own and _is_test_def(top) and name in statement_words(p.statement_facts(top), top):
            return True
    return False


# ------------------------------------------------------------------ reading dout

def _name_reads(node, name: str):
    """Name leaves ``name`` under ``node`` that refer to a variable (not ``x.name`` nor ``f(name=...)``)."""
    for n in iter_scope_nodes(node):
        if n.type != "name" or n.value != name:
            continue
        parent = n.parent
        prev = n.get_previous_sibling()
        if parent is not None and parent.type == "trailer" and prev == ".":
            continue
        if parent is not None and parent.type == "argument" and parent.children[0] is n and len(parent.children) >= 2 \
                and parent.children[1] == "=":
            continue
        yield n


def _statements(body):
    """The top-level statements of a function body, in order (``a; b`` gives two)."""
    if body.type != "suite":
        return [body]  # a lambda's expression, or a one-line ``def f(): return x``
    result = []
    for child in body.children:
        if child.type == "simple_stmt":
            result.extend(c for c in child.children if c.type not in ("newline",) and c != ";")
        elif child.type not in ("newline", "indent", "dedent"):
            result.append(child)
    return result


def _dout_state(fn: Function, name: str):
    """("read", None) when the incoming gradient may be read, ("never", None) when the name never appears, or
    ("rebound", stmt) when the first statement naming it rebinds it unconditionally (the incoming value is lost)."""
    for stmt in _statements(fn.body):
        if not any(True for _ in _name_reads(stmt, name)):
            continue
        return ("rebound", stmt) if _rebinds(stmt, name) else ("read", None)
    return "never", None


def _rebinds(stmt, name: str) -> bool:
    """``name = value`` (value not naming it) or ``del name``: the incoming value is gone, unread."""
    if stmt.type == "del_stmt":
        target = stmt.children[1]
        return target.type == "name" and target.value == name
    if stmt.type != "expr_stmt":
        return False
    children = stmt.children
    if len(children) >= 3 and children[1] == "=":
        targets, value = children[:-1:2], children[-1]
        if any(True for _ in _name_reads(value, name)):
            return False
        return any(t.type == "name" and t.value == name for t in targets) and all(
            t.type == "name" or not any(True for _ in _name_reads(t, name)) for t in targets)
    if len(children) == 2 and children[1].type == "annassign":
        ann = children[1]
        return (children[0].type == "name" and children[0].value == name and len(ann.children) >= 4
                and not any(True for _ in _name_reads(ann, name)))
    return False


def _uses_introspection(body) -> bool:
    return any(n.type == "name" and n.value in _INTROSPECTION for n in iter_scope_nodes(body))


def _is_stub(fn: Function) -> bool:
    """A body of only ``pass`` / ``...`` / ``raise`` / a docstring: nothing to judge."""
    for stmt in _statements(fn.body):
        if stmt.type in _STUB_STATEMENTS:
            continue
        if stmt.type in ("string", "strings") or (stmt.type == "keyword" and stmt.value == "pass"):
            continue
        if stmt.type == "operator" and stmt.value == "...":
            continue
        if stmt.type == "atom" and stmt.get_code().strip() == "...":
            continue
        return False
    return True


# ------------------------------------------------------------------ zero gradients

def _all_zero(shape, assignments) -> bool:
    """Every gradient the return gives is a zero (or None, which MindSpore turns into zeros or leaves out)."""
    if shape.kind == "none":
        return True
    if shape.kind in ("tuple", "list"):
        entries = shape.entries
        if entries is not None:
            return all(_looks_zero(item, assignments, 0) for item in entries)
        # A computed sequence whose entries are not known one by one (``(g,) * n``, a helper's result): judged by
        # its expression (``(0,) * n``, ``tuple(zeros)``), never vacuously zero for having no entries written out.
    return shape.node is not None and _looks_zero(shape.node, assignments, 0)


def _looks_zero(node, assignments, depth: int) -> bool:
    code = node.get_code().strip()
    if "zero" in code.lower():
        return True  # zeros_like(x), ops.ZerosLike()(x), np.zeros(...), self._zero_grads(...)
    t = node.type
    if t == "keyword" and node.value == "None":
        return True
    if t == "number":
        try:
            return complex(node.value.replace("_", "")) == 0
        except ValueError:
            return False
    if t == "atom" and node.children[0] == "(" and len(node.children) == 3:
        inner = node.children[1]
        if inner.type == "testlist_comp":
            return all(_looks_zero(c, assignments, depth) for c in inner.children if c != ",")
        return _looks_zero(inner, assignments, depth)
    if t == "name" and depth < 3:
        values = assignments.get(node.value, [])
        return len(values) == 1 and values[0] is not None and _looks_zero(values[0], assignments, depth + 1)
    if t == "term":
        # x * 0: a product with a zero factor
        ops_ = node.children[1::2]
        return all(o == "*" for o in ops_) and any(_looks_zero(c, assignments, depth) for c in node.children[::2])
    if t in ("power", "atom_expr") and node.children[-1].type == "trailer" and node.children[-1].children[0] == "(":
        # ops.fill(dtype, shape, 0), ops.full_like(x, 0), ops.full(shape, 0)
        callee = node.children[-2].get_code() if len(node.children) >= 2 else ""
        trailer = node.children[-1]
        if callee.rsplit(".", 1)[-1] in ("Tensor", "tensor", "array", "asarray", "float16", "float32", "float64",
                                          "int32", "int64", "float") and len(trailer.children) == 3:
            # Tensor(0.0), ms.Tensor(0, ms.float32), np.array(0.0): a constant zero gradient
            args = trailer.children[1]
            first = args.children[0] if args.type == "arglist" else args
            if first.type == "argument":
                return False
            return _looks_zero(first, assignments, depth)
        if any(k in callee for k in ("fill", "full")) and len(trailer.children) == 3:
            args = trailer.children[1]
            last = args.children[-1] if args.type == "arglist" else args
            if last.type == "argument":
                last = last.children[-1]
            return _looks_zero(last, assignments, depth)
    return False


def _is_placeholder(shape, assignments, inputs) -> bool:
    """Every gradient is its own input plus or minus a literal: the demonstration bprop of MindSpore's
    "Customizing Reverse Propagation Function of Cell" tutorial (oracle case 082), not a derivative."""
    if shape.kind != "tuple" or not shape.items or len(shape.items) > len(inputs):
        return False
    for item, name in zip(shape.items, inputs):
        node = _resolve(item, assignments)
        if node.type == "name" and node.value == name and len(inputs) > 1:
            continue  # the input itself as its own gradient (MindSpore's fixtures: ``return x, boxes, box_indices``)
        if _is_add_call(node, name):
            continue  # ``self.add(5, x)``, ``P.Add()(y, 9)``: the placeholder through an Add primitive
        if node.type != "arith_expr" or len(node.children) != 3 or node.children[1] not in ("+", "-"):
            return False
        left, right = node.children[0], node.children[2]
        if not ((left.type == "name" and left.value == name and right.type == "number")
                or (node.children[1] == "+" and right.type == "name" and right.value == name and left.type == "number")):
            return False
    return True


def _is_add_call(node, name: str) -> bool:
    """``<...>add(a, b)`` / ``<...>Add()(a, b)`` with one argument the input ``name`` and the other a number."""
    if node.type not in ("power", "atom_expr") or len(node.children) < 2:
        return False
    trailer = node.children[-1]
    if trailer.type != "trailer" or trailer.children[0] != "(" or len(trailer.children) != 3:
        return False
    head = node.children[-2].get_code().strip().rsplit(".", 1)[-1]
    if head not in ("add", "Add", "Add()", ")") and not head.endswith("add"):
        return False
    if head == ")" and not node.get_code().replace(" ", "").split("(")[0].endswith("Add"):
        return False
    args = trailer.children[1]
    if args.type != "arglist":
        return False
    items = [c for c in args.children if c != ","]
    if len(items) != 2:
        return False
    kinds = sorted("input" if c.type == "name" and c.value == name else "number" if c.type == "number" else "other"
                   for c in items)
    return kinds == ["input", "number"]


def _resolve(node, assignments):
    """The value of a name assigned once in the function, else the node itself."""
    for _ in range(3):
        if node.type != "name":
            break
        values = assignments.get(node.value, [])
        if len(values) != 1 or values[0] is None:
            break
        node = values[0]
    return node


# ------------------------------------------------------------------ `out` as the incoming gradient

def _returns_depend_on(fn: Function, name: str, info) -> bool:
    """Whether a returned expression reads ``name``, directly or through local assignments."""
    tainted = {name}
    if fn.body.type == "suite":
        changed = True
        while changed:
            changed = False
            for n in iter_scope_nodes(fn.body):
                if n.type != "expr_stmt" or len(n.children) < 3 or n.children[1] != "=":
                    continue
                if not any(r.value in tainted for r in _reads(n.children[-1])):
                    continue
                for target in n.children[:-1:2]:
                    for leaf in iter_scope_nodes(target):
                        if leaf.type == "name" and leaf.value not in tainted and leaf.is_definition():
                            tainted.add(leaf.value)
                            changed = True
    for r in info.returns:
        node = r.shape.node if r.shape.node is not None else r.stmt
        if any(n.value in tainted for n in _reads(node)):
            return True
    return False


def _reads(node):
    for n in iter_scope_nodes(node):
        if n.type == "name":
            prev = n.get_previous_sibling()
            if not (n.parent is not None and n.parent.type == "trailer" and prev == "."):
                yield n
