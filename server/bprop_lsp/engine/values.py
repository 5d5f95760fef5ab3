"""A small value resolver: what a name or expression denotes at run time, as far as the file tells.

Answered by following simple bindings and never by running anything:

* ``resolve_function`` — which function an expression evaluates to, and how it is bound: a ``def`` (module-level,
  nested, a method), an alias (``bprop = backward``), a wrapper call (``staticmethod(f)``, ``jit(f)``), or a factory
  call whose returns are a nested ``def`` or ``lambda`` (``bprop = make_bprop(0.5)``). Anything else is unknown
  (``None``), never guessed.
* ``module_literal``, ``int_literal`` — the literal a module constant or an expression holds.

Whether a condition is known (``const_truth``, ``never_taken``) is ``conditions.py``'s. Every walk here is bounded
(``_MAX_DEPTH``) so that self-referencing bindings (``f = f``) end.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

from .definitions import Function
from .mindspore_api import JIT_NAMES, is_mindspore
from .program import Program
from .trees import (call_arguments, call_of, decorators_of, dict_items, is_within, iter_own_nodes, scope_of,
                    unwrap_parens)

_MAX_DEPTH = 8


@dataclass(frozen=True)
class Resolved:
    """A function an expression evaluates to, and how attribute lookup on a class will bind it."""

    function: Function
    # "method" (a plain function: bound to the instance), "staticmethod", "classmethod", "property".
    binding: str = "method"
    jit: bool = False  # wrapped by mindspore.jit (``bprop = ms.jit(f)``)
    wrapper: str | None = None  # the wrapping callee as written, for messages
    # The program of another module of the project the function is defined in (``workspace.py``: ``bprop =
    # scale_bprop`` after ``from .grads import scale_bprop``), None: this file's.
    home: object = field(default=None, compare=False)


# Whether a name imported from another module of the project is followed there (``across_modules``): only where
# what it resolves to is placed for this file (a Cell's bprop, an ops.Custom's func and bprop: ``Resolved.home``).
_ACROSS: ContextVar = ContextVar("bprop_lsp_across_modules", default=False)


@contextmanager
def across_modules():
    """Resolutions in the block follow names imported from another module of the project (``workspace.py``),
    when the program has a workspace; elsewhere such a name is unknown, as in a file alone."""
    token = _ACROSS.set(True)
    try:
        yield
    finally:
        _ACROSS.reset(token)


def resolve_function(program: Program, expr, *, class_members: dict | None = None, depth: int = 0) -> Resolved | None:
    """The function ``expr`` evaluates to. ``class_members`` are the bindings already made in the class body the
    expression sits in (a class body's names come first, then the enclosing scopes, then the module)."""
    if expr is None or depth > _MAX_DEPTH:
        return None
    expr = unwrap_parens(expr)
    t = expr.type
    if t == "lambdef":
        return Resolved(Function(expr, "<lambda>"))
    if t == "funcdef":
        return Resolved(Function(expr, expr.name.value, decorators=decorators_of(expr)))
    if t == "name":
        return _resolve_name(program, expr, class_members, depth)
    call = call_of(expr) if t in ("power", "atom_expr") else None
    if call is None and t in ("power", "atom_expr") and len(expr.children) == 2 and expr.children[0].type == "name":
        return _class_attribute(program, expr) or _table_entry(program, expr, depth) or \
            _module_attribute(program, expr, depth)
    if call is not None:
        callee, trailer = call
        positional, keywords, has_star = call_arguments(trailer)
        if callee in ("staticmethod", "classmethod", "property") and len(positional) == 1 and not keywords:
            inner = resolve_function(program, positional[0], class_members=class_members, depth=depth + 1)
            if inner is None or inner.binding != "method":
                return None
            return Resolved(inner.function, callee, inner.jit, callee, inner.home)
        if callee and is_mindspore(program.resolve_dotted(callee), JIT_NAMES, bare=("jit", "ms.jit")):
            if len(positional) >= 1:
                inner = resolve_function(program, positional[0], class_members=class_members, depth=depth + 1)
                if inner is not None:
                    return Resolved(inner.function, inner.binding, True, callee, inner.home)
            return None
        if callee and "." not in callee and not has_star:
            factory = _resolve_name(program, callee_name_node(expr), class_members, depth)
            if factory is not None and factory.binding == "method" and not factory.function.is_lambda:
                result = _factory_result(factory.home or program, factory.function, depth)
                if result is not None and factory.home is not None:
                    result = replace(result, home=factory.home)
                wrapped = _wrapped_argument(factory.function, result, positional) if result is not None else None
                if wrapped is not None:
                    # ``functools.wraps(fn)`` on the returned wrapper: GRAPH reads fn's signature (item 35)
                    return resolve_function(program, wrapped, class_members=class_members, depth=depth + 1)
                return result
        return None
    return None


def _class_attribute(program: Program, expr) -> Resolved | None:
    """``Scale.bprop`` in another class's body: the plain ``def`` of the file's only class of that name (looked up
    through its MRO); in Python 3 that is the function itself, bound anew on the class that takes it."""
    name, trailer = expr.children[0].value, expr.children[1]
    if trailer.type != "trailer" or trailer.children[0] != "." or trailer.children[1].type != "name":
        return None
    classes = program.classes_by_name.get(name) or []
    if len(classes) != 1 or scope_of(classes[0].node).type != "file_input":
        return None
    if program.assignments.get(name) or program.functions.get(name) or name in program.imports:
        return None  # the name is rebound somewhere: which class it names depends on the flow
    member = program.lookup(classes[0], trailer.children[1].value)
    if member is None or member.ambiguous or member.function is None or member.value is not None:
        return None
    fn = member.function
    if fn.is_lambda or fn.decorators:
        return None  # (a staticmethod read through the class is its function, a property is not a function)
    return Resolved(Function(fn.node, fn.name, decorators=fn.decorators))


def _table_entry(program: Program, expr, depth: int) -> Resolved | None:
    """``GRADS["square"]``: the entry of a module-level dict display bound once and never changed in place (no
    subscript assignment, ``del`` or method call on it in the file) whose keys are all string literals."""
    import ast

    name, trailer = expr.children[0].value, expr.children[1]
    if trailer.type != "trailer" or trailer.children[0] != "[" or trailer.children[1].type != "string":
        return None
    try:
        key = ast.literal_eval(trailer.children[1].value)
    except (ValueError, SyntaxError):
        return None
    values = program.assignments.get(name) or []
    if len(values) != 1 or program.functions.get(name) or name in program.imports:
        return None
    table = unwrap_parens(values[0])
    items = dict_items(table) if scope_of(table).type == "file_input" else None
    if not items:
        return None
    if program.text_contains(name + ".") or program.text_contains(name + " ."):
        return None  # ``GRADS.update(...)``, ``GRADS.setdefault(...)``: changed in place
    for stmt in program.nodes_matching(name, ("expr_stmt", "del_stmt")):
        if stmt.type == "del_stmt":
            return None
        for target in stmt.children[:-1:2] if len(stmt.children) >= 3 else ():
            code = target.get_code(include_prefix=False)
            if code.startswith(name) and code[len(name):].lstrip().startswith("["):
                return None  # ``GRADS["square"] = other``
    found = None
    for entry_key, value in items:
        if entry_key.type != "string":
            return None
        try:
            this = ast.literal_eval(entry_key.value)
        except (ValueError, SyntaxError):
            return None
        if this == key:
            found = value
    return resolve_function(program, found, depth=depth + 1) if found is not None else None


def _module_attribute(program: Program, expr, depth: int) -> Resolved | None:
    """``grads.scale_bprop`` after ``from . import grads``: the function another module of the project binds
    (``workspace.py``), else None."""
    name = expr.children[0].value
    trailer = expr.children[1]
    if program.workspace is None or not _ACROSS.get() or trailer.type != "trailer" \
            or trailer.children[0] != "." or trailer.children[1].type != "name":
        return None
    if program.assignments.get(name) or program.functions.get(name) or program.classes_by_name.get(name):
        return None  # rebound in the file: which module it names depends on the flow
    return _foreign(program, f"{name}.{trailer.children[1].value}", expr, depth)


def _foreign(program: Program, text: str, use, depth: int) -> Resolved | None:
    """The function the module-level import ``text`` (``name`` or ``module.name``) of ``program`` names in another
    module of the project, resolved in that module's program (its ``home``); None when it is none or unknown."""
    if depth >= _MAX_DEPTH:
        return None
    found = program.workspace.resolve_value(program, text)
    if found is None:
        return None
    home, leaf = found
    if home is program:
        return None
    result = _bound_in_scope(home, home.module, leaf, use, depth + 1)
    if result is _NOT_BOUND or result is None:
        return None
    return result if result.home is not None else replace(result, home=home)


def callee_name_node(call_node):
    return call_node.children[0]


def _resolve_name(program: Program, name_node, class_members: dict | None, depth: int) -> Resolved | None:
    name = name_node.value
    if class_members is not None and name in class_members:
        member = class_members[name]
        if member.function is not None and member.value is None:
            return Resolved(member.function)
        if member.value is not None and member.value is not name_node:
            return resolve_function(program, member.value, class_members=class_members, depth=depth + 1)
        return None
    # Enclosing function scopes (closures), innermost first, then the module.
    scope = scope_of(name_node)
    while scope is not None:
        if scope.type == "classdef":
            scope = scope_of(scope)
            continue  # a class body is not visible from the functions inside it
        found = _bound_in_scope(program, scope, name, name_node, depth)
        if found is not _NOT_BOUND:
            return found
        if scope.type == "file_input":
            break
        scope = scope_of(scope)
    return None


_NOT_BOUND = object()


def _bound_in_scope(program: Program, scope, name: str, use, depth: int):
    """The function ``name`` denotes in ``scope`` (its defs and single assignments), None when bound to something
    unknown or more than once, _NOT_BOUND when the scope does not bind it."""
    defs = [f for f in program.functions.get(name, []) if scope_of(f.node) is scope]
    values = [v for v in program.assignments.get(name, []) if scope_of(v) is scope]
    imported = scope.type == "file_input" and name in program.imports
    if not defs and not values and scope.type == "file_input" and program.workspace is not None and _ACROSS.get():
        found = _foreign(program, name, use, depth)  # imported from another module of the project
        if found is not None:
            return found
    if not defs and not values and not imported:
        return _NOT_BOUND
    if imported or len(defs) + len(values) != 1:
        return None  # an import, or rebound: which binding is live depends on the flow
    if defs:
        fn = defs[0]
        if not _binding_reaches(fn.node, use):
            return None
        return Resolved(Function(fn.node, fn.name, decorators=fn.decorators))
    value = values[0]
    if value is use or is_within(value, use):
        return None
    return resolve_function(program, value, depth=depth + 1)


def _wrapped_argument(factory: Function, result: Resolved, positional: list):
    """The call argument a factory's returned wrapper is ``functools.wraps``-ed from (``def logged(fn): @wraps(fn)
    def wrapper(*args): ...; return wrapper`` called as ``logged(f)``: ``f``), else None."""
    for dec in result.function.decorators:
        call = call_of(dec.children[1])
        if call is None or call[0] not in ("wraps", "functools.wraps"):
            continue
        args, keywords, has_star = call_arguments(call[1])
        if len(args) != 1 or keywords or has_star or args[0].type != "name":
            return None
        params = [p.name for p in factory.params if p.kind in ("positional", "posonly")]
        if args[0].value in params and params.index(args[0].value) < len(positional):
            return positional[params.index(args[0].value)]
    return None


def _factory_result(program: Program, factory: Function, depth: int) -> Resolved | None:
    """The function a factory returns when every return hands back the same nested ``def`` or a lambda."""
    results = []
    for node in iter_own_nodes(factory.node):
        if node.type == "return_stmt" and len(node.children) == 2:
            value = unwrap_parens(node.children[1])
            if value.type == "lambdef":
                results.append(Resolved(Function(value, "<lambda>")))
            elif value.type == "name":
                inner = [f for f in program.functions.get(value.value, []) if scope_of(f.node) is factory.node]
                if len(inner) != 1:
                    return None
                results.append(Resolved(Function(inner[0].node, inner[0].name, decorators=inner[0].decorators)))
            else:
                return None
        elif node.type in ("return_stmt", "yield_expr"):
            return None
    if not results or len({id(r.function.node) for r in results}) != 1:
        return None
    return results[0]


# ----------------------------------------------------------------------------------------------- helpers
def _binding_reaches(def_node, use) -> bool:
    """A ``def`` binds its name from where it stands: a use inside the same scope's code above it (at class-body
    or module execution time) sees no binding. Uses inside functions run later, so any position works."""
    use_scope = scope_of(use)
    if use_scope is scope_of(def_node) and use.start_pos < def_node.start_pos:
        return False
    return True


# ----------------------------------------------------------------------------------------------- module constants
def module_literal(program: Program, name_node):
    """The literal a module constant holds where ``name_node`` reads it: the name is bound exactly once in the file,
    at module level, to a number, string, ``True``/``False``/``None`` or a tuple of such (no def, import, class or
    local binding of it in the scopes between), else None. A constant built from other names is None: a reader
    gets only what the name's own statement says (the carried caches and rule keys hold that statement's code)."""
    name = name_node.value
    values = program.assignments.get(name, ())
    if len(values) != 1 or program.functions.get(name) or name in program.imports:
        return None
    value = values[0]
    scope = scope_of(value)
    if scope is None or scope.type != "file_input":
        return None
    if program.classes_by_name.get(name):
        return None
    # A binding of the same name in an enclosing function (a parameter, a local) shadows the module's.
    inner = scope_of(name_node)
    while inner is not None and inner.type != "file_input":
        if inner.type in ("funcdef", "lambdef") and _binds_locally(inner, name):
            return None
        inner = scope_of(inner)
    if value.start_pos > name_node.start_pos and scope_of(name_node).type == "file_input":
        return None  # read at module level above its binding
    value = unwrap_parens(value)
    return value if _is_literal(value) else None


def _binds_locally(fn_node, name: str) -> bool:
    for p in fn_node.get_params() if hasattr(fn_node, "get_params") else ():
        if p.name.value == name:
            return True
    for node in iter_own_nodes(fn_node):
        if node.type == "name" and node.value == name and node.is_definition():
            return True
        if node.type == "global_stmt" or node.type == "nonlocal_stmt":
            return True  # rebinding the module's name from inside: not a constant any more
    return False


def _is_literal(node) -> bool:
    stack = [(node, 0)]
    while stack:
        n, depth = stack.pop()
        if depth > _MAX_DEPTH:
            return False
        n = unwrap_parens(n)
        if n.type == "number" or n.type == "string" or (n.type == "keyword" and n.value in ("True", "False", "None")):
            continue
        if n.type == "factor" and n.children[0] in ("-", "+") and n.children[1].type == "number":
            continue
        if n.type == "atom" and n.children[0] == "(" and len(n.children) == 2:
            continue
        if n.type == "atom" and n.children[0] == "(" and n.children[1].type == "testlist_comp":
            inner = n.children[1]
            if any(c.type in ("comp_for", "sync_comp_for", "star_expr") for c in inner.children):
                return False
            stack.extend((c, depth + 1) for c in inner.children if c != ",")
            continue
        if n.type in ("testlist_star_expr", "testlist"):
            stack.extend((c, depth + 1) for c in n.children if c != ",")
            continue
        return False
    return True


def int_literal(node) -> int | None:
    """The value of a non-negative (or negated) int literal, else None."""
    node = unwrap_parens(node)
    sign = 1
    if node.type == "factor" and node.children[0] in ("-", "+") and len(node.children) == 2:
        sign = -1 if node.children[0] == "-" else 1
        node = node.children[1]
    if node.type == "number":
        text = node.value.replace("_", "").lower()
        try:
            return sign * int(text, 0)
        except ValueError:
            return None
    return None
