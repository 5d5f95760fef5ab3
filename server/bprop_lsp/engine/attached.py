"""Bindings a class receives after its ``class`` statement: MindSpore reads the class as it stands when the
gradient is taken (bprop-rules.md, further behaviours 33-34), not as its body spells it.

Read statically, never run:

* module level: ``Cls.bprop = f``, ``setattr(Cls, "bprop", f)``, and both in ``for`` loops over literal tuples,
  lists and dicts (``.items()``, ``.keys()``, ``.values()``) of classes, names and functions, also through a module
  name bound once to such a display;
* class decorators defined in the file (``@deco``, ``@deco_factory(fn)``), whose straight-line body sets the
  attribute on its class parameter;
* ``__init_subclass__`` of a base defined in the file (``cls.bprop = f``);
* metaclasses defined in the file whose ``__new__`` puts or renames ``bprop`` in the namespace
  (``namespace["bprop"] = namespace.pop("backward")``, under ``if "backward" in namespace:`` too) or sets it on
  the class (``__new__``'s result, ``__init__``'s ``cls``);
* ``type(self).bprop = f`` / ``self.__class__.bprop = f`` in ``__init__``.

A binding made after an instance exists (``type(self).bprop = f`` after ``super().__init__()``, a module-level
patch after a module-level ``Cls(...)``) is used by GRAPH and not by PYNATIVE for that instance
(``Member.graph_only``).

Whatever touches a tracked attribute in a way not read here (a non-literal attribute name, a conditional, a
binding inside a function that may or may not run, twice at module level) makes that class's lookup unknown
(``opaque``), and the rules stay silent on it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .definitions import ClassInfo, Function, Member
from .trees import (call_arguments, call_of, decorators_of, dict_items, display_items, dotted, scope_of, string_value,
                    unwrap_parens)

# The attributes whose late binding changes what a rule reads of a class.
TRACKED = frozenset({"bprop", "construct"})
# Words a statement must hold to bind one of them (``setattr`` with a name from a registry too).
_WORDS = TRACKED | {"setattr", "__class__", "__init_subclass__", "metaclass"}
_THE_CLASS = object()  # in an environment: the class a decorator, ``__init_subclass__`` or metaclass receives


@dataclass
class Attached:
    """What the file binds on its classes outside their bodies."""

    members: dict = field(default_factory=dict)  # id(class) -> {attribute: Member}
    opaque: set = field(default_factory=set)  # ids of classes whose tracked attributes are bound unreadably
    everywhere_opaque: bool = False  # a tracked attribute bound on classes that cannot be told

    def member(self, cls: ClassInfo, name: str):
        """The Member bound on ``cls`` itself, None when none is, ``False`` when unknown."""
        if name in TRACKED and (self.everywhere_opaque or id(cls) in self.opaque):
            return False
        return self.members.get(id(cls), {}).get(name)

    def touches(self, cls: ClassInfo) -> bool:
        return self.everywhere_opaque or id(cls) in self.opaque or id(cls) in self.members

    def _bind(self, cls: ClassInfo, name: str, member: Member | None, *, replace: bool = False) -> None:
        if member is None:
            self.opaque.add(id(cls))
            return
        names = self.members.setdefault(id(cls), {})
        if name in names and not replace:
            self.opaque.add(id(cls))  # bound twice: which one the gradient sees depends on the flow
        names[name] = member

    def _then(self, later: "Attached", *, ordered: bool) -> None:
        """``later``'s bindings made after these (``ordered``: they replace them; else which one the gradient sees
        depends on the flow, and a name bound by both is unknown)."""
        self.everywhere_opaque = self.everywhere_opaque or later.everywhere_opaque
        self.opaque |= later.opaque
        for key, names in later.members.items():
            mine = self.members.setdefault(key, {})
            if not ordered and not mine.keys().isdisjoint(names):
                self.opaque.add(key)
            mine.update(names)


def attached_bindings(program) -> Attached:
    """Every late binding of ``program``'s classes (see the module docstring), in the order Python makes them: a
    metaclass's ``__new__`` (on the namespace) and ``__init__``, ``__init_subclass__``, the class decorators
    (innermost first), then the module's statements after the class; ``type(self)`` in ``__init__`` runs whenever an
    instance is built, in no order with the module's statements."""
    found = Attached()
    if not program.has_late_sources:
        return found
    for cls in program.classes:
        _metaclass(program, found, cls)
        _init_subclass(program, found, cls)
        _decorated(program, found, cls)
    module = Attached()
    for index, top in enumerate(program.module.children):
        if top.type in ("classdef", "funcdef", "decorated", "async_stmt", "async_funcdef"):
            continue
        if not _mentions_any(top):
            continue
        if top.type == "simple_stmt":
            _module_simple(program, module, top, {}, index)
        elif top.type == "for_stmt":
            _module_for(program, module, top, index)
        else:
            _opaque_in(program, module, top, {})
    _nested_bindings(program, module)
    found._then(module, ordered=True)
    at_init = Attached()
    for cls in program.classes:
        _init_type_self(program, at_init, cls)
    found._then(at_init, ordered=False)
    return found


