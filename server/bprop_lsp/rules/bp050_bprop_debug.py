"""BP050: ``cell.bprop_debug = True`` on a cell with a custom bprop fails in GRAPH_MODE."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.definitions import ClassInfo
from ..engine.model import Related
from ..engine.program import Program
from ..engine.trees import call_arguments, call_of, dotted, iter_scope_nodes
from ._signature import def_span
from .base import GRAPH, Draft, Invalid, Rule, Valid

CELL_WALKS = {"cells_and_names": 1, "cells": 0}  # method -> index of the cell in each item of the loop


class BpropDebug(Rule):
    code = "BP050"
    name = "bprop-debug-graph"
    summary = ("Setting bprop_debug = True on a cell with a custom bprop breaks GRAPH_MODE, even for a correct bprop "
               "(on a cell without its own bprop it is harmless). Followed: `True`, a module constant, a parameter "
               "defaulting to True that no call in the file sets otherwise; the cell as `self`, a variable, "
               "`self.child`, or every cell of a `for ... in net.cells_and_names()` / `net.cells()` loop.")
    mindspore_says = "GRAPH: RuntimeError: The pointer[graph] is null. PYNATIVE: runs."
    valid = (
        Valid("from mindspore import nn\nclass P(nn.Cell):\n    def construct(self, x):\n        return x\n\n"
              "net = P()\nnet.bprop_debug = True\n", "no custom bprop on that cell: harmless"),
        Valid("from mindspore import nn\nclass D(nn.Cell):\n    def __init__(self, debug=False):\n"
              "        super().__init__()\n        self.bprop_debug = debug\n    def construct(self, x):\n"
              "        return x\n    def bprop(self, x, out, dout):\n        return (dout,)\n",
              "the flag defaults to False"),
    )
    invalid = (
        Invalid("from mindspore import nn\nclass D(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(self, x, out, dout):\n        return (dout,)\n\nnet = D()\nnet.bprop_debug = True\n",
                at="5:9", message=("bprop_debug = True reaches D, which has a custom bprop: GRAPH_MODE fails ('The "
                                   "pointer[graph] is null'); drop bprop_debug or run in PYNATIVE_MODE [fails in "
                                   "GRAPH_MODE]")),
        Invalid("from mindspore import nn\nclass GradReverse(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(self, x, out, dout):\n        return (-dout,)\n\nclass Model(nn.Cell):\n"
                "    def __init__(self, debug=True):\n        super().__init__()\n        self.grl = GradReverse()\n"
                "        self.grl.bprop_debug = debug\n    def construct(self, x):\n        return self.grl(x)\n\n"
                "model = Model()\n",
                note="on a child cell, through a parameter that defaults to True",
                at="5:9", message=("bprop_debug = True reaches GradReverse, which has a custom bprop: GRAPH_MODE "
                                   "fails ('The pointer[graph] is null'); drop bprop_debug or run in PYNATIVE_MODE "
                                   "[fails in GRAPH_MODE]")),
        Invalid("from mindspore import nn\nclass GradReverse(nn.Cell):\n    def construct(self, x):\n        return x\n"
                "    def bprop(self, x, out, dout):\n        return (-dout,)\n\nclass Model(nn.Cell):\n"
                "    def __init__(self):\n        super().__init__()\n        self.grl = GradReverse()\n"
                "    def construct(self, x):\n        return self.grl(x)\n\nnet = Model()\n"
                "for _, cell in net.cells_and_names():\n    cell.bprop_debug = True\n",
                note="in a loop over every cell of the network",
                at="5:9", message=("bprop_debug = True reaches GradReverse, which has a custom bprop: GRAPH_MODE "
                                   "fails ('The pointer[graph] is null'); drop bprop_debug or run in PYNATIVE_MODE "
                                   "[fails in GRAPH_MODE]")),
    )

    def check(self, ctx: Context):
        p = ctx.program
        sites = {id(s.cls): s for s in ctx.cell_sites if s.function is not None}
        if not sites:
            return
        reported: set[int] = set()
        for node in p.nodes_matching("bprop_debug", ("expr_stmt",)):
            if len(node.children) != 3 or node.children[1] != "=":
                continue
            target, value = node.children[0], node.children[2]
            if target.type not in ("power", "atom_expr") or len(target.children) < 2:
                continue
            trailer = target.children[-1]
            if trailer.children[0] != "." or trailer.children[1].value != "bprop_debug":
                continue
            if not _is_true(p, value, node):
                continue
            owner = _dotted_prefix(target.children[:-1])
            if owner is None:
                continue
            for cls in _flagged_classes(p, owner, node):
                site = sites.get(id(cls))
                if site is None or id(site) in reported:
                    continue
                reported.add(id(site))
                yield Draft(def_span(ctx, site.function),
                            f"bprop_debug = True reaches {cls.name}, which has a custom bprop: GRAPH_MODE fails "
                            f"('The pointer[graph] is null'); drop bprop_debug or run in PYNATIVE_MODE",
                            fails_in=frozenset({GRAPH}),
                            related=(Related(p.span(node), "bprop_debug set here"),),
                            noqa_line=site.function.def_line)


def _dotted_prefix(children) -> str | None:
    """``a.b`` for the leading name and attribute trailers of an expression's children, else None."""
    if not children or children[0].type != "name":
        return None
    parts = [children[0].value]
    for trailer in children[1:]:
        if trailer.type != "trailer" or trailer.children[0] != ".":
            return None
        parts.append(trailer.children[1].value)
    return ".".join(parts)


