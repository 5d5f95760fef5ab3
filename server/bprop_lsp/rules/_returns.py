"""What a bprop returns, read from its ``return`` statements with light, local dataflow.

Each return is classified as a tuple of known length, a list, ``None``, a bare (Tensor) value, or
unknown. Only literal shapes and names bound once to a literal in the same function count; calls,
subscripts, tuple repetition and everything else are unknown and left alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.definitions import Function
from ..engine.parsing import leaves as leaves_of  # (shared with BP023/BP025: one iterative walk)
from ..engine.trees import NodeView, is_within, iter_own_nodes, scope_of, unwrap_parens

ARITH = {"arith_expr", "term", "factor", "power", "shift_expr", "and_expr", "xor_expr", "expr"}


@dataclass
class Shape:
    kind: str  # "tuple" | "list" | "none" | "value" | "unknown" | "dict"
    items: list = field(default_factory=list)  # element nodes for a tuple/list display written out in the return
    node: object = None  # the expression (None for a bare/missing return)
    via_name: object = None  # the Name the return used, when resolved through an assignment
    # A tuple/list whose length is known but whose entries are not one display each (``grads + (dx,)``, a helper's
    # result, ``tuple([...])``): ``items`` is empty, ``n`` the length. Rules reading entries skip these.
    computed: bool = False
    n: int | None = None
    # Every length the value can have when more than one can (``grads += (dx,)`` under ``if self.flag:``); None: one.
    lengths: frozenset | None = None
    # The entries' expressions in order, when each is known (displays, concatenations, ``.append(x)``, starred
    # displays): where a ``None`` entry is looked for. None when unknown.
    elements: list | None = None
    # The kinds of the entries of a forward output (``out``/``dout`` of a construct returning a tuple display).
    element_kinds: tuple | None = None

    @property
    def length(self) -> int:
        """The length (the largest one when several are possible; 0 when unknown: see ``known_length``)."""
        if self.lengths:
            return max(self.lengths)
        return self.n if self.n is not None else len(self.items)

    @property
    def min_length(self) -> int:
        return min(self.lengths) if self.lengths else self.length

    @property
    def known_length(self) -> bool:
        return not (self.computed and self.n is None and not self.lengths)

    @property
    def entries(self) -> list | None:
        if self.elements is not None:
            return self.elements
        return None if self.computed else self.items

    def length_text(self) -> str:
        """``2`` or ``1 or 2`` (what the message says the bprop returns)."""
        if self.lengths and len(self.lengths) > 1:
            ordered = sorted(self.lengths)
            return ", ".join(map(str, ordered[:-1])) + f" or {ordered[-1]}"
        return str(self.length)


@dataclass
class ReturnInfo:
    stmt: object  # return_stmt node, or the lambda body
    shape: Shape


@dataclass
class Returns:
    returns: list[ReturnInfo]
    missing: bool  # the body can fall off its end without returning (and has no return at all)
    # Some path reaches the end of the body although other paths return (Python then returns None).
    falls_through: bool = False
    # The ``if`` conditions on the way to that end, when it does (for the message).
    fall_conditions: tuple = ()


def _elements(node):
    """Elements of a tuple display ``a, b`` / ``(a, b)`` / ``()`` or None if not a tuple display."""
    if node.type == "atom" and node.children[0] == "(":
        if len(node.children) == 2:
            return []
        inner = node.children[1]
        if inner.type == "testlist_comp":
            if any(c.type == "comp_for" or c.type == "sync_comp_for" for c in inner.children):
                return None  # generator expression
            if any(c == "," for c in inner.children):
                return [c for c in inner.children if c != ","]
        return None
    if node.type in ("testlist_star_expr", "testlist", "exprlist"):
        return [c for c in node.children if c != ","]
    return None


_MAX_DEPTH = 6
_MAX_ALTERNATIVES = 16  # values a name can hold at a point (one per combination of untaken/taken branches)

# Ops and Tensor methods that return one Tensor (so a bare call of one is a Tensor, not a tuple). Ops that return
# several Tensors (split, unstack, meshgrid, topk, max with an axis …) are not listed: their result stays unknown.
SINGLE_TENSOR_CALLS = frozenset("""
    mul add sub div neg exp log log1p sin cos tan tanh sigmoid relu abs sign sqrt rsqrt square pow matmul mm bmm
    batch_matmul transpose reshape zeros_like ones_like zeros ones cast clip_by_value clamp clip where select
    expand_dims squeeze unsqueeze broadcast_to reduce_sum reduce_mean sum mean fill full_like tile maximum minimum
    softmax log_softmax astype masked_fill gather flatten view expand_as repeat erf floor ceil round reciprocal
    logsumexp norm cumsum outer dot scalar_to_tensor stop_gradient ReLU Mul Add Sub Div RealDiv Neg Exp Log Sin Cos
    Tanh Sigmoid Abs Sign Sqrt Square Pow MatMul BatchMatMul Transpose Reshape ZerosLike OnesLike Cast Select
    ExpandDims Squeeze BroadcastTo ReduceSum ReduceMean Fill Tile Maximum Minimum Softmax
    stack concat cat hstack vstack flip roll one_hot pad slice strided_slice gather_nd gather_elements index_select
    masked_select tensor_scatter_update scatter_nd isnan isinf logical_and logical_or logical_not equal not_equal
    greater less greater_equal less_equal mul_no_nan addn einsum tensordot diag triu tril sinh cosh asin acos atan
    atan2 erfc expm1 log2 log10 relu6 gelu silu elu leaky_relu softplus hardswish mish selu
    Concat Stack AddN ReLU6 GeLU Gather GatherNd OneHot Pad Slice StridedSlice Erf Equal Greater Less LogicalNot
""".split())
TENSOR_CONSTRUCTORS = frozenset({"mindspore.Tensor", "mindspore.common.tensor.Tensor", "mindspore.common.Tensor"})


def _read_outside(program) -> None:
    """Note that a reading looked outside the function (a module constant, another function, the class): it is
    then not kept with the function's statement for the next program (see ``returns_of``)."""
    if program is not None:
        program.__dict__["_returns_reads"] = program.__dict__.get("_returns_reads", 0) + 1


def _truth(program, cond):
    """``const_truth`` of a condition (module flags, literals), noting a module read."""
    if program is None:
        return None
    from ..engine.conditions import const_truth

    if any(leaf.type == "name" for leaf in leaves_of(cond)):
        _read_outside(program)
    return const_truth(program, cond)


def _seq(kind: str, node, lengths, elements=None) -> Shape:
    lengths = frozenset(lengths)
    if len(lengths) == 1:
        return Shape(kind, node=node, computed=True, n=next(iter(lengths)), elements=elements)
    return Shape(kind, node=node, computed=True, n=max(lengths), lengths=lengths)


