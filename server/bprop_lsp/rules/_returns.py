"""What a bprop returns, read from its ``return`` statements with light, local dataflow.

Each return is classified as a tuple of known length, a list, ``None``, a bare (Tensor) value, or
unknown. Only literal shapes and names bound once to a literal in the same function count; calls,
subscripts, tuple repetition and everything else are unknown and left alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.program import Function, NodeView, is_within, iter_own_nodes, scope_of, unwrap_parens

ARITH = {"arith_expr", "term", "factor", "power", "shift_expr", "and_expr", "xor_expr", "expr"}


@dataclass
class Shape:
    kind: str  # "tuple" | "list" | "none" | "value" | "unknown" | "dict"
    items: list = field(default_factory=list)  # element nodes for tuple/list
    node: object = None  # the expression (None for a bare/missing return)
    via_name: object = None  # the Name the return used, when resolved through an assignment
    # A tuple/list whose length is known but whose entries are not one display each (``grads + (dx,)``, a helper's
    # result, ``tuple([...])``): ``items`` is empty, ``n`` the length. Rules reading entries skip these.
    computed: bool = False
    n: int | None = None

    @property
    def length(self) -> int:
        return self.n if self.n is not None else len(self.items)


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
""".split())


def classify(node, fn: Function, assignments: dict, depth: int = 0, program=None) -> Shape:
    """The abstract value of an expression: bounded in depth, so self-referencing bindings
    (``dx = dx * 2``) and mutually recursive helpers end as unknown."""
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
        if any(i.type in ("star_expr",) for i in items):
            return Shape("unknown", node=node)
        return Shape("tuple", items=items, node=node)
    if t == "atom" and node.children[0] == "[":
        if len(node.children) == 2:
            return Shape("list", items=[], node=node)
        inner = node.children[1]
        if inner.type == "testlist_comp":
            if any(c.type in ("comp_for", "sync_comp_for") for c in inner.children):
                return Shape("unknown", node=node)
            if any(c.type == "star_expr" for c in inner.children):
                return Shape("unknown", node=node)
            return Shape("list", items=[c for c in inner.children if c != ","], node=node)
        if inner.type == "star_expr":
            return Shape("unknown", node=node)
        return Shape("list", items=[inner], node=node)
    if t == "atom" and node.children[0] == "{":
        return Shape("dict", node=node)
    if t in ("number", "string", "strings"):
        return Shape("value", node=node)
    if t == "name":
        values = [v for v in assignments.get(node.value, ()) if v is not AUGMENTED]
        if values and len(values) == 1 and values[0] is not None and not is_within(values[0], node):
            inner = classify(values[0], fn, assignments, depth + 1, program)
            inner.via_name = node
            if inner.kind in ("tuple", "list", "value", "dict", "none"):
                if inner.kind in ("tuple", "list"):
                    augmented = _augmented_length(fn, node.value, assignments, depth, program)
                    if augmented is None:
                        return Shape("unknown", node=node)
                    if augmented:
                        return Shape(inner.kind, node=node, via_name=node, computed=True, n=inner.length + augmented)
                return inner
        return Shape("unknown", node=node)
    if t == "arith_expr" and all(op == "+" for op in node.children[1::2]):
        parts = [classify(c, fn, assignments, depth + 1, program) for c in node.children[::2]]
        if any(p.kind == "tuple" for p in parts):
            if all(p.kind == "tuple" for p in parts):
                return Shape("tuple", node=node, computed=True, n=sum(p.length for p in parts))
            return Shape("unknown", node=node)
    if t == "term" and len(node.children) == 3 and node.children[1] == "*":
        left, right = (classify(c, fn, assignments, depth + 1, program) for c in node.children[::2])
        for seq, count in ((left, node.children[2]), (right, node.children[0])):
            count = unwrap_parens(count)
            if seq.kind == "tuple" and count.type == "number" and count.value.isdigit():
                return Shape("tuple", node=node, computed=True, n=seq.length * int(count.value))
    if t == "test" and len(node.children) == 5 and node.children[1] == "if":
        arms = [classify(node.children[0], fn, assignments, depth + 1, program),
                classify(node.children[4], fn, assignments, depth + 1, program)]
        if arms[0].kind == arms[1].kind and arms[0].kind in ("tuple", "list") and arms[0].length == arms[1].length:
            return Shape(arms[0].kind, node=node, computed=True, n=arms[0].length)
        if arms[0].kind == arms[1].kind and arms[0].kind in ("value", "none"):
            return Shape(arms[0].kind, node=node)
        return Shape("unknown", node=node)
    if t in ARITH and _is_arith(node, fn, assignments, depth + 1, program):
        return Shape("value", node=node)
    if t in ("power", "atom_expr"):
        return _classify_call(node, fn, assignments, depth, program)
    return Shape("unknown", node=node)