# ------------------------------------------------------------------------------------------------ module level
def _mentions_any(node) -> bool:
    code = node.get_code()
    return any(w in code for w in _WORDS)


def _module_simple(program, found: Attached, stmt, env: dict, index: int) -> None:
    for small in stmt.children if stmt.type == "simple_stmt" else [stmt]:
        binding = _read_binding(program, small, env)
        if binding is None:
            continue
        target, name, value = binding
        if target is None:
            if name is None or name in TRACKED:
                found.everywhere_opaque = True
            continue
        if name is not None and name not in TRACKED:
            continue
        member = None
        if name is not None and value is not None:
            member = Member(name, target, value=value, node=small, scope={})
            member.graph_only = _instance_before(program, target, index)
        found._bind(target, name or "bprop", member)


def _module_for(program, found: Attached, loop, index: int) -> None:
    """``for a, b in <literal display>: <simple statements>``: each iteration read with its names bound."""
    targets, iterations = _loop_iterations(program, loop)
    body = loop.children[5] if len(loop.children) > 5 else None
    statements = _body_statements(body)
    if iterations is None or statements is None or len(loop.children) > 6:
        _opaque_in(program, found, loop, {}, all_unknown=True)
        return
    for element in iterations:
        env = _unpack(targets, element)
        if env is None:
            _opaque_in(program, found, loop, {}, all_unknown=True)
            return
        for stmt in statements:
            _module_simple(program, found, stmt, env, index)


def _loop_iterations(program, loop):
    """(target names, the elements iterated) of a ``for`` over a literal display; (names, None) otherwise."""
    target = loop.children[1]
    names = _target_names(target)
    iterable = unwrap_parens(loop.children[3])
    method = None
    if iterable.type in ("power", "atom_expr") and len(iterable.children) == 3 \
            and iterable.children[1].type == "trailer" and iterable.children[1].children[0] == "." \
            and iterable.children[2].type == "trailer" and iterable.children[2].get_code().replace(" ", "") == "()":
        method = iterable.children[1].children[1].value
        iterable = iterable.children[0]
    iterable = _display_of(program, iterable)
    if iterable is None:
        return names, None
    pairs = dict_items(iterable)
    if pairs is not None:
        if method == "items":
            return names, [("pair", k, v) for k, v in pairs]
        if method == "values":
            return names, [v for _, v in pairs]
        if method in (None, "keys"):
            return names, [k for k, _ in pairs]
        return names, None
    items = display_items(iterable) if method is None else None
    if items is None and method is None and iterable.type == "atom" and iterable.children[0] == "(" \
            and len(iterable.children) == 3 and iterable.children[1].type == "testlist_comp":
        items = [c for c in iterable.children[1].children if c != ","]
    return names, items


def _display_of(program, node):
    """A display node, following a module name bound once to one."""
    node = unwrap_parens(node)
    if node.type == "name":
        values = program.assignments.get(node.value, [])
        if len(values) != 1 or scope_of(values[0]).type != "file_input" or node.value in program.functions:
            return None
        node = unwrap_parens(values[0])
    return node if node.type == "atom" else None