def _length_set(shape: Shape) -> frozenset:
    return shape.lengths if shape.lengths else frozenset({shape.length})


def _concat(kind: str, node, parts: list) -> Shape:
    """The concatenation of known-length sequences (``a + b``, starred entries): every sum of their lengths."""
    lengths = {0}
    for p in parts:
        lengths = {a + b for a in lengths for b in _length_set(p)}
        if len(lengths) > _MAX_ALTERNATIVES:
            return Shape("unknown", node=node)
    elements = []
    for p in parts:
        if elements is not None and p.entries is not None and not p.lengths:
            elements = elements + list(p.entries)
        else:
            elements = None
    return _seq(kind, node, lengths, elements)


def _int_value(node, fn, assignments, depth, program, env) -> int | None:
    """An int the expression denotes: a literal, a local bound once to one, or a module constant."""
    from ..engine.values import int_literal, module_literal

    node = unwrap_parens(node)
    found = int_literal(node)
    if found is not None or node.type != "name":
        return found
    if env and node.value in env:
        return None
    local = assignments.get(node.value)
    if local:
        if len(local) == 1 and local[0] is not None and local[0] is not AUGMENTED and depth < _MAX_DEPTH:
            return _int_value(local[0], fn, assignments, depth + 1, program, env)
        return None
    if program is None:
        return None
    _read_outside(program)
    value = module_literal(program, node)
    return int_literal(value) if value is not None else None


def classify(node, fn: Function, assignments: dict, depth: int = 0, program=None, env: dict | None = None) -> Shape:
    """The abstract value of an expression: bounded in depth, so self-referencing bindings
    (``dx = dx * 2``) and mutually recursive helpers end as unknown. ``env``: values of names at this point
    (the flow reading of ``_flow_value``), consulted before the function's assignments."""
    if node is None:
        return Shape("none")
    if depth > _MAX_DEPTH:
        return Shape("unknown", node=node)
    node = unwrap_parens(node)
    t = node.type
    if t == "keyword" and node.value == "None":
        return Shape("none", node=node)
    items = _elements(node)
    if items is not None:
        if any(i.type == "star_expr" for i in items):
            return _starred(node, items, "tuple", fn, assignments, depth, program, env)
        return Shape("tuple", items=items, node=node, elements=items)
    if t == "atom" and node.children[0] == "[":
        if len(node.children) == 2:
            return Shape("list", items=[], node=node, elements=[])
        inner = node.children[1]
        if inner.type == "testlist_comp":
            if any(c.type in ("comp_for", "sync_comp_for") for c in inner.children):
                length = _comprehension_length(node, fn, assignments, depth, program, env)
                return Shape("list", node=node, computed=True, n=length)
            entries = [c for c in inner.children if c != ","]
            if any(c.type == "star_expr" for c in entries):
                return _starred(node, entries, "list", fn, assignments, depth, program, env)
            return Shape("list", items=entries, node=node, elements=entries)
        if inner.type == "star_expr":
            return _starred(node, [inner], "list", fn, assignments, depth, program, env)
        return Shape("list", items=[inner], node=node, elements=[inner])
    if t == "atom" and node.children[0] == "{":
        return Shape("dict", node=node)
    if t in ("number", "string", "strings", "fstring"):
        return Shape("value", node=node)
    if t == "name":
        return _classify_name(node, fn, assignments, depth, program, env)
    if t == "arith_expr" and all(op == "+" for op in node.children[1::2]):
        parts = [classify(c, fn, assignments, depth + 1, program, env) for c in node.children[::2]]
        if any(p.kind in ("tuple", "list") for p in parts):
            kind = parts[0].kind
            if all(p.kind == kind and p.known_length for p in parts):
                return _concat(kind, node, parts)
            return Shape("unknown", node=node)
    if t == "term" and len(node.children) == 3 and node.children[1] == "*":
        left, right = (classify(c, fn, assignments, depth + 1, program, env) for c in node.children[::2])
        for seq, count in ((left, node.children[2]), (right, node.children[0])):
            if seq.kind in ("tuple", "list") and seq.known_length:
                k = _int_value(count, fn, assignments, depth + 1, program, env)
                if k is None:
                    return Shape("unknown", node=node)
                k = max(k, 0)
                elements = list(seq.entries) * k if seq.entries is not None and not seq.lengths else None
                return _seq(seq.kind, node, {n * k for n in _length_set(seq)}, elements)
    if t == "test" and len(node.children) == 5 and node.children[1] == "if":
        truth = _truth(program, node.children[2])
        if truth is not None:
            return classify(node.children[0] if truth else node.children[4], fn, assignments, depth + 1, program, env)
        arms = [classify(node.children[0], fn, assignments, depth + 1, program, env),
                classify(node.children[4], fn, assignments, depth + 1, program, env)]
        if arms[0].kind == arms[1].kind and arms[0].kind in ("tuple", "list") and arms[0].known_length \
                and arms[1].known_length:
            return _seq(arms[0].kind, node, _length_set(arms[0]) | _length_set(arms[1]))
        if arms[0].kind == arms[1].kind and arms[0].kind in ("value", "none", "dict"):
            return Shape(arms[0].kind, node=node)
        return Shape("unknown", node=node)
    if t in ARITH and _is_arith(node, fn, assignments, depth + 1, program):
        return Shape("value", node=node)
    if t in ("power", "atom_expr"):
        subscript = _classify_subscript(node, fn, assignments, depth, program, env)
        if subscript is not None:
            return subscript
        return _classify_call(node, fn, assignments, depth, program, env)
    return Shape("unknown", node=node)


def _starred(node, entries, kind, fn, assignments, depth, program, env) -> Shape:
    """``(*head, dx)`` / ``[*a, *b]``: the display's length from its starred parts' lengths."""
    parts = []
    for entry in entries:
        if entry.type == "star_expr":
            inner = classify(entry.children[1], fn, assignments, depth + 1, program, env)
            if inner.kind not in ("tuple", "list") or not inner.known_length:
                return Shape("unknown", node=node)
            parts.append(inner)
        else:
            parts.append(Shape("tuple", items=[entry], node=entry, elements=[entry]))
    return _concat(kind, node, parts)


def _classify_name(node, fn, assignments, depth, program, env) -> Shape:
    if env is not None and node.value in env:
        found = env[node.value]
        return Shape(found.kind, items=found.items, node=found.node, via_name=node, computed=True if found.kind in (
            "tuple", "list") else found.computed, n=found.length if found.kind in ("tuple", "list") and found.known_length
            else found.n, lengths=found.lengths, elements=found.entries, element_kinds=found.element_kinds)
    values = assignments.get(node.value, ())
    if not values:
        return Shape("unknown", node=node)  # a module name (its constants are read where a count is wanted)
    if fn.node.type != "lambdef" and any(v is None for v in values) and _is_param(fn, node.value) \
            and len([v for v in values if v is None]) == 1 and len(values) == 1:
        forward = _forward_output(fn, node.value, program, depth)
        if forward is not None:
            forward.via_name = node
            return forward
        return Shape("unknown", node=node)
    flowed = _flow_value(fn, node, assignments, depth, program)
    if flowed is not None:
        flowed.via_name = node
        return flowed
    return Shape("unknown", node=node)