def _classify_call(node, fn: Function, assignments: dict, depth: int, program) -> Shape:
    """A call: ``tuple(<list of known length>)``, a helper of this file (its own returns), ``super().bprop(...)``,
    or a bare op / Tensor method call known to return one Tensor."""
    from ..engine.program import call_arguments, call_of, dotted

    call = call_of(node)
    if call is None:
        return Shape("unknown", node=node)
    callee, trailer = call
    positional, keywords, has_star = call_arguments(trailer)
    if callee == "tuple" and len(positional) == 1 and not keywords and not has_star:
        arg = unwrap_parens(positional[0])
        inner = classify(arg, fn, assignments, depth + 1, program)
        if inner.kind in ("tuple", "list") and not _mutated(fn, arg):
            return Shape("tuple", node=node, computed=True, n=inner.length)
        length = _comprehension_length(arg, fn, assignments, depth, program)
        if length is not None:
            return Shape("tuple", node=node, computed=True, n=length)
        return Shape("unknown", node=node)
    if program is not None:
        target = _called_function(program, fn, node, callee)
        if target is not None:
            found = returns_of(target, program, depth + 1)
            if found is not None and found.returns and not found.falls_through:
                shapes = [r.shape for r in found.returns]
                kinds = {(sh.kind, sh.length if sh.kind in ("tuple", "list") else None) for sh in shapes}
                if len(kinds) == 1:
                    kind, length = next(iter(kinds))
                    if kind in ("tuple", "list"):
                        return Shape(kind, node=node, computed=True, n=length)
                    if kind in ("value", "none", "dict"):
                        return Shape(kind, node=node)
            return Shape("unknown", node=node)
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


def _comprehension_length(node, fn, assignments, depth, program) -> int | None:
    """``[f(g) for g in (a, b)]`` / ``(f(g) for g in grads)``: the length of the iterated display, when the
    comprehension has one ``for`` and no ``if``."""
    node = unwrap_parens(node)
    inner = None
    if node.type == "atom" and node.children[0] in ("[", "(") and len(node.children) == 3:
        inner = node.children[1]
    elif node.type == "testlist_comp":
        inner = node
    if inner is None or inner.type != "testlist_comp" or len(inner.children) != 2:
        return None
    comp = inner.children[1]
    if comp.type not in ("comp_for", "sync_comp_for"):
        return None
    if comp.type == "comp_for":
        comp = comp.children[-1] if comp.children[-1].type == "sync_comp_for" else comp
    # sync_comp_for: 'for' targets 'in' iterable [comp_iter]
    if len(comp.children) != 4:
        return None  # a nested for / an if
    iterable = classify(comp.children[3], fn, assignments, depth + 1, program)
    if iterable.kind in ("tuple", "list"):
        return iterable.length
    return None


def _mutated(fn: Function, node) -> bool:
    """Whether the list a name refers to may change after its display (``grads.append(...)`` …)."""
    if node.type != "name":
        return False
    code = fn.node.get_code()
    name = node.value
    return any(f"{name}.{m}(" in code for m in ("append", "extend", "insert", "pop", "remove", "clear")) \
        or f"{name}[" in code and "] =" in code


def _augmented_length(fn: Function, name: str, assignments: dict, depth: int, program) -> int | None:
    """Entries added by ``name += (...)`` in the function's own top-level statements (0 when none); None when an
    augmentation is conditional, in a loop, or of unknown length."""
    from ..engine.program import iter_own_nodes

    if fn.node.type == "lambdef":
        return 0
    total = 0
    for node in iter_own_nodes(fn.node):
        if node.type != "expr_stmt" or len(node.children) != 3:
            continue
        target, op, value = node.children
        if target.type != "name" or target.value != name or op.type != "operator" or op.value not in ("+=", "*="):
            continue
        if op.value == "*=" or not _top_level(node, fn):
            return None
        shape = classify(value, fn, assignments, depth + 1, program)
        if shape.kind != "tuple":
            return None
        total += shape.length
    return total


def _top_level(stmt, fn: Function) -> bool:
    """The statement sits directly in the function body (no enclosing if/for/while/try/with)."""
    node = stmt.parent
    body = fn.node.children[-1]
    while node is not None and node is not body:
        if node.type in ("if_stmt", "for_stmt", "while_stmt", "try_stmt", "with_stmt", "match_stmt"):
            return False
        node = node.parent
    return True


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
    if node.type == "name":
        yield node.value
        return
    for c in getattr(node, "children", []):
        yield from _names_in(c)


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
            value = node.children[1] if len(node.children) > 1 else None
            found.append(ReturnInfo(node, classify(value, fn, assignments, depth, program)))
        elif node.type == "keyword" and node.value == "return" and node.parent.type != "return_stmt":
            found.append(ReturnInfo(node, Shape("none")))  # a bare `return`
    missing = not found and not _ends_in_raise(fn)
    falls, conditions = (False, ()) if not found else _falls_through(fn.node.children[-1])
    return Returns(found, missing, falls, tuple(conditions))


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
    from ..engine.mindspore_api import builtin_ops, getter_sites

    for op in ctx.custom_op_sites:
        if op.function is None or op.inputs is None:
            continue
        sig = Signature(op.function, skip_self=op.bound)
        if sig.vararg is not None or len(sig.positional) != op.inputs + 2:
            continue
        yield Subject(op.function, f"ops.Custom bprop {op.function.name}", op.inputs, op.inputs, "custom-op")
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
