"""Where a Cell is called, and with what: the arguments MindSpore counts as forward inputs.

Only calls that can be tied to a class without running anything are found:
``Cls(...)(args)``, ``net(args)`` with ``net = Cls(...)``, ``self.net(args)`` with ``self.net = Cls(...)``,
and the same instances through a gradient transform: ``GradOperation(...)(net)(args)``,
``ms.grad(net)(args)``, ``value_and_grad(net, ...)(args)``, ``vjp(net, *args)``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .definitions import ClassInfo
from .program import Program
from .trees import call_arguments, call_of, callee_of, dotted, iter_scope_nodes

GRAD_TRANSFORMS = {"grad", "value_and_grad"}
VJP_TRANSFORMS = {"vjp"}
GRAD_OPERATION = {"GradOperation"}


@dataclass
class CallSite:
    node: object  # the call expression
    positional: list  # argument nodes
    keywords: dict  # name -> node
    has_star: bool  # *args / **kwargs at the call: counts unknown


@dataclass
class CallIndex:
    by_class: dict = field(default_factory=dict)  # id(ClassInfo) -> list[CallSite]

    def sites(self, cls: ClassInfo) -> list[CallSite]:
        return self.by_class.get(id(cls), [])


def build_call_index(program: Program) -> CallIndex:
    index = CallIndex()
    classes = {c.name: c for c in program.classes}
    assignments = program.assignments
    # What each resolution looked up (see ``_Lookups``), so that a statement's resolved calls are kept with it
    # while every lookup still gives the same answer.
    lookups = _Lookups(classes, assignments, program.functions)

    def instance_class(expr) -> ClassInfo | None:
        """The Cell class ``expr`` evaluates to an instance of, if it can be told."""
        c = call_of(expr) if expr.type in ("power", "atom_expr") else None
        if c and c[0] and "." not in c[0]:
            return lookups.cls(c[0]) or lookups.factory(c[0])
        if expr.type == "name":
            value = lookups.single_value(expr.value)
            if value is not None and value is not expr:
                return instance_class(value)
            return None
        text = dotted(expr)
        if text and text.startswith("self.") and text.count(".") == 1:
            attr = text[5:]
            # (the values of ``self.attr`` in the class around ``expr``: the statement holding ``expr``, which a
            # lookup that led here names by its node)
            found = [v for v in _self_attr_values(program, expr, attr)]
            if len(found) == 1:
                return instance_class(found[0])
        return None

    def resolve(ref) -> ClassInfo | None:
        """``instance_class`` of an expression, from what ``_local_ref`` read of it."""
        if ref[0] == "class":
            return lookups.cls(ref[1]) or lookups.factory(ref[1])
        if ref[0] == "name":
            # a name: what its one module binding is an instance of (a name never reads as ``self.x``)
            value = lookups.single_value(ref[1].value)
            if value is not None and value is not ref[1]:
                return instance_class(value)
            return None
        if ref[0] == "endless":
            raise RecursionError("a reference that never ends")
        return None

    # The calls of each top-level statement are read once and kept with it (Program.statement_facts): an edit
    # re-reads the statement it touched. What a call's callee refers to is followed within the statement as far
    # as it goes (``self.net`` to the ``self.net = ...`` of its class); only the rest (a class name, a module
    # name) is resolved here, against the whole file, and the result is kept with the statement with what it
    # looked up: a keystroke elsewhere resolves nothing again when those lookups answer the same.
    functions = program.functions
    bound = assignments.__contains__

    def named(name: str) -> bool:  # a class, or a function that may be a factory of one (``_Lookups.factory``)
        return name in classes or name in functions
    delta = program.delta
    entries = program._entries
    # What each statement's calls resolved to, with every name the resolution read (None: it must be read again),
    # in order, for the next program: after a keystroke that replaced one statement, a statement none of whose
    # names the replaced one binds (or bound) resolves as it did, without asking the tables again.
    found_by_statement: list = [None] * len(entries)
    program.__dict__["_calls_found"] = found_by_statement
    before = delta.previous.__dict__.get("_calls_found") if delta is not None else None
    changed = _changed_names(program, delta) if before is not None and len(before) == len(entries) else None
    for j, (child, _scanned, facts) in enumerate(entries):
        if changed is not None and facts is not delta.new[2]:
            kept = before[j]
            if kept is not None and kept[1].isdisjoint(changed):
                found_by_statement[j] = kept
                for cls, site in kept[0]:
                    index.by_class.setdefault(id(cls), []).append(site)
                continue
        refs = facts.get("call_refs")
        if refs is None:
            calls = facts.get("calls")
            if calls is None:
                calls = facts["calls"] = _candidate_calls(program, facts, child)
            refs = facts["call_refs"] = _call_refs(program, calls)
            facts["call_ref_names"] = _ref_names(refs)
        if not refs:
            found_by_statement[j] = _NO_CALLS
            continue
        names, class_names, endless = facts["call_ref_names"]
        if not endless and not any(map(bound, names)) and not any(map(named, class_names)):
            found_by_statement[j] = ((), frozenset(names).union(class_names))
            continue  # no name the statement's calls refer to is bound in the module: none resolves
        kept = facts.get("call_sites")
        if kept is not None and lookups.same(kept[0]):
            found = kept[1]
        else:
            lookups.start()
            found = []
            for node, positional, keywords, has_star, callee_ref, transformed_ref, vjp_ref in refs:
                cls = None
                args = (positional, keywords, has_star)
                if callee_ref is not None:
                    cls = resolve(callee_ref)
                    if cls is None and transformed_ref is not None:
                        # W(net)(args): W a gradient transform (ms.grad, value_and_grad, GradOperation(...)).
                        cls = resolve(transformed_ref)
                if cls is None and vjp_ref is not None:
                    cls = resolve(vjp_ref)
                    args = (positional[1:], {}, has_star)
                if cls is not None:
                    found.append((cls, CallSite(node, *args)))
            facts["call_sites"] = (lookups.taken(), found)
        if not endless:
            # (every name the statement's resolution read: its references' and those its lookups followed)
            found_by_statement[j] = (found, frozenset(names).union(
                class_names, (name for _, name, _ in facts["call_sites"][0])))
        for cls, site in found:
            index.by_class.setdefault(id(cls), []).append(site)
    return index


_NO_CALLS = ((), frozenset())  # a statement with no call a Cell instance can be made of


def _changed_names(program: Program, delta) -> frozenset:
    """The names whose lookups (a class by name, a name's one binding, whether it is bound at all) may answer
    otherwise than in the last program: those the replaced statement and its replacement bind (classes, assignments)
    and the classes built with ``type(...)`` (new objects in every program)."""
    from .program import _assignment_pairs

    from .program import _functions_of

    names = {cls.name for cls in delta.old[1][1]}
    names.update(cls.name for cls in delta.new[1][1])
    names.update(fn.name for fn in _functions_of(delta.old))  # (a factory's def: ``_Lookups.factory``)
    names.update(fn.name for fn in _functions_of(delta.new))
    names.update(name for name, _ in _assignment_pairs(delta.old))
    names.update(name for name, _ in _assignment_pairs(delta.new))
    previous_classes = delta.previous.classes
    names.update(cls.name for cls in previous_classes[len(previous_classes) - delta.previous.synthetic:])
    names.update(cls.name for cls in program.classes[len(program.classes) - program._synthetic:])
    return frozenset(names)


class _Lookups:
    """The lookups a call's resolution makes against the whole file — a class by name, a name's one binding, a
    factory function's class — recorded per statement: ``same(recorded)`` tells whether they all answer as they did
    (the same ClassInfo, the same value node, still not exactly one value, the same ``def`` node), so that the
    statement's resolved calls can be kept."""

    def __init__(self, classes: dict, assignments: dict, functions: dict | None = None):
        self._classes = classes
        self._assignments = assignments
        self._functions = functions if functions is not None else {}
        self._taken: list = []

    def start(self) -> None:
        self._taken = []

    def taken(self) -> tuple:
        return tuple(self._taken)

    def cls(self, name: str):
        found = self._classes.get(name)
        self._taken.append((True, name, found))
        return found

    def single_value(self, name: str):
        values = self._assignments.get(name)
        found = values[0] if values is not None and len(values) == 1 else None
        self._taken.append((False, name, found))
        return found

    def factory(self, name: str):
        """The class a module-level function ``name`` returns an instance of: ``def make(...): ... return Cls(...)``
        with every return a call of the same class name of the file (``class Cls`` may be nested in it), and
        ``name`` bound by nothing else (bprop-rules.md, item 44: case 321's quantizer factory)."""
        fns = self._functions.get(name) or ()
        node = fns[0].node if len(fns) == 1 and not self._assignments.get(name) else None
        found = None
        if node is not None and (node.parent is None or node.parent.type in ("file_input", "decorated")):
            target = _factory_class_name(node)
            if target is not None:
                found = self._classes.get(target)
                self._taken.append((True, target, found))
        self._taken.append(("factory", name, node))
        return found

    def same(self, recorded: tuple) -> bool:
        classes, assignments = self._classes, self._assignments
        for is_class, name, found in recorded:
            if is_class == "factory":
                fns = self._functions.get(name) or ()
                now = fns[0].node if len(fns) == 1 and not assignments.get(name) else None
                if now is not found:
                    return False
                continue
            if is_class:
                if classes.get(name) is not found:
                    return False
            else:
                values = assignments.get(name)
                now = values[0] if values is not None and len(values) == 1 else None
                if now is not found:
                    return False
        return True


_NOTHING = ("none",)


def _factory_class_name(fn_node) -> str | None:
    """The class name every ``return`` of a function calls (``return Cls(...)``), when there is one and no
    ``yield``; None otherwise. Walks the function's own statements (an explicit stack: no recursion)."""
    from .trees import iter_own_nodes

    names = set()
    for node in iter_own_nodes(fn_node):
        if node.type in ("yield_expr", "yield_arg") or (node.type == "keyword" and node.value == "yield"):
            return None
        if node.type == "return_stmt" and len(node.children) == 2:
            c = call_of(node.children[1]) if node.children[1].type in ("power", "atom_expr") else None
            if c is None or not c[0] or "." in c[0]:
                return None
            names.add(c[0])
        elif node.type == "keyword" and node.value == "return" and node.parent.type != "return_stmt":
            return None
    return names.pop() if len(names) == 1 else None


def _call_refs(program: Program, calls: list) -> list[tuple]:
    """The candidate calls of one statement with what their callee (the transformed function, vjp's first
    argument) refers to as far as the statement tells (``_local_ref``); calls whose every reference is already
    known to name no instance are left out."""
    refs = []
    for node, callee_node, name, positional, keywords, has_star, transformed in calls:
        callee_ref = transformed_ref = vjp_ref = None
        if callee_node is not None:
            callee_ref = _guarded_ref(program, callee_node)
            if transformed is not None:
                transformed_ref = _guarded_ref(program, transformed)
        if name and name.rsplit(".", 1)[-1] in VJP_TRANSFORMS and positional:
            vjp_ref = _guarded_ref(program, positional[0])
        if all(r is None or r is _NOTHING for r in (callee_ref, transformed_ref, vjp_ref)):
            continue
        refs.append((node, positional, keywords, has_star, callee_ref, transformed_ref, vjp_ref))
    return refs


def _ref_names(refs: list) -> tuple[tuple, tuple, bool]:
    """(names, class names, whether a reference never ends) among a statement's call references."""
    names, class_names, endless = set(), set(), False
    for ref in (r for entry in refs for r in entry[4:]):
        if ref is None:
            continue
        if ref[0] == "name":
            names.add(ref[1].value)
        elif ref[0] == "class":
            class_names.add(ref[1])
        elif ref[0] == "endless":
            endless = True
    return tuple(names), tuple(class_names), endless


def _guarded_ref(program: Program, expr) -> tuple:
    """``_local_ref``; a reference that never ends (``self.a = self.b`` and ``self.b = self.a``) is kept as such and
    raises when it is resolved, where ``instance_class`` would have raised."""
    try:
        return _local_ref(program, expr)
    except RecursionError:
        return ("endless",)


def _local_ref(program: Program, expr) -> tuple:
    """``instance_class`` (build_call_index) up to its first look outside the expression's statement:
    ("class", name) for a call of a bare name, ("name", node) for a name (the module's bindings decide), or
    _NOTHING. ``self.attr`` is followed to the class's ``self.attr = ...`` (the same statement)."""
    c = call_of(expr) if expr.type in ("power", "atom_expr") else None
    if c and c[0] and "." not in c[0]:
        return ("class", c[0])
    if expr.type == "name":
        return ("name", expr)  # a name never reads as ``self.x``: unbound, it names nothing
    text = dotted(expr)
    if text and text.startswith("self.") and text.count(".") == 1:
        found = _self_attr_values(program, expr, text[5:])
        if len(found) == 1:
            return _local_ref(program, found[0])
    return _NOTHING


def _candidate_calls(program: Program, facts: dict, root) -> list[tuple]:
    """The calls under the top-level statement ``root`` (whose facts are ``facts``), in walk order, that may be
    calls of a Cell instance, read from their own text: (call node, callee, callee's dotted name, positional,
    keywords, has_star, the first argument of a gradient transform when the callee is one). Calls whose callee
    cannot name an instance (``ops.Sign()(x)``, ``F.zeros_like(x)``, ``print(x)`` ...) are left out: resolving them
    could only give None. Read per simple statement (``_per_simple_statement``); a compound statement's header is
    read on the way."""
    return _per_simple_statement(program, facts, root, "calls_by_statement", _calls_under, _header_calls)


def _header_calls(node) -> list[tuple]:
    return _calls_under(node, only_root=True) if node.type in ("power", "atom_expr") else []


def _per_simple_statement(program: Program, facts: dict, root, key: str, read, visit=None) -> list:
    """``read(simple statement)`` of every simple statement under ``root`` (in the top-level statement whose facts
    are ``facts``), joined in walk order with ``visit(node)`` of the other nodes on the way (None: nothing).

    Each simple statement's result is kept in ``facts[key]``; a statement typed in takes the results of the
    statement it replaced (``program.delta``) for the simple statements they share: a keystroke re-parses one
    statement of a body (parsing.py), the others are the same nodes, and walking a whole class again for one
    changed line cost ~0.5 ms. (Only the nodes still there are kept: the replaced statement's are read, not
    copied.)"""
    stores = facts.get(key)
    if stores is None:
        delta = program.delta
        taken = delta.old[2].get(key) if delta is not None and delta.new[2] is facts else None
        stores = facts[key] = ({}, taken[0] if taken is not None else {})
    store, before = stores
    found: list = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "simple_stmt":
            kept = store.get(id(node))
            if kept is None or kept[0] is not node:
                kept = before.get(id(node))
                if kept is None or kept[0] is not node:
                    kept = (node, read(node))
                store[id(node)] = kept
            found += kept[1]
            continue
        if visit is not None:
            found += visit(node)
        children = getattr(node, "children", None)
        if children:
            stack.extend(reversed(children))
    return found


def _calls_under(root, only_root: bool = False) -> list[tuple]:
    """``_candidate_calls`` of ``root``, walked in full (or of ``root`` alone)."""
    found = []
    for node in ((root,) if only_root else iter_scope_nodes(root)):
        if node.type not in ("power", "atom_expr"):
            continue
        c = call_of(node)
        if not c:
            continue
        callee_node = callee_of(node)
        positional, keywords, has_star = call_arguments(c[1])
        transformed = None
        maybe = False
        if callee_node is not None:
            maybe = _may_name_instance(callee_node)
            inner = call_of(callee_node) if callee_node.type in ("power", "atom_expr") else None
            if inner is not None:
                name = (inner[0] or "").rsplit(".", 1)[-1]
                w_pos, _, _ = call_arguments(inner[1])
                transform_callee = callee_of(callee_node)
                is_grad_op = transform_callee is not None and call_of(transform_callee) is not None and \
                    (call_of(transform_callee)[0] or "").rsplit(".", 1)[-1] in GRAD_OPERATION
                if w_pos and (name in GRAD_TRANSFORMS or name in GRAD_OPERATION or is_grad_op) \
                        and _may_name_instance(w_pos[0]):
                    transformed = w_pos[0]
        vjp = bool(c[0] and c[0].rsplit(".", 1)[-1] in VJP_TRANSFORMS and positional
                   and _may_name_instance(positional[0]))
        if maybe or transformed is not None or vjp:
            found.append((node, callee_node, c[0], positional, keywords, has_star, transformed))
    return found


def _may_name_instance(expr) -> bool:
    """Whether ``instance_class`` (build_call_index) can find anything for ``expr``: the forms it reads — a call
    of a bare name, a name, ``self.attr`` — judged from the expression alone."""
    if expr.type in ("power", "atom_expr"):
        c = call_of(expr)
        if c and c[0] and "." not in c[0]:
            return True
    if expr.type == "name":
        return True
    text = dotted(expr)
    return bool(text and text.startswith("self.") and text.count(".") == 1)


def _self_attr_values(program: Program, expr, attr: str):
    cls_node = _search(expr, "classdef")
    if cls_node is None:
        return []
    return _self_assignment_values(program, cls_node).get(attr, [])


def _self_assignment_values(program: Program, cls_node) -> dict:
    """attribute -> values of every ``self.attr = value`` anywhere under the class statement (read once per
    class statement, kept with the top-level statement that holds it)."""
    statement_facts = program.statement_facts(cls_node)
    facts = statement_facts.setdefault("self_attr_values", {})
    entry = facts.get(id(cls_node))
    if entry is None or entry[0] is not cls_node:
        # (read per simple statement, an assignment being one: a keystroke reads the line it changed)
        values: dict = {}
        for attr, value in _per_simple_statement(program, statement_facts, cls_node, "self_attrs_by_statement",
                                                 _self_assignments_in):
            values.setdefault(attr, []).append(value)
        entry = facts[id(cls_node)] = (cls_node, values)
    return entry[1]


def _self_assignments_in(simple_stmt) -> list[tuple[str, object]]:
    """(attr, value) of each ``self.attr = value`` in one simple statement, in order."""
    found = []
    for node in iter_scope_nodes(simple_stmt):
        if node.type == "expr_stmt" and len(node.children) >= 3 and node.children[1] == "=":
            text = dotted(node.children[0])
            if text and text.startswith("self.") and text.count(".") == 1:
                found.append((text[5:], node.children[-1]))
    return found


def _search(node, type_):
    parent = getattr(node, "parent", None)
    if parent is None and hasattr(node, "children") and node.children:
        parent = node.children[0].parent
    while parent is not None and parent.type != type_:
        parent = parent.parent
    return parent