def _is_param(fn, name: str) -> bool:
    return any(p.name == name for p in fn.params)


def _classify_subscript(node, fn, assignments, depth, program, env) -> Shape | None:
    """``out[1]`` / ``dout[0]``: an entry of the forward output (a Tensor when construct returns a Tensor, the
    entry's kind when it returns a tuple display). None when ``node`` is not such a subscript."""
    children = node.children
    if len(children) != 2 or children[0].type != "name" or children[1].type != "trailer" or children[1].children[0] != "[":
        return None
    base = classify(children[0], fn, assignments, depth + 1, program, env)
    from ..engine.values import int_literal

    if base.kind == "value" and base.element_kinds == ("tensor",):
        return Shape("value", node=node)  # a slice of a Tensor is a Tensor
    if base.kind == "tuple" and base.element_kinds is not None:
        k = int_literal(children[1].children[1])
        if k is not None and -len(base.element_kinds) <= k < len(base.element_kinds) and base.element_kinds[k] == "value":
            return Shape("value", node=node)
    return Shape("unknown", node=node)


def _forward_output(fn, name: str, program, depth) -> Shape | None:
    """What a Cell bprop's ``out``/``dout`` (its last two positional parameters) hold: construct's output, when
    every class of the file that gets this bprop runs the same ``construct`` and all its returns agree (a Tensor:
    a value; a tuple display: a tuple of that length, its entries' kinds kept)."""
    if program is None or fn.name != "bprop" or fn.node.type != "funcdef" or depth > _MAX_DEPTH - 2:
        return None
    positional = [p for p in fn.params if p.kind in ("positional", "posonly")]
    if len(positional) < 3 or any(p.kind in ("vararg", "varkw", "kwonly") for p in fn.params) \
            or name not in (positional[-1].name, positional[-2].name) or fn.decorator_names:
        return None
    cls = _enclosing_class(program, fn)
    if cls is None or not program.is_cell(cls):
        return None
    _read_outside(program)
    construct = program.lookup(cls, "construct")
    if construct is None or construct.function is None or construct.value is not None or construct.ambiguous:
        return None
    for other in program.classes:  # a subclass with its own construct: out has its shape there
        if other is not cls and cls in program.mro(other):
            member = program.lookup(other, "construct")
            if member is None or member.function is None or member.function.node is not construct.function.node:
                return None
            bprop = program.lookup(other, "bprop")
            if bprop is None or bprop.function is None or bprop.function.node is not fn.node:
                return None
    found = returns_of(construct.function, program, depth + 2)
    if found is None or not found.returns or found.falls_through or found.missing:
        return None
    shapes = [r.shape for r in found.returns]
    if all(s.kind == "value" for s in shapes):
        return Shape("value", element_kinds=("tensor",))
    if all(s.kind == "tuple" and not s.computed and not s.lengths for s in shapes) and len({s.length for s in shapes}) == 1:
        c_assign = local_assignments(construct.function)
        kinds = []
        for i in range(shapes[0].length):
            each = {classify(s.items[i], construct.function, c_assign, depth + 2, program).kind for s in shapes}
            kinds.append(each.pop() if len(each) == 1 else "unknown")
        return Shape("tuple", computed=True, n=shapes[0].length, element_kinds=tuple(kinds))
    return None


# ------------------------------------------------------------------------------------------ flow of one name
_UNBOUND = Shape("unbound")


class _Unknown(Exception):
    """The name's value at the use cannot be told (a mutation not modelled, a loop changing it, too deep)."""


def _flow_value(fn, use, assignments, depth, program) -> Shape | None:
    """The value of the local ``use`` names where it is read, by running the function's statements above it in
    order on abstract values: ``x = ...``, ``x += ...``, ``x *= k``, ``x.append(e)``, ``x.extend(s)``,
    ``x.insert(i, e)``; an ``if`` whose condition is known runs its branch, any other ``if`` gives each branch's
    value (a branch that returns or raises does not continue). A loop, ``try``, ``with`` or nested scope that
    binds or mutates the name, and any other mention of a list (it may be changed in place), give None. Walks the
    statement nesting with an explicit stack bound (``_MAX_DEPTH``), never the expressions."""
    if fn.node.type == "lambdef" or depth > _MAX_DEPTH:
        return None
    name = use.value
    if _is_param(fn, name):
        initial = _forward_output(fn, name, program, depth)
        if initial is None:
            return None
    else:
        initial = _UNBOUND
    try:
        states = _run(fn, fn.node.children[-1], name, use, [initial], assignments, depth, program, 0)
    except _Unknown:
        return None
    if states is None or not states or any(s is _UNBOUND for s in states):
        return None
    kinds = {s.kind for s in states}
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    if kind in ("tuple", "list"):
        if not all(s.known_length for s in states):
            return None
        lengths = frozenset().union(*(_length_set(s) for s in states))
        if len(states) == 1:
            s = states[0]
            return Shape(kind, node=s.node, computed=True, n=s.length, lengths=s.lengths, elements=s.entries,
                         element_kinds=s.element_kinds)
        return _seq(kind, use, lengths)
    if kind in ("value", "none", "dict"):
        s = states[0]
        return Shape(kind, node=s.node if len(states) == 1 else use, element_kinds=s.element_kinds if len(states) == 1 else None)
    return None


def _suite_statements(suite) -> list:
    if suite.type == "suite":
        return [c for c in suite.children if c.type not in ("newline", "indent", "dedent")]
    return [suite]


def _contains(outer, node) -> bool:
    return outer is node or is_within(outer, node)


def _mentions(node, name: str) -> bool:
    return any(leaf.type == "name" and leaf.value == name for leaf in leaves_of(node))


def _terminates(stmts) -> bool:
    """The statement list always leaves the function (its last statement is a return or raise)."""
    if not stmts:
        return False
    last = stmts[-1]
    if last.type == "simple_stmt":
        return any(c.type in ("return_stmt", "raise_stmt") or (c.type == "keyword" and c.value in ("return", "raise"))
                   for c in last.children)
    return False