def _target_names(target):
    target = unwrap_parens(target)
    if target.type == "name":
        return target.value
    if target.type in ("exprlist", "testlist_star_expr", "testlist_comp") or (
            target.type == "atom" and target.children[0] in ("(", "[")):
        inner = target.children[1] if target.type == "atom" else target
        items = [c for c in inner.children if c != ","] if inner.type in (
            "exprlist", "testlist_star_expr", "testlist_comp") else [inner]
        names = [_target_names(i) for i in items]
        return None if any(n is None for n in names) else names
    return None


def _unpack(targets, element) -> dict | None:
    if targets is None:
        return None
    if isinstance(targets, str):
        if isinstance(element, tuple):
            return None
        return {targets: element}
    if isinstance(element, tuple):
        items = list(element[1:])
    else:
        node = unwrap_parens(element)
        items = display_items(node)
        if items is None and node.type == "atom" and node.children[0] == "(" and len(node.children) == 3 \
                and node.children[1].type == "testlist_comp":
            items = [c for c in node.children[1].children if c != ","]
        if items is None:
            return None
    if len(items) != len(targets):
        return None
    env = {}
    for t, item in zip(targets, items):
        sub = _unpack(t, item)
        if sub is None:
            return None
        env.update(sub)
    return env


def _body_statements(body) -> list | None:
    """The simple statements of a suite, None when it holds a compound statement."""
    if body is None:
        return None
    if body.type == "simple_stmt":
        return [c for c in body.children if c.type not in ("newline", "operator")]
    found = []
    for child in body.children:
        if child.type == "newline":
            continue
        if child.type != "simple_stmt":
            return None
        found += [c for c in child.children if c.type not in ("newline", "operator")]
    return found


def _read_binding(program, node, env: dict):
    """``X.attr = v`` or ``setattr(X, "attr", v)`` with names in ``env`` substituted: (class or None when it cannot
    be told, attribute name or None when it cannot be told, value node or None); None when it is neither form."""
    if node.type == "expr_stmt" and len(node.children) == 3 and node.children[1] == "=":
        target, value = node.children[0], node.children[2]
        if target.type not in ("power", "atom_expr"):
            return None
        last = target.children[-1]
        if last.type != "trailer" or last.children[0] != ".":
            return None
        name = last.children[1].value
        if name not in TRACKED:
            return None
        owner = _owner_of(program, target.children[:-1], env)
        return owner, name, _subst(value, env)
    if node.type in ("power", "atom_expr"):
        call = call_of(node)
        if call is None or call[0] != "setattr" or "setattr" in program.imports:
            return None
        positional, keywords, has_star = call_arguments(call[1])
        if len(positional) != 3 or keywords or has_star:
            return None  # (a TypeError when run)
        owner_node, name_node, value = positional
        name_node = _subst(name_node, env)
        name = string_value(name_node) if name_node.type == "string" else None
        if name is not None and name not in TRACKED:
            return None
        owner = _owner_of(program, [owner_node], env)
        return owner, name, _subst(value, env)
    return None


def _subst(node, env: dict):
    if node.type == "name" and node.value in env and env[node.value] is not _THE_CLASS:
        return env[node.value]
    return node


def _owner_of(program, parts: list, env: dict):
    """The class a target expression names (its parts without the attribute), None when it cannot be told."""
    if len(parts) == 1:
        node = _subst(parts[0], env)
        if node.type == "name":
            if env.get(node.value) is _THE_CLASS:
                return env["__class__"]
            if node.value in program.imports:
                return None
            return program.class_named(node.value)
    return None


def _opaque_in(program, found: Attached, node, env: dict, *, all_unknown: bool = False) -> None:
    """A statement binding tracked attributes in a way not read: the classes it names become unknown."""
    for small in _small_statements(node):
        binding = _read_binding(program, small, env)
        if binding is None:
            continue
        target = binding[0]
        if target is None or all_unknown:
            if binding[1] is None or binding[1] in TRACKED:
                found.everywhere_opaque = True
            continue
        found._bind(target, binding[1] or "bprop", None)