def _is_true(p: Program, value, stmt, depth: int = 0) -> bool:
    """Whether ``value`` is True when the statement runs: the literal, a module constant bound once to True, or a
    parameter of the enclosing function whose default is True and that no call in the file passes otherwise."""
    if value.type == "keyword":
        return value.value == "True"
    if value.type != "name" or depth > 2:
        return False
    func = stmt.search_ancestor("funcdef")
    if func is not None:
        params = [q for q in func.get_params() if q.name.value == value.value]
        if params:
            param = params[0]
            if param.default is None or not (param.default.type == "keyword" and param.default.value == "True"):
                return False
            return not _some_call_may_unset(p, func, param)
    values = p.assignments.get(value.value, [])
    return len(values) == 1 and _is_true(p, values[0], values[0].parent, depth + 1)


def _some_call_may_unset(p: Program, func, param) -> bool:
    """Whether a call of ``func`` in the file passes ``param`` anything but True (positionally or by name)."""
    params = func.get_params()
    index = params.index(param)
    cls_node = func.search_ancestor("classdef")
    if func.name.value == "__init__" and cls_node is not None and func.parent.parent is cls_node:
        callee, index = cls_node.name.value, index - 1  # Cls(...) passes everything after self
    else:
        callee = func.name.value
    if param.star_count:
        return True
    for node in p.nodes_matching(callee, ("power", "atom_expr")):
        c = call_of(node)
        if not c or not c[0] or c[0].rsplit(".", 1)[-1] != callee:
            continue
        positional, keywords, has_star = call_arguments(c[1])
        given = keywords.get(param.name.value)
        if given is None and 0 <= index < len(positional):
            given = positional[index]
        if given is None:
            if has_star:
                return True
            continue
        if not (given.type == "keyword" and given.value == "True"):
            return True
    return False


def _flagged_classes(p: Program, owner: str, stmt) -> list[ClassInfo]:
    """The Cell classes whose instances ``<owner>.bprop_debug = ...`` sets the flag on."""
    net = _loop_over_cells(stmt, owner) if "." not in owner else None
    if net is not None:
        roots = _classes_of(p, net, stmt)
        if roots:
            return _subtree(p, roots)
        return [c for c in p.classes if p.is_cell(c)]  # the network is not known: any cell of the file
    return _classes_of(p, owner, stmt)


def _classes_of(p: Program, text: str, stmt) -> list[ClassInfo]:
    """The Cell classes an instance named ``self``, ``self.attr`` or ``name`` at ``stmt`` can be of."""
    if text == "self":
        cls_node = stmt.search_ancestor("classdef")
        return [c for c in p.classes if c.node is cls_node]
    if text.startswith("self.") and text.count(".") == 1:
        cls_node = stmt.search_ancestor("classdef")
        return _instance_classes(p, _self_attr_values(cls_node, text[5:]) if cls_node is not None else [])
    if "." in text:
        return []
    return _instance_classes(p, p.assignments.get(text, []))


def _loop_over_cells(stmt, name: str) -> str | None:
    """The network (as written, e.g. ``net``, ``self``) when ``name`` is the cell of an enclosing
    ``for ... in net.cells()`` / ``net.cells_and_names()`` loop, else None."""
    node = stmt.parent
    while node is not None and node.type not in ("funcdef", "classdef", "file_input"):
        if node.type == "for_stmt":
            targets, iterable = node.children[1], node.children[3]
            c = call_of(iterable) if iterable.type in ("power", "atom_expr") else None
            method = c[0].rsplit(".", 1)[-1] if c and c[0] and "." in c[0] else None
            if method in CELL_WALKS:
                if targets.type == "name":
                    picked = targets if CELL_WALKS[method] == 0 else None
                else:
                    names = [t for t in targets.children if t.type != "operator"]
                    index = CELL_WALKS[method]
                    picked = names[index] if len(names) == 2 and index == 1 else None
                if picked is not None and picked.type == "name" and picked.value == name:
                    return c[0].rsplit(".", 1)[0]
        node = node.parent
    return None


def _instance_classes(p: Program, values) -> list[ClassInfo]:
    found = []
    for value in values:
        c = call_of(value) if getattr(value, "type", None) in ("power", "atom_expr") else None
        if c and c[0] and "." not in c[0]:
            cls = p.class_named(c[0])
            if cls is not None and p.is_cell(cls):
                found.append(cls)
    return found if len(found) == len(values) else []


def _self_attr_values(cls_node, attr: str) -> list:
    values = []
    for node in iter_scope_nodes(cls_node):
        if node.type == "expr_stmt" and len(node.children) == 3 and node.children[1] == "=":
            if dotted(node.children[0]) == f"self.{attr}":
                values.append(node.children[-1])
    return values


def _subtree(p: Program, roots: list[ClassInfo]) -> list[ClassInfo]:
    """The classes of a network and of the cells it builds as ``self.x = Cls(...)`` (recursively, this file)."""
    seen: dict[int, ClassInfo] = {}
    stack = list(roots)
    while stack:
        cls = stack.pop()
        if id(cls) in seen:
            continue
        seen[id(cls)] = cls
        for k in p.mro(cls):
            if isinstance(k, str):
                continue
            for node in iter_scope_nodes(k.node):
                if node.type in ("power", "atom_expr"):
                    c = call_of(node)
                    if c and c[0] and "." not in c[0]:
                        child = p.class_named(c[0])
                        if child is not None and p.is_cell(child):
                            stack.append(child)
    return list(seen.values())