def _run(fn, suite, name, use, states, assignments, depth, program, level):
    """Run ``suite``'s statements on ``states``; the states at ``use`` when it is inside, else those at the end
    (an empty list when every path returns)."""
    if level > _MAX_DEPTH:
        raise _Unknown
    for stmt in _suite_statements(suite):
        inside = _contains(stmt, use)
        if stmt.type == "simple_stmt":
            for small in stmt.children:
                if small.type in ("newline",) or (small.type == "operator" and small.value == ";"):
                    continue
                if _contains(small, use):
                    if _binds_in(small, name, use):
                        raise _Unknown  # read in the statement that (re)binds it: x = x + ... is read before
                    return states
                states = _apply(small, name, states, fn, assignments, depth, program)
            if inside:
                return states
            if _terminates([stmt]):
                return []
            continue
        if stmt.type == "if_stmt":
            children = stmt.children
            branches = []  # (condition or None, suite)
            for i, c in enumerate(children):
                if i > 0 and children[i - 1] == ":":
                    label = children[i - 2]
                    branches.append((None if label == "else" else label, c))
            if inside:
                for cond, body in branches:
                    if _contains(body, use):
                        return _run(fn, body, name, use, states, assignments, depth, program, level + 1)
                return states  # in a condition
            after = []
            has_else = any(cond is None for cond, _ in branches)
            settled = False
            for cond, body in branches:
                truth = _truth(program, cond) if cond is not None else True
                if truth is False:
                    continue
                if _mentions(body, name):
                    ends = _terminates(_suite_statements(body))
                    result = _run(fn, body, name, use, states, assignments, depth, program, level + 1)
                    if not ends:
                        after += result
                elif not _terminates(_suite_statements(body)):
                    after += states
                if truth is True:
                    settled = True
                    break
            if not settled and not has_else:
                after += states
            states = _dedupe(after)
            if len(states) > _MAX_ALTERNATIVES:
                raise _Unknown
            continue
        if stmt.type in ("funcdef", "classdef", "decorated", "async_stmt", "async_funcdef"):
            if _mentions(stmt, name):
                raise _Unknown  # a closure may rebind or mutate it
            continue
        # for / while / try / with / match
        if inside:
            if _binds_or_mutates(stmt, name, states):
                raise _Unknown
            bodies = [c for c in stmt.children if c.type == "suite" and _contains(c, use)]
            if stmt.type == "with_stmt" and bodies:
                return _run(fn, bodies[0], name, use, states, assignments, depth, program, level + 1)
            return states  # the use in a loop (or try) body that never changes the name
        if _mentions(stmt, name):
            if stmt.type == "with_stmt" and not _mentions(NodeView("x", stmt.children[:-1]), name):
                states = _run(fn, stmt.children[-1], name, use, states, assignments, depth, program, level + 1)
                continue
            if _binds_or_mutates(stmt, name, states):
                raise _Unknown
    return states


def _dedupe(states):
    seen, out = set(), []
    for s in states:
        key = id(s)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def _binds_in(node, name, use) -> bool:
    return any(leaf.type == "name" and leaf.value == name and leaf is not use and leaf.is_definition()
               for leaf in leaves_of(node))


def _binds_or_mutates(stmt, name, states) -> bool:
    """Whether a loop/try/with statement may change the name: binds it, augments it, or mentions a list value."""
    may_be_list = any(s.kind == "list" or s.kind == "unknown" for s in states)
    for leaf in leaves_of(stmt):
        if leaf.type != "name" or leaf.value != name:
            continue
        if leaf.is_definition():
            return True
        parent = leaf.parent
        if parent.type == "expr_stmt" and parent.children[0] is leaf and parent.children[1].type == "operator" \
                and parent.children[1].value.endswith("="):
            return True  # x += ...
        if parent.type == "del_stmt" or (parent.type == "exprlist" and parent.parent.type == "del_stmt"):
            return True
        if may_be_list:
            return True
    return False


def _apply(small, name, states, fn, assignments, depth, program):
    """One small statement's effect on the name's values."""
    if not _mentions(small, name):
        return states
    t = small.type
    if t == "expr_stmt":
        children = small.children
        if len(children) >= 3 and children[1] == "=":
            targets = children[:-1:2]
            value = children[-1]
            if any(tg.type == "name" and tg.value == name for tg in targets):
                if any(tg.type != "name" and _mentions(tg, name) for tg in targets):
                    raise _Unknown
                return [classify(value, fn, assignments, depth + 1, program, {name: s}) if s is not _UNBOUND
                        else classify(value, fn, assignments, depth + 1, program) for s in states]
            # ``x[i] = v`` keeps a list's length; any other target mentioning it is not modelled
            for tg in targets:
                if _mentions(tg, name):
                    if _is_item_of(tg, name):
                        states = [_forget_elements(s) for s in states]
                    else:
                        raise _Unknown
            return _reads_only(value, name, states)
        if len(children) == 3 and children[1].type == "operator" and children[1].value in ("+=", "*=") \
                and children[0].type == "name" and children[0].value == name:
            out = []
            for s in states:
                if s is _UNBOUND:
                    raise _Unknown
                if children[1].value == "+=":
                    add = classify(children[2], fn, assignments, depth + 1, program, {name: s})
                    if s.kind not in ("tuple", "list") or add.kind not in ("tuple", "list") or not s.known_length \
                            or not add.known_length or (s.kind == "tuple" and add.kind != "tuple"):
                        raise _Unknown
                    out.append(_concat(s.kind, small, [s, add]))
                else:
                    k = _int_value(children[2], fn, assignments, depth + 1, program, {name: s})
                    if k is None or s.kind not in ("tuple", "list") or not s.known_length:
                        raise _Unknown
                    out.append(_seq(s.kind, small, {n * max(k, 0) for n in _length_set(s)}))
            return out
        if len(children) == 2 and children[1].type == "annassign" and children[0].type == "name" \
                and children[0].value == name:
            ann = children[1]
            if len(ann.children) >= 4:
                return [classify(ann.children[-1], fn, assignments, depth + 1, program) for _ in states[:1]]
            return states
        raise _Unknown
    if t in ("power", "atom_expr"):
        method = _method_call(small, name)
        if method is not None:
            attr, args = method
            out = []
            for s in states:
                if s is _UNBOUND or s.kind != "list" or not s.known_length:
                    raise _Unknown
                if attr == "append" and len(args) == 1:
                    entries = list(s.entries) + [args[0]] if s.entries is not None and not s.lengths else None
                    out.append(_seq("list", small, {n + 1 for n in _length_set(s)}, entries))
                elif attr == "extend" and len(args) == 1:
                    add = classify(args[0], fn, assignments, depth + 1, program, {name: s})
                    if add.kind not in ("tuple", "list") or not add.known_length:
                        raise _Unknown
                    out.append(_concat("list", small, [s, add]))
                elif attr == "insert" and len(args) == 2:
                    out.append(_seq("list", small, {n + 1 for n in _length_set(s)}))
                else:
                    raise _Unknown
            return out
        return _reads_only(small, name, states)
    if t in ("return_stmt", "pass_stmt", "assert_stmt"):
        return _reads_only(small, name, states)
    raise _Unknown  # del, global, import, walrus ... of the name