def _small_statements(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("expr_stmt", "power", "atom_expr"):
            yield n
            if n.type == "expr_stmt":
                continue
        children = getattr(n, "children", None)
        if children and n.type not in ("lambdef",):
            stack.extend(reversed(children))


def _nested_bindings(program, found: Attached) -> None:
    """Bindings inside functions that are no decorator, ``__init_subclass__``, metaclass or ``__init__`` read here:
    whether they run is not known, so the class they name is."""
    for fns in program.functions.values():
        for fn in fns:
            if fn.name in ("__init_subclass__", "__new__") or not _mentions_any(fn.node):
                continue
            scope = scope_of(fn.node)
            if scope is not None and scope.type == "funcdef":
                continue  # read with its enclosing function
            me = fn.params[0].name if fn.name == "__init__" and fn.params else None
            for small in _small_statements(fn.body):
                binding = _read_binding(program, small, {})
                if binding is None or (me is not None and _type_self_binding(small, me) is not None):
                    continue  # (``type(self).bprop = f`` in ``__init__``: read by ``_init_type_self``)
                target = binding[0]
                if target is None:
                    if _owned_by_parameter(small):
                        continue  # a decorator's class parameter, or an instance's: read where it is applied
                    if binding[1] is None or binding[1] in TRACKED:
                        found.everywhere_opaque = True
                    continue
                found._bind(target, binding[1] or "bprop", None)


def _owned_by_parameter(small) -> bool:
    """Whether the object a binding statement sets an attribute on is a parameter of its function."""
    if small.type == "expr_stmt":
        owner = small.children[0]
        head = owner.children[0] if owner.type in ("power", "atom_expr") else None
    else:
        positional = call_arguments(call_of(small)[1])[0]
        head = unwrap_parens(positional[0]) if positional else None
        if head is not None and head.type in ("power", "atom_expr"):
            head = head.children[0]
    if head is None or head.type != "name":
        return False
    scope = scope_of(small)
    while scope is not None and scope.type in ("funcdef", "lambdef"):
        if scope.type == "funcdef" and head.value in [p.name for p in Function(scope, scope.name.value).params]:
            return True
        scope = scope_of(scope)
    return False


def _instance_before(program, cls: ClassInfo, index: int) -> bool:
    """Whether a module-level statement before the ``index``-th builds an instance of ``cls`` (``net = Cls()``)."""
    for call in program.calls_of(cls.name):
        top = call
        while top.parent is not None and top.parent.type != "file_input":
            top = top.parent
            if top.type in ("funcdef", "classdef", "lambdef"):
                break
        else:
            if top.parent is not None and program.module.children.index(top) < index:
                return True
    return False


# ------------------------------------------------------------------------------------------------ in the file
def _function_named(program, name: str) -> Function | None:
    fns = [f for f in program.functions.get(name, []) if scope_of(f.node).type == "file_input"]
    if len(fns) != 1 or name in program.imports or program.assignments.get(name):
        return None
    return fns[0]


def _read_body(program, found: Attached, cls: ClassInfo, fn: Function, env: dict, *, graph_only=False,
               replace=True) -> None:
    """The straight-line body of ``fn`` setting attributes on the class (``env`` maps its names)."""
    env = dict(env, __class__=cls)
    statements = _guarded_statements(program, cls, fn.body, env)
    if statements is None:
        if _mentions_any(fn.body):
            for small in _small_statements(fn.body):
                binding = _read_binding(program, small, env)
                if binding is not None and binding[0] is cls:
                    found._bind(cls, binding[1] or "bprop", None)
        return
    for small in statements:
        binding = _read_binding(program, small, env)
        if binding is None or binding[0] is not cls:
            continue
        _, name, value = binding
        member = None
        if name is not None and value is not None:
            member = _class_member_copy(program, cls, name, value, env)
            if member is None:
                member = Member(name, cls, value=value, node=small, scope={})
            member.graph_only = graph_only
        found._bind(cls, name or "bprop", member, replace=replace)


def _guarded_statements(program, cls: ClassInfo, body, env: dict) -> list | None:
    """The simple statements a body runs on ``cls``: straight-line ones, and those of an ``if`` (no ``elif`` or
    ``else``) whose condition asks what the class defines (``"backward" in cls.__dict__``, ``"backward" in
    vars(cls)``, ``hasattr(cls, "backward")``), known from the class bodies; None when it holds anything else."""
    statements = _body_statements(body)
    if statements is not None or body is None or body.type != "suite":
        return statements
    found = []
    for child in body.children:
        if child.type == "newline":
            continue
        if child.type == "simple_stmt":
            found += [c for c in child.children if c.type not in ("newline", "operator")]
            continue
        if child.type != "if_stmt" or len(child.children) != 4:
            return None
        known = _class_defines(program, cls, child.children[1], env)
        inner = _body_statements(child.children[3])
        if known is None or inner is None:
            return None
        if known:
            found += inner
            if any(small.type == "return_stmt" or getattr(small, "value", None) == "return" for small in inner):
                return found  # (``if "backward" not in vars(cls): return``: nothing after it runs)
    return found


def _class_reference(node, env: dict) -> bool:
    """Whether ``node`` names the class a decorator, ``__init_subclass__`` or metaclass was handed."""
    return node.type == "name" and env.get(node.value) is _THE_CLASS


def _own_namespace(node, env: dict) -> bool:
    """``cls.__dict__`` or ``vars(cls)``."""
    if node.type not in ("power", "atom_expr") or len(node.children) != 2:
        return False
    return _own_namespace_parts(node.children[0], node.children[1], env)


def _own_namespace_parts(head, trailer, env: dict) -> bool:
    if trailer.type != "trailer":
        return False
    if _class_reference(head, env) and trailer.children[0] == "." and trailer.children[1].value == "__dict__":
        return True
    if head.type == "name" and head.value == "vars" and trailer.children[0] == "(":
        positional, keywords, has_star = call_arguments(trailer)
        return len(positional) == 1 and not keywords and not has_star and _class_reference(positional[0], env)
    return False


def _class_defines(program, cls: ClassInfo, condition, env: dict) -> bool | None:
    """The value of ``"name" in cls.__dict__`` / ``"name" in vars(cls)`` (the class body's own names) or
    ``hasattr(cls, "name")`` (the bodies of its MRO); None for any other condition or a class not fully known."""
    if condition.type == "comparison" and len(condition.children) == 3 \
            and condition.children[1].get_code().strip() in ("in", "not in") \
            and _own_namespace(condition.children[2], env):
        key = string_value(condition.children[0])
        if key is None:
            return None
        member = cls.members.get(key)
        if member is not None and member.ambiguous:
            return None
        inside = member is not None
        return inside if condition.children[1].get_code().strip() == "in" else not inside
    call = call_of(condition) if condition.type in ("power", "atom_expr") else None
    if call is not None and call[0] == "hasattr":
        positional, keywords, has_star = call_arguments(call[1])
        if len(positional) != 2 or keywords or has_star or not _class_reference(positional[0], env):
            return None
        key = string_value(positional[1])
        if key is None or program.has_unknown_base(cls):
            return None
        return any(not isinstance(k, str) and key in k.members for k in program.mro(cls))
    return None


def _class_member_copy(program, cls: ClassInfo, name: str, value, env: dict) -> Member | None:
    """The body definition a value takes from the class itself (``cls.__dict__["backward"]``,
    ``vars(cls)["backward"]``, ``cls.backward``, ``getattr(cls, "backward")``), bound under ``name``; None when
    the value is something else."""
    source = None
    own = False
    if value.type in ("power", "atom_expr") and len(value.children) == 2 and value.children[1].type == "trailer":
        head, trailer = value.children
        if _class_reference(head, env) and trailer.children[0] == ".":
            source = trailer.children[1].value
        elif head.type == "name" and head.value == "getattr" and trailer.children[0] == "(":
            positional, keywords, has_star = call_arguments(trailer)
            if len(positional) == 2 and not keywords and not has_star and _class_reference(positional[0], env):
                source = string_value(positional[1])
    if source is None and value.type in ("power", "atom_expr") and len(value.children) == 3:
        head, first, last = value.children  # ``cls.__dict__["key"]`` / ``vars(cls)["key"]``
        if last.type == "trailer" and last.children[0] == "[" and _own_namespace_parts(head, first, env):
            source, own = string_value(last.children[1]), True
    if source is None:
        return None
    if own:
        body = cls.members.get(source)
    else:
        body = None
        for k in program.mro(cls):
            if isinstance(k, str):
                return None
            if source in k.members:
                body = k.members[source]
                break
    if body is None or body.ambiguous:
        return None
    return _renamed(body, name, cls)


def _renamed(body: Member, name: str, cls: ClassInfo) -> Member:
    """A class-body definition bound on ``cls`` under another name (``bprop = backward`` done late)."""
    return Member(name, cls, function=body.function, value=body.value, node=body.node, scope=body.scope)


def _decorated(program, found: Attached, cls: ClassInfo) -> None:
    parent = cls.node.parent
    if parent is None or parent.type != "decorated":
        return
    for dec in reversed(decorators_of(cls.node)):
        expr = dec.children[1]
        call = call_of(expr)
        name = dotted(expr) if call is None else call[0]
        if name is None or "." in name:
            continue
        fn = _function_named(program, name)
        if fn is None:
            continue
        if call is None:
            params = [p.name for p in fn.params]
            if params:
                _read_body(program, found, cls, fn, {params[0]: _THE_CLASS})
            continue
        # A decorator factory: ``def factory(fn): def deco(cls): ...; return deco``.
        inner = _returned_def(program, fn)
        positional, keywords, has_star = call_arguments(call[1])
        if inner is None or has_star or keywords:
            if _mentions_any(fn.node):
                found._bind(cls, "bprop", None)
            continue
        env = {p.name: arg for p, arg in zip(fn.params, positional) if p.kind in ("positional", "posonly")}
        params = [p.name for p in inner.params]
        if params:
            env[params[0]] = _THE_CLASS
            _read_body(program, found, cls, inner, env)


def _returned_def(program, factory: Function) -> Function | None:
    body = factory.body
    if body.type != "suite":
        return None
    last = [c for c in body.children if c.type != "newline"][-1]
    if last.type != "simple_stmt" or last.children[0].type != "return_stmt":
        return None
    value = last.children[0].children[1] if len(last.children[0].children) == 2 else None
    if value is None or value.type != "name":
        return None
    inner = [f for f in program.functions.get(value.value, []) if scope_of(f.node) is factory.node]
    return inner[0] if len(inner) == 1 else None


def _init_subclass(program, found: Attached, cls: ClassInfo) -> None:
    seen = 0
    for k in program.mro(cls)[1:]:
        if isinstance(k, str):
            continue
        member = k.members.get("__init_subclass__")
        if member is None or member.function is None:
            continue
        fn = member.function
        if not _mentions_any(fn.body):
            continue
        seen += 1
        if seen > 1:
            found._bind(cls, "bprop", None)
            return
        params = [p.name for p in fn.params]
        if params:
            _read_body(program, found, cls, fn, {params[0]: _THE_CLASS})


def _metaclass_of(program, cls: ClassInfo):
    for k in program.mro(cls):
        if isinstance(k, str):
            continue
        arglist = k.node.get_super_arglist() if k.node.type == "classdef" else None
        items = arglist.children if arglist is not None and arglist.type == "arglist" else [arglist]
        for item in items:
            if item is not None and item.type == "argument" and len(item.children) == 3 \
                    and item.children[0].type == "name" and item.children[0].value == "metaclass":
                name = dotted(item.children[2])
                target = program.class_named(name) if name and "." not in name and name not in program.imports \
                    else None
                return target if target is not None else "?"
    return None


def _metaclass(program, found: Attached, cls: ClassInfo) -> None:
    meta = _metaclass_of(program, cls)
    if meta is None or meta == "?":
        return
    for method in ("__new__", "__init__"):
        member = meta.members.get(method)
        if member is None or member.function is None or not _mentions_any(member.function.body):
            continue
        fn = member.function
        params = [p.name for p in fn.params]
        if method == "__init__":
            if params:
                _read_body(program, found, cls, fn, {params[0]: _THE_CLASS})
            continue
        if len(params) < 4:
            found._bind(cls, "bprop", None)
            continue
        if not _metaclass_new(program, found, cls, fn, params[3]):
            found._bind(cls, "bprop", None)


def _metaclass_new(program, found: Attached, cls: ClassInfo, fn: Function, namespace: str) -> bool:
    """``__new__(mcs, name, bases, namespace)``: what it puts in the namespace or on the class it builds; False
    when a statement touching a tracked attribute is not read."""
    made = None  # the name bound to ``super().__new__(...)``
    body = fn.body
    if body.type != "suite":
        return False
    for child in body.children:
        if child.type == "newline":
            continue
        if child.type == "if_stmt" and len(child.children) == 4:
            condition = child.children[1]
            known = _in_namespace(condition, namespace, cls)
            statements = _body_statements(child.children[3])
            if known is None or statements is None:
                if _mentions_any(child):
                    return False
                continue
            if known:
                for small in statements:
                    if not _namespace_statement(found, cls, small, namespace):
                        return False
            continue
        if child.type != "simple_stmt":
            if _mentions_any(child):
                return False
            continue
        for small in child.children:
            if small.type in ("newline", "operator"):
                continue
            if small.type == "expr_stmt" and len(small.children) == 3 and small.children[0].type == "name" \
                    and "__new__" in small.children[2].get_code():
                made = small.children[0].value
                continue
            if made is not None:
                binding = _read_binding(program, small, {made: _THE_CLASS, "__class__": cls})
                if binding is not None and binding[0] is cls:
                    _, name, value = binding
                    member = Member(name, cls, value=value, node=small, scope={}) if name and value else None
                    found._bind(cls, name or "bprop", member, replace=True)
                    continue
            if not _namespace_statement(found, cls, small, namespace):
                return False
    return True


def _in_namespace(condition, namespace: str, cls: ClassInfo):
    """``"name" in namespace`` against the class body; None when the condition is another."""
    if condition.type == "comparison" and len(condition.children) == 3 \
            and condition.children[1].get_code().strip() == "in" \
            and condition.children[2].type == "name" and condition.children[2].value == namespace:
        key = string_value(condition.children[0])
        if key is not None:
            return key in cls.members
    return None


def _namespace_statement(found: Attached, cls: ClassInfo, small, namespace: str) -> bool:
    """``namespace["bprop"] = namespace.pop("backward")`` / ``= namespace["backward"]``: the body's member under
    the new name. True when read (or when it touches no tracked name)."""
    if not (small.type == "expr_stmt" and len(small.children) == 3 and small.children[1] == "="):
        return not any(w in small.get_code() for w in TRACKED)
    key = _namespace_key(small.children[0], namespace)
    if key is None:
        return not any(w in small.get_code() for w in TRACKED)
    if key not in TRACKED:
        return True
    value = small.children[2]
    source = _namespace_key(value, namespace, methods=("pop", "get"))
    if source is not None:
        body_member = cls.members.get(source)
        if body_member is None or body_member.ambiguous:
            found._bind(cls, key, None)
            return True
        found._bind(cls, key, _renamed(body_member, key, cls), replace=True)
        return True
    found._bind(cls, key, Member(key, cls, value=value, node=small, scope={}), replace=True)
    return True


def _namespace_key(node, namespace: str, methods: tuple = ()) -> str | None:
    """``namespace["key"]`` (or ``namespace.pop("key")`` for ``methods``): the key."""
    if node.type not in ("power", "atom_expr") or node.children[0].type != "name" \
            or node.children[0].value != namespace:
        return None
    trailers = node.children[1:]
    if not all(t.type == "trailer" for t in trailers):
        return None  # (``namespace ** 2``: a power, not a subscript)
    if len(trailers) == 1 and trailers[0].children[0] == "[":
        return string_value(trailers[0].children[1])
    if len(trailers) == 2 and methods and trailers[0].children[0] == "." \
            and trailers[0].children[1].value in methods and trailers[1].children[0] == "(":
        positional, keywords, has_star = call_arguments(trailers[1])
        if len(positional) == 1 and not keywords and not has_star:
            return string_value(positional[0])
    return None


def _init_type_self(program, found: Attached, cls: ClassInfo) -> None:
    """``type(self).bprop = f`` in the ``__init__`` attribute lookup finds: after ``super().__init__()`` only GRAPH
    sees it on the instance being built (PYNATIVE decided ``has_bprop`` in ``Cell.__init__``)."""
    fn = _body_function(program, cls, "__init__")
    if fn is None:
        return
    code = fn.body.get_code()
    if not ("type" in code or "__class__" in code) or not any(w in code for w in TRACKED):
        return
    params = [p.name for p in fn.params]
    if not params:
        return
    me = params[0]
    statements = _body_statements(fn.body)
    super_seen = False
    for small in _small_statements(fn.body) if statements is None else statements:
        code = small.get_code()
        if "__init__" in code and "super" in code:
            super_seen = True
        read = _type_self_binding(small, me)
        if read is None:
            continue
        name, value = read
        if name is not None and name not in TRACKED:
            continue
        if statements is None or name is None:
            found._bind(cls, name or "bprop", None)
            continue
        member = Member(name, cls, value=value, node=small, scope={})
        member.graph_only = super_seen
        found._bind(cls, name, member, replace=True)


def _body_function(program, cls: ClassInfo, name: str) -> Function | None:
    """The def attribute lookup finds for ``name`` through the class bodies of the MRO (no late binding)."""
    for k in program.mro(cls):
        if isinstance(k, str):
            return None
        member = k.members.get(name)
        if member is not None:
            fn = member.function
            return fn if fn is not None and member.value is None and not fn.is_lambda else None
    return None


def _type_self_binding(small, me: str):
    """(attribute or None when not literal, value) of ``type(me).attr = v`` / ``me.__class__.attr = v`` /
    ``setattr(type(me), "attr", v)``; None for any other statement."""
    if small.type == "expr_stmt" and len(small.children) == 3 and small.children[1] == "=":
        target = small.children[0]
        if target.type not in ("power", "atom_expr"):
            return None
        last = target.children[-1]
        if last.type != "trailer" or last.children[0] != "." or not _is_type_of(target.children[:-1], me):
            return None
        return last.children[1].value, small.children[2]
    call = call_of(small) if small.type in ("power", "atom_expr") else None
    if call is None or call[0] != "setattr":
        return None
    positional, keywords, has_star = call_arguments(call[1])
    if len(positional) != 3 or keywords or has_star:
        return None
    head = unwrap_parens(positional[0])
    if not _is_type_of(getattr(head, "children", None) or [head], me):
        return None
    return string_value(positional[1]), positional[2]


def _is_type_of(parts: list, me: str) -> bool:
    code = "".join(p.get_code(include_prefix=False) for p in parts).replace(" ", "")
    return code in (f"type({me})", f"{me}.__class__")


# ------------------------------------------------------------------------------------------------ incremental
def may_bind_late(code: str, words: frozenset) -> bool:
    """Whether a top-level statement can be a source of late bindings (read from its words and code alone): while
    a document has none, no class's lookup reads anything outside the class bodies, and the class caches carried
    from one keystroke to the next (``Program._carried_class_caches``) hold."""
    if "setattr" in words or "__class__" in words or "__init_subclass__" in words or "metaclass" in words:
        return True
    # (``type(self).bprop = f`` and ``Other.bprop = f`` in a method too; a decorated class is read through its
    # decorator's def)
    return not TRACKED.isdisjoint(words) and _ATTRIBUTE_ASSIGNED.search(code) is not None


# ``.bprop =`` / ``.construct =`` (not ``==``, not ``.bprop_debug``, not a call ``.construct(x)``), on anything but
# ``self`` (an instance attribute, read from the class alone: ``Context._instance_bound_bprop``).
_ATTRIBUTE_ASSIGNED = re.compile(r"(?<!\bself)\.[ \t]*(?:bprop|construct)[ \t]*=(?!=)")