def _reads_only(node, name, states):
    """A statement that only reads the name: a tuple is unchanged; a list might be changed in place by whatever
    it is passed to, unless it is only indexed (``x[0]``) or measured (``len(x)``)."""
    for leaf in leaves_of(node):
        if leaf.type != "name" or leaf.value != name:
            continue
        if leaf.is_definition():
            raise _Unknown
        if any(s.kind in ("list", "unknown") for s in states) and not _is_item_of(leaf.parent, name) \
                and not _is_len_of(leaf):
            raise _Unknown
    return states


def _is_item_of(node, name) -> bool:
    """``name[...]`` (a subscript of the name itself)."""
    children = getattr(node, "children", None)
    return bool(children and len(children) == 2 and children[0].type == "name" and children[0].value == name
                and children[1].type == "trailer" and children[1].children[0] == "[")


def _is_len_of(leaf) -> bool:
    parent = leaf.parent
    if parent.type != "trailer" or parent.children[0] != "(":
        return False
    call = parent.parent
    return call.type in ("power", "atom_expr") and call.children[0].type == "name" and call.children[0].value == "len" \
        and len(call.children) == 2


def _forget_elements(s: Shape) -> Shape:
    if s.kind not in ("tuple", "list"):
        return s
    return Shape(s.kind, node=s.node, computed=True, n=s.n if s.n is not None else s.length, lengths=s.lengths)


def _method_call(node, name):
    """(method, argument nodes) of ``name.method(args)`` (no keywords, no stars), else None."""
    from ..engine.trees import call_arguments

    children = node.children
    if len(children) != 3 or children[0].type != "name" or children[0].value != name:
        return None
    attr, call = children[1], children[2]
    if attr.type != "trailer" or attr.children[0] != "." or call.type != "trailer" or call.children[0] != "(":
        return None
    if _mentions(call, name):
        raise _Unknown
    positional, keywords, has_star = call_arguments(call)
    if keywords or has_star:
        raise _Unknown
    return attr.children[1].value, positional


def _classify_call(node, fn: Function, assignments: dict, depth: int, program, env=None) -> Shape:
    """A call: ``tuple(<list of known length>)``, a helper of this file (its own returns), ``super().bprop(...)``,
    or a bare op / Tensor method call known to return one Tensor."""
    from ..engine.trees import call_arguments, call_of, dotted

    call = call_of(node)
    if call is None:
        return Shape("unknown", node=node)
    callee, trailer = call
    positional, keywords, has_star = call_arguments(trailer)
    if callee in ("tuple", "list") and not keywords and not has_star and not _shadowed(callee, assignments, program):
        kind = callee
        if not positional:
            return Shape(kind, node=node, computed=True, n=0, elements=[])
        if len(positional) != 1:
            return Shape("unknown", node=node)
        arg = unwrap_parens(positional[0])
        inner = classify(arg, fn, assignments, depth + 1, program, env)
        if inner.kind in ("tuple", "list") and inner.known_length:
            if inner.lengths:
                return _seq(kind, node, inner.lengths)
            return Shape(kind, node=node, computed=True, n=inner.length, elements=inner.entries)
        length = _comprehension_length(arg, fn, assignments, depth, program, env)
        if length is not None:
            return Shape(kind, node=node, computed=True, n=length)
        return Shape("unknown", node=node)
    if program is not None:
        target = _called_function(program, fn, node, callee)
        if target is not None:
            found = returns_of(target, program, depth + 1)
            if found is not None and found.returns and not found.falls_through:
                shapes = [r.shape for r in found.returns]
                kinds = {(sh.kind, sh.length if sh.kind in ("tuple", "list") else None, sh.known_length,
                          sh.lengths) for sh in shapes}
                if len(kinds) == 1:
                    kind, length, known, lengths = next(iter(kinds))
                    if kind in ("tuple", "list") and known:
                        if lengths:
                            return _seq(kind, node, lengths)
                        return Shape(kind, node=node, computed=True, n=length)
                    if kind in ("value", "none", "dict"):
                        return Shape(kind, node=node)
            return Shape("unknown", node=node)
        if callee and program.resolve_dotted(callee) in TENSOR_CONSTRUCTORS and not _shadowed(callee, assignments, program):
            return Shape("value", node=node)  # ``ms.Tensor(...)``: a Tensor
    leaf = (callee or "").rsplit(".", 1)[-1]
    if callee and "." in callee and not callee.startswith("self.") and leaf in SINGLE_TENSOR_CALLS:
        # ``ops.mul(...)``, ``dout.sum()``; not ``self.mul(...)``: an attribute may hold any callable.
        return Shape("value", node=node)
    # `P.Mul()(a, b)`: a Primitive instance called.
    head = node.children[:-1]
    if len(head) >= 2 and head[-1].type == "trailer" and head[-1].children[0] == "(":
        name = dotted(NodeView(node.type, head[:-1])) if len(head) > 2 else (head[0].value if head[0].type == "name" else None)
        if name and name.rsplit(".", 1)[-1] in SINGLE_TENSOR_CALLS and name.rsplit(".", 1)[-1][:1].isupper():
            return Shape("value", node=node)
    return Shape("unknown", node=node)


def _shadowed(callee: str, assignments: dict, program) -> bool:
    """A builtin's name (``tuple``, ``list``) or an import rebound by the function or the module."""
    head = callee.split(".", 1)[0]
    if assignments.get(head):
        return True
    if program is None:
        return False
    if "." not in callee and (program.functions.get(head) or program.assignments.get(head) or head in program.imports):
        _read_outside(program)
        return True
    return False


def _comprehension_length(node, fn, assignments, depth, program, env=None) -> int | None:
    """``[f(g) for g in (a, b)]`` / ``(f(g) for g in grads)`` / ``... for _ in range(3)``: the length of the
    iterable, when the comprehension has one ``for`` and no ``if``."""
    from ..engine.trees import call_arguments, call_of

    node = unwrap_parens(node)
    inner = None
    if node.type == "atom" and node.children[0] in ("[", "(") and len(node.children) == 3:
        inner = node.children[1]
    elif node.type in ("testlist_comp", "argument"):
        inner = node  # (a generator as a call's only argument: ``tuple(g for g in ...)``)
    if inner is None or inner.type not in ("testlist_comp", "argument") or len(inner.children) != 2:
        return None
    comp = inner.children[1]
    if comp.type not in ("comp_for", "sync_comp_for"):
        return None
    if comp.type == "comp_for":
        comp = comp.children[-1] if comp.children[-1].type == "sync_comp_for" else comp
    # sync_comp_for: 'for' targets 'in' iterable [comp_iter]
    if len(comp.children) != 4:
        return None  # a nested for / an if
    source = unwrap_parens(comp.children[3])
    if source.type in ("power", "atom_expr"):
        c = call_of(source)
        if c is not None and c[0] == "range" and not _shadowed("range", assignments, program):
            positional, keywords, has_star = call_arguments(c[1])
            if len(positional) == 1 and not keywords and not has_star:
                k = _int_value(positional[0], fn, assignments, depth + 1, program, env)
                return max(k, 0) if k is not None else None
            return None
    iterable = classify(source, fn, assignments, depth + 1, program, env)
    if iterable.kind in ("tuple", "list") and iterable.known_length and not iterable.lengths:
        return iterable.length
    return None


def _called_function(program, fn: Function, node, callee: str | None):
    """The function of this file a call runs: a module-level (or enclosing) ``def`` called by name, a method
    called as ``self.m(...)``, or the parent's bprop called as ``super().bprop(...)``."""
    children = node.children
    is_super = (len(children) == 4 and children[0].type == "name" and children[0].value == "super"
                and children[1].type == "trailer" and children[1].children[0] == "("
                and children[2].type == "trailer" and children[2].children[0] == ".")
    if not (callee and ("." not in callee or callee.startswith("self.") and callee.count(".") == 1)) and not is_super:
        return None  # ``ops.mul(...)`` and the like: nothing of the file (decided without looking outside)
    # What follows reads the rest of the file: the caller's reading is not the function's own (see returns_of).
    program.__dict__["_returns_reads"] = program.__dict__.get("_returns_reads", 0) + 1
    if callee and "." not in callee:
        candidates = [f for f in program.functions.get(callee, []) if (scope_of(f.node) is None or scope_of(f.node).type != "classdef")]
        if len(candidates) == 1 and not program.assignments.get(callee) and callee not in program.imports:
            return candidates[0]
        return None
    cls = _enclosing_class(program, fn)
    if cls is None:
        return None
    if callee and callee.startswith("self.") and callee.count(".") == 1:
        member = program.lookup(cls, callee[5:])
        if member is not None and member.function is not None and member.value is None and not member.ambiguous:
            if not member.function.decorator_names:
                return member.function
        return None
    # super().name(...)
    if is_super:
        name = children[2].children[1].value
        for k in program.mro(cls)[1:]:
            if isinstance(k, str):
                return None
            member = k.members.get(name)
            if member is not None:
                if member.function is not None and member.value is None and not member.ambiguous:
                    return member.function
                return None
    return None


def _enclosing_class(program, fn: Function):
    node = fn.node.parent
    while node is not None and node.type not in ("classdef", "file_input"):
        node = node.parent
    if node is None or node.type != "classdef":
        return None
    return program.class_of_node(node)


def _is_arith(node, fn, assignments, depth: int = 0, program=None) -> bool:
    """An arithmetic expression on names/numbers/attribute reads: it yields a Tensor or a number,
    unless an operand is a sequence (then it might be tuple repetition/concatenation)."""
    if depth > _MAX_DEPTH:
        return False
    for child in node.children:
        if child.type == "operator":
            continue
        c = unwrap_parens(child)
        if c.type in ("number", "name"):
            if c.type == "name" and c.value in assignments and len(assignments[c.value]) == 1 \
                    and assignments[c.value][0] is not None and not is_within(assignments[c.value][0], c):
                inner = classify(assignments[c.value][0], fn, assignments, depth + 1, program)
                if inner.kind in ("tuple", "list", "unknown"):
                    if inner.kind != "unknown":
                        return False
            continue
        if c.type == "atom":
            return False  # a display: tuple/list/dict literal arithmetic
        if c.type in ARITH:
            if not _is_arith(c, fn, assignments, depth + 1, program):
                return False
            continue
        if c.type in ("atom_expr", "power"):
            continue  # calls/attributes on tensors: ops.sin(x), x.T, dout.sum()
        if c.type == "keyword":
            return False
    return True


# Marks a name's augmented assignment (``grads += (dx,)``) in local_assignments: classify counts those entries.
AUGMENTED = object()


def local_assignments(fn: Function) -> dict:
    """name -> right-hand sides of plain ``name = value`` statements in the function's own body.

    Names also bound another way (augmented assignment, for-loop target, unpacking, with/except, walrus)
    get an extra ``None`` entry so that they never look single-assigned. Read once per Function (do not modify)."""
    memo = fn.__dict__.get("_local_assignments")
    if memo is None:
        memo = fn.__dict__["_local_assignments"] = _local_assignments(fn)
    return memo


def _local_assignments(fn: Function) -> dict:
    result: dict = {}
    for node in iter_own_nodes(fn.node):
        if node.type == "expr_stmt":
            children = node.children
            if len(children) >= 3 and children[1] == "=":
                value = children[-1]
                for target in children[:-1:2]:
                    if target.type == "name":
                        result.setdefault(target.value, []).append(value)
                    else:
                        for n in _names_in(target):
                            result.setdefault(n, []).append(None)
            elif len(children) >= 2 and children[1].type == "operator" and children[1].value.endswith("="):
                if children[0].type == "name":
                    result.setdefault(children[0].value, []).append(AUGMENTED)
            elif len(children) >= 2 and children[1].type == "annassign":
                ann = children[1]
                if children[0].type == "name" and len(ann.children) >= 4:
                    result.setdefault(children[0].value, []).append(ann.children[-1])
        elif node.type in ("for_stmt", "comp_for", "sync_comp_for", "with_item", "except_clause", "namedexpr_test"):
            for n in _names_in(node.children[1] if node.type in ("for_stmt", "sync_comp_for") else node):
                result.setdefault(n, []).append(None)
    for p in fn.params:
        result.setdefault(p.name, []).append(None)
    return result


def _names_in(node):
    """The names under ``node``, in order (walked in a loop: a target may nest deeper than Python recurses)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "name":
            yield n.value
        else:
            stack.extend(reversed(getattr(n, "children", ())))


def returns_of(fn: Function, program=None, depth: int = 0) -> Returns | None:
    """The function's returns, or None when it is a generator or cannot be read. With ``program``, calls to
    helpers of the same file are followed (bounded by ``depth``); results are cached on the program."""
    cache = program.__dict__.setdefault("_returns_cache", {}) if program is not None else None
    key = id(fn.node)
    if cache is not None and key in cache:
        return cache[key]
    if cache is None:
        return _returns_of(fn, program, depth)
    # A reading that never looked outside the function (no helper, method or super() call followed) is kept with
    # its top-level statement, by depth (the depth bounds the reading): the next program reads it back.
    kept = program.statement_facts(fn.node).setdefault("returns", {})
    entry = kept.get((key, depth))
    if entry is not None and entry[0] is fn.node:
        cache[key] = entry[1]
        return entry[1]
    cache[key] = None  # a helper that (indirectly) calls itself reads as unknown
    reads = program.__dict__.get("_returns_reads", 0)
    result = _returns_of(fn, program, depth)
    cache[key] = result
    if program.__dict__.get("_returns_reads", 0) == reads:
        kept[(key, depth)] = (fn.node, result)
    return result


def _returns_of(fn: Function, program, depth: int) -> Returns | None:
    if depth > _MAX_DEPTH:
        return None
    if fn.node.type == "lambdef":
        body = fn.node.children[-1]
        return Returns([ReturnInfo(body, classify(body, fn, {}, depth, program))], missing=False)
    assignments = local_assignments(fn)
    found: list[ReturnInfo] = []
    for node in iter_own_nodes(fn.node):
        if node.type in ("yield_expr", "yield_arg") or (node.type == "keyword" and node.value == "yield"):
            return None
        if node.type == "return_stmt":
            if _dead(node, fn, assignments, program):
                continue
            value = node.children[1] if len(node.children) > 1 else None
            found.append(ReturnInfo(node, classify(value, fn, assignments, depth, program)))
        elif node.type == "keyword" and node.value == "return" and node.parent.type != "return_stmt":
            if _dead(node, fn, assignments, program):
                continue
            found.append(ReturnInfo(node, Shape("none")))  # a bare `return`
    missing = not found and not _ends_in_raise(fn)
    falls, conditions = (False, ()) if not found else _falls_through(fn.node.children[-1])
    return Returns(found, missing, falls, tuple(conditions))


def _dead(node, fn, assignments, program) -> bool:
    """A return in a branch Python never takes (``if LEGACY:`` with the module flag False): it is never reached,
    and GRAPH folds such conditions too (bprop-rules.md, item 11). Reading the flag is a module read."""
    if program is None:
        return False
    parent = node.parent
    conditional = False
    while parent is not None and parent is not fn.node:
        if parent.type in ("if_stmt", "test"):
            conditional = True
            break
        parent = parent.parent
    if not conditional:
        return False
    from ..engine.conditions import never_taken

    _read_outside(program)
    return never_taken(program, node, fn.node)


_TERMINAL = ("return_stmt", "raise_stmt")


def _falls_through(suite) -> tuple[bool, list]:
    """Whether execution can reach the end of ``suite``, and the ``if`` conditions found false on the way."""
    if suite.type != "suite":
        return (not _terminates_simple(suite)), []
    conditions: list = []
    for stmt in suite.children:
        if stmt.type in ("newline", "indent", "dedent"):
            continue
        ends, conds = _statement_ends(stmt)
        if ends:
            return False, []
        conditions += conds
    return True, conditions


def _statement_ends(stmt) -> tuple[bool, list]:
    """(always leaves the function, conditions of branches that continue past it)."""
    t = stmt.type
    if t == "simple_stmt":
        return _terminates_simple(stmt), []
    if t == "if_stmt":
        children = stmt.children
        has_else = "else" in [c for c in children if c.type == "keyword"]
        all_end = True
        conditions = []
        for i, c in enumerate(children):
            if c.type == "suite" or (c.type == "simple_stmt" and i > 0 and children[i - 1] == ":"):
                falls, _ = _falls_through(c)
                if falls:
                    all_end = False
            elif c in ("if", "elif"):
                conditions.append(children[i + 1])
        return (all_end and has_else), ([] if has_else else conditions)
    if t == "try_stmt":
        suites = [c for i, c in enumerate(stmt.children) if c.type in ("suite", "simple_stmt") and stmt.children[i - 1] == ":"]
        labels = [stmt.children[i - 2] for i, c in enumerate(stmt.children) if c.type in ("suite", "simple_stmt") and stmt.children[i - 1] == ":"]
        finally_suite = next((s for s, l in zip(suites, labels) if l == "finally"), None)
        if finally_suite is not None and not _falls_through(finally_suite)[0]:
            return True, []
        body_and_handlers = [s for s, l in zip(suites, labels) if l != "finally" and l != "else"]
        else_suite = next((s for s, l in zip(suites, labels) if l == "else"), None)
        body_ends = not _falls_through(body_and_handlers[0])[0] if body_and_handlers else False
        if else_suite is not None and not body_ends:
            body_ends = not _falls_through(else_suite)[0]
        handlers_end = all(not _falls_through(s)[0] for s in body_and_handlers[1:])
        return body_ends and handlers_end, []
    if t == "while_stmt":
        cond = stmt.children[1]
        if cond.type == "keyword" and cond.value == "True" or cond.type == "number" and cond.value not in ("0",):
            return not any(n.type == "keyword" and n.value == "break" for n in _own_leaves(stmt.children[3])), []
        return False, []
    if t == "with_stmt":
        return not _falls_through(stmt.children[-1])[0], []
    if t == "match_stmt":
        return False, []  # exhaustiveness of case patterns is not modelled: assume it may fall through
    return False, []


def _terminates_simple(stmt) -> bool:
    for c in stmt.children if stmt.type == "simple_stmt" else [stmt]:
        if c.type in _TERMINAL or (c.type == "keyword" and c.value in ("return", "raise")):
            return True
        if c.type == "assert_stmt" and len(c.children) >= 2 and c.children[1].type == "keyword" and c.children[1].value == "False":
            return True
        if c.type in ("power", "atom_expr") and c.get_code().strip().startswith(("sys.exit(", "exit(", "os._exit(")):
            return True
    return False


def _own_leaves(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("funcdef", "classdef", "lambdef", "for_stmt", "while_stmt"):
            continue  # a break in a nested loop ends that loop
        if hasattr(n, "children"):
            stack.extend(n.children)
        else:
            yield n


def _ends_in_raise(fn: Function) -> bool:
    body = fn.body
    stmts = [c for c in getattr(body, "children", []) if c.type not in ("newline", "indent", "dedent")]
    if not stmts:
        return False
    last = stmts[-1]
    code = last.get_code().strip()
    return code.startswith("raise") or code.startswith("assert False") or "NotImplementedError" in code


def is_nested_tuple(shape: Shape, fn: Function) -> bool:
    """``((dx, dy),)``: one element that is itself a tuple display or a name bound to one."""
    if shape.kind != "tuple" or shape.length != 1 or shape.computed:
        return False
    inner = classify(shape.items[0], fn, local_assignments(fn) if fn.node.type != "lambdef" else {})
    return inner.kind == "tuple"


@dataclass
class Subject:
    """A bprop whose return is checked against the number of forward inputs."""

    fn: Function
    label: str  # "bprop of MulAdd" / "ops.Custom bprop square_bprop"
    lo: int
    hi: int
    kind: str  # "cell" | "custom-op"
    input_names: list | None = None
    site: object = None  # the CellSite, for cell bprops
    modes: frozenset = frozenset({"graph", "pynative"})  # where MindSpore calls this bprop
    foreign: object = None  # an ops.Custom bprop defined in another module (``ForeignBprop``), else None


def restrict(fails_in: frozenset, subject: Subject) -> frozenset | None:
    """The modes a finding fails in, limited to those where the bprop is called; None: report nothing."""
    if not fails_in:
        return fails_in
    limited = fails_in & subject.modes
    return limited or None


def cell_subjects(ctx):
    """The Cell bprops whose returns are checked, found once per analysis (several rules ask; do not modify)."""
    found = ctx.__dict__.get("_cell_subjects")
    if found is None:
        found = ctx.__dict__["_cell_subjects"] = list(_cell_subjects(ctx))
    return found


def _cell_subjects(ctx):
    from ._signature import view

    seen = set()
    for site in ctx.cell_sites:
        v = view(ctx, site)
        if v is None or v.input_range is None or v.fn in seen:
            continue
        if v.kind in ("staticmethod", "classmethod") or v.opaque_decorator:
            continue
        lo, hi = v.input_range
        pynative_count = v.count if v.has_self else v.count - 1
        if not (lo + 2 <= pynative_count <= hi + 2):
            continue  # the signature is already wrong: BP001/BP002/BP004 speak first
        seen.add(v.fn)
        yield Subject(v.fn, f"bprop of {site.owner_label}", lo, hi, "cell", v.inputs, site, site.modes)


def custom_subjects(ctx):
    """``_custom_subjects``, found once per analysis (several rules ask; do not modify)."""
    found = ctx.__dict__.get("_custom_subjects")
    if found is None:
        found = ctx.__dict__["_custom_subjects"] = list(_custom_subjects(ctx))
    return found


def _custom_subjects(ctx):
    """Primitive-level bprops: ``ops.Custom(..., bprop=fn)`` and the inner bprop a Primitive's getter returns
    (``get_bprop``, ``bprop_getters.register``) when MindSpore really calls it (no C++ bprop under that name).
    Both reach the gradient through ``Primitive.get_bprop`` and get the same return checks."""
    from ..engine.context import Signature
    from ..engine.mindspore_api import builtin_ops
    from ..engine.primitive_bprops import getter_sites

    for op in ctx.custom_op_sites:
        if op.function is None or op.inputs is None:
            continue
        sig = Signature(op.function, skip_self=op.bound)
        if sig.vararg is not None or len(sig.positional) != op.inputs + 2:
            continue
        yield Subject(op.function, f"ops.Custom bprop {op.function.name}", op.inputs, op.inputs, "custom-op",
                      foreign=op.foreign)
    p = ctx.program
    if not p.text_contains("get_bprop") and not p.text_contains("bprop_getters"):
        return
    seen = set()
    for prim, _getter, inner in getter_sites(p):
        if inner is None or prim.name in builtin_ops() or id(inner.node) in seen:
            continue  # named like a built-in op: its Python bprop may never be called (BP044), stay quiet
        n = ctx.primitive_inputs(prim)
        sig = Signature(inner, skip_self=False)
        if n is None or sig.vararg is not None or len(sig.positional) != n + 2:
            continue
        seen.add(id(inner.node))
        yield Subject(inner, f"the bprop of Primitive {prim.name}", n, n, "primitive",
                      modes=frozenset({"graph"}))  # PYNATIVE finds no kernel for a user Primitive on CPU


def return_related(ctx, info: ReturnInfo, what: str):
    from ..engine.model import Related

    return (Related(ctx.program.span(info.stmt), what),)


def anchor_span(ctx, fn: Function):
    from ._signature import def_span

    return def_span(ctx, fn)


def is_dict_display(node) -> bool:
    """``{...}``: a dict (or set) display."""
    return node.type == "atom" and node.children[0] == "{"


def instance_truth(ctx, site, cond):
    """True/False when a condition has that value on every instance the file builds: a module flag or literal
    (``const_truth``), or ``self.flag`` / ``not self.flag`` with the values the file's ``Cls(...)`` calls give it
    (GRAPH folds those; PYNATIVE evaluates them the same way). None otherwise."""
    from ..engine.conditions import const_truth
    from ..engine.trees import dotted

    truth = const_truth(ctx.program, cond)
    if truth is not None or site is None:
        return truth
    cond = unwrap_parens(cond)
    negated = cond.type == "not_test"
    text = dotted(cond.children[1] if negated else cond)
    if text is None or not text.startswith("self.") or text.count(".") != 1:
        return None
    values = ctx.attribute_values(site.cls, text[5:])
    if not values:
        return None
    truths = {const_truth(ctx.program, v) for v in values}
    if len(truths) != 1 or None in truths:
        return None
    return truths.pop() != negated


def reachable_returns(fn_node, truth) -> set | None:
    """ids of the ``return`` statements of the function that some path reaches once the conditions ``truth`` knows
    (``instance_truth``: module flags, literals, ``self.flag`` as every instance the file builds has it) are
    folded, as GRAPH folds them and PYNATIVE evaluates them (bprop-rules.md, further behaviours 11): ``if
    self.fast: return (dx,)`` on a cell built with ``fast=True`` makes the statements after it unreachable. Only
    ``if`` chains are folded; a return inside any other compound statement counts as reachable. None for a lambda."""
    if fn_node.type != "funcdef":
        return None
    found: set = set()

    def suite_statements(suite):
        return [c for c in suite.children if c.type not in ("newline", "indent", "dedent")] \
            if suite.type == "suite" else [suite]

    def block(statements) -> bool:  # whether every path through the statements returns
        for stmt in statements:
            if stmt.type == "simple_stmt" or stmt.type == "return_stmt" or stmt.type == "keyword":
                smalls = stmt.children if stmt.type == "simple_stmt" else [stmt]
                for small in smalls:
                    if small.type == "return_stmt" or (small.type == "keyword" and small.value == "return"):
                        found.add(id(small))
                        return True
                continue
            if stmt.type == "if_stmt":
                children, i, ends, exhaustive = stmt.children, 0, True, False
                while i < len(children):
                    if children[i] == "else":
                        cond, suite, i = None, children[i + 2], i + 3
                    else:
                        cond, suite, i = children[i + 1], children[i + 3], i + 4
                    known = True if cond is None else truth(cond)
                    if known is False:
                        continue
                    ends = block(suite_statements(suite)) and ends
                    if known is True:
                        exhaustive = True
                        break  # (the later branches are never reached)
                if ends and exhaustive:
                    return True
                continue
            stack = [stmt]  # any other compound statement: each of its returns may be reached
            while stack:
                node = stack.pop()
                if node.type == "return_stmt" or (node.type == "keyword" and node.value == "return"):
                    found.add(id(node))
                elif node.type not in ("funcdef", "lambdef", "classdef", "async_funcdef") or node is stmt:
                    stack.extend(getattr(node, "children", ()))
        return False

    block(suite_statements(fn_node.children[-1]))
    return found
