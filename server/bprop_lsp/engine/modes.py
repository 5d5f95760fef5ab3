"""The execution mode in effect where a Cell runs, read along the file's code paths (bprop-rules.md, further
behaviours 30, 31 and 43).

MindSpore checks a custom bprop by the rules of the mode in effect when the gradient is taken: the last
``set_context(mode=...)`` executed before that point, or GRAPH's rules inside a ``@jit`` function that takes the
gradient. So the mode belongs to a code path, not to a file or a class name:

* a class is run where its name is used (``Net()``, ``grad_all(Net())``, ``self.f = Net()`` in another Cell), or
  where a name bound to such an expression is used later (``net = Net()`` then ``grad(net)(x)``); a subclass's
  uses count for its bases; a class nobody uses is judged where it is defined (module level: the mode the module
  leaves in effect);
* a point in a function is governed by the ``set_context`` calls before it in that function (and its calls of the
  file's functions that call ``set_context``) when they are on the path to it (a call in an ``if``/``for``/``while`` or an ``except`` makes the mode uncertain), else by the mode in
  effect where the function is called (its callers, found by name with Python's scoping: a test function's own
  ``class Net`` is not another function's ``Net``); a method runs where its class is used;
* a function nothing in the file calls (a pytest test function) starts in the mode the module leaves in effect
  (its top-level ``set_context`` calls, ``if __name__ == "__main__":`` blocks excluded), or an unknown one when
  another such function leaves a different mode behind;
* at module level a point has the mode of the module-level calls before it; the importer's mode (unknown) when
  there are none.

``Modes.known`` holds the modes the file shows to be in effect on some path (a GRAPH-only finding is an error only
where GRAPH is known); ``Modes.possible`` the modes that may be, ``None`` standing for a mode the file does not
tell. Nothing is executed; what cannot be read stays unknown.
"""
from __future__ import annotations

from dataclasses import dataclass

from .mindspore_api import mode_value, set_context_mode

GRAPH = "graph"
PYNATIVE = "pynative"


@dataclass(frozen=True)
class Modes:
    possible: frozenset  # modes that may be in effect (None: one the file does not tell)
    known: frozenset  # modes the file shows to be in effect on some path

    def __or__(self, other: "Modes") -> "Modes":
        return Modes(self.possible | other.possible, self.known | other.known)


UNKNOWN = Modes(frozenset({None}), frozenset())
_NOTHING = Modes(frozenset(), frozenset())  # no path at all (a cycle being followed)


def exactly(mode: str | None) -> Modes:
    return Modes(frozenset({mode}), frozenset({mode})) if mode is not None else UNKNOWN


_CONDITIONAL = {"if_stmt", "for_stmt", "while_stmt", "match_stmt", "case_block", "async_stmt"}
_SCOPES = ("funcdef", "classdef")
_MAX_DEPTH = 24
_MODULE_SETUP = ("setup_module", "setUpModule")
_MODULE_TEARDOWN = ("teardown_module", "tearDownModule")


def _scope(node):
    """The nearest enclosing ``def`` or ``class`` (lambdas are part of their function), or None at module level."""
    n = node.parent
    while n is not None:
        if n.type in _SCOPES:
            return n
        n = n.parent
    return None


def _function_scope(node):
    """The nearest enclosing ``def`` whose body ``node`` runs in (a class body runs where the class statement
    does: its point is the class statement's), or None at module level."""
    n = _scope(node)
    while n is not None and n.type == "classdef":
        n = _scope(n)
    return n


def _is_within(outer, node) -> bool:
    n = node
    while n is not None:
        if n is outer:
            return True
        n = n.parent
    return False


class ModeModel:
    """Answers "which modes is this Cell (or this point) run in" for one program; built lazily, per analysis."""

    def __init__(self, program, jit_functions=()):
        self.p = program
        self.jit = list(jit_functions)  # funcdef nodes of @jit functions that take a gradient
        self._events = None  # scope (funcdef node or None) -> [(call node, mode or None)]
        self._memo: dict = {}
        self._active: set = set()
        self._partial: set = set()
        self._calling: list = []
        self._names: dict = {}
        # The words whose occurrences the answers were read from (``word_offsets``, ``nodes_matching``, the classes
        # naming a base): everything a answer reads of the file lies in a top-level statement spelling one of them.
        self.words: set[str] = set()

    # ------------------------------------------------------------------ what the file sets

    @property
    def events(self) -> dict:
        if self._events is None:
            events: dict = {}
            self.words.add("set_context")
            for node in self.p.nodes_matching("set_context", ("power", "atom_expr")):
                mode = set_context_mode(node)
                if mode is None:
                    continue  # sets something else (device, check_bprop): the mode stays
                events.setdefault(_function_scope(node), []).append((node, mode_value(mode)))
            self._events = events
        return self._events

    # ------------------------------------------------------------------ the answers

    def of_finding(self, leaf) -> Modes:
        """The modes a finding at ``leaf`` is judged by: those of the class around it (a bprop, a construct, an
        ``__init__``: the class runs where it is used), of the function whose ``def`` line it is on (where the
        function is used: an ``ops.Custom`` bprop), else of the point itself (a statement of a function or of the
        module)."""
        n = leaf
        while n is not None and n.type not in _SCOPES:
            n = n.parent
        if n is None:
            return self.at(leaf)
        if n.type == "funcdef":
            owner = _scope(n)
            if owner is not None and owner.type == "classdef":
                return self.of_definition(owner)
            if _is_within(n.children[0], leaf) or leaf is n.name or leaf.start_pos < n.children[-1].start_pos:
                return self.of_definition(n)  # on the def line: where the function is used
            return self.at(leaf)
        return self.of_definition(n)

    def of_definition(self, node) -> Modes:
        """Where the class or function ``node`` (classdef/funcdef) runs: the modes at its uses."""
        return self._cached(("def", id(node)), lambda: self._of_definition(node))

    def at(self, node) -> Modes:
        """The modes in effect when ``node`` executes."""
        return self._cached(("at", id(node)), lambda: self._at(node))

    def _cached(self, key, compute) -> Modes:
        found = self._memo.get(key)
        if found is not None:
            return found
        if key in self._active or len(self._active) > _MAX_DEPTH:
            # A cycle (recursion, a class using itself): it adds no path. The answers being computed around it
            # are partial until the outermost of them is done: they are not kept.
            self._partial.update(self._active)
            return _NOTHING
        self._active.add(key)
        try:
            found = compute()
        finally:
            self._active.discard(key)
        if key not in self._partial or not self._active:
            self._memo[key] = found
        if not self._active:
            self._partial.clear()
        return found

    def _of_definition(self, node) -> Modes:
        result = _NOTHING
        for use in self._uses(node):
            result = result | self._use_modes(use)
        if node.type == "classdef":
            for sub in self._subclasses(node):
                result = result | self.of_definition(sub)
        if not result.possible:
            return self._unused(node)
        return result

    def _unused(self, node) -> Modes:
        """A definition nothing in the file uses: judged where it stands (module level: the mode the module leaves
        in effect for whoever imports or runs it)."""
        owner = _function_scope(node)
        if owner is None:
            return self.module_exit()
        return self.at(node)

    def _at(self, node) -> Modes:
        fn = _function_scope(node)
        if fn is not None and self._in_jit(fn):
            return exactly(GRAPH)
        entry = self.entry(fn) if fn is not None else UNKNOWN
        return self._sequential(fn, node, entry)

    def entry(self, fn) -> Modes:
        """The modes in effect when the function ``fn`` starts."""
        return self._cached(("entry", id(fn)), lambda: self._entry(fn))

    def _entry(self, fn) -> Modes:
        cls = _scope(fn)
        if cls is not None and cls.type == "classdef":
            return self.of_definition(cls)  # a method runs where its class is used
        result = _NOTHING
        for use in self._uses(fn):
            result = result | self._use_modes(use)
        if not result.possible:
            return self._uncalled(fn)
        return result

    def _uncalled(self, fn) -> Modes:
        owner = _function_scope(fn)
        if owner is not None:
            return self.at(fn)
        return self.module_exit(leaks=True)

    def module_exit(self, leaks: bool = False) -> Modes:
        """The mode the module's own statements leave in effect (``__main__`` blocks apart); with ``leaks``, as a
        function nothing calls finds it: unknown when another such function changes it for good."""
        key = ("module", leaks)
        found = self._memo.get(key)
        if found is not None:
            return found
        events = [(n, m) for n, m in self._events_of(None) if not _under_main_guard(n)]
        state = self._apply(None, events, None, UNKNOWN)
        if leaks:
            # pytest runs a module's ``setup_module`` once, after the module's statements and before its tests
            # (unittest's ``setUpModule`` likewise): the mode it sets is the one every test starts in.
            setups = [scope for scope in self.events if scope is not None and _scope(scope) is None
                      and scope.name.value in _MODULE_SETUP and not self._has_uses(scope)]
            for scope in setups:
                state = self._apply(scope, self._events_of(scope), None, state)
            for scope in list(self.events):
                if scope is None or _scope(scope) is not None and _scope(scope).type != "classdef":
                    continue  # module level, or a nested function (its callers decide)
                if scope in setups or scope.name.value in _MODULE_TEARDOWN:
                    continue  # (a teardown runs after every test of the module)
                if self._has_uses(scope):
                    continue
                left = self._apply(scope, self._events_of(scope), None, state)
                if left.possible != state.possible:
                    state = Modes(state.possible | left.possible | {None}, frozenset())
                    break
        self._memo[key] = state
        return state

    # ------------------------------------------------------------------ along one function

    def _sequential(self, fn, node, entry: Modes) -> Modes:
        events = [(n, m) for n, m in self._events_of(fn) if n.start_pos < node.start_pos]
        return self._apply(fn, events, node, entry)

    def _events_of(self, fn) -> list:
        """What changes the mode in the body of ``fn`` (None: the module), in text order: its ``set_context``
        calls (call node, mode) and its calls of the file's functions that call ``set_context`` themselves (the
        callee's name leaf, its funcdef): a test calling ``_use_pynative()`` first."""
        key = ("events", id(fn))
        found = self._names.get(key)
        if found is None:
            found = list(self.events.get(fn, ()))
            code = fn.get_code() if fn is not None else None
            for setter in self.events:
                if setter is None or setter is fn:
                    continue
                # (A cheap sieve before resolving the setter's name: a body that never spells it, or a module in
                # which it appears only at its ``def``, calls it nowhere.)
                if code is not None and setter.name.value not in code:
                    continue
                if code is None and len(self._word_offsets(setter.name.value)) < 2:
                    continue
                scope = _binding_scope(setter)
                for leaf in self._references(setter.name.value, scope, setter.name):
                    if _function_scope(leaf) is fn and _is_callee(leaf):
                        found.append((leaf, setter))
            found.sort(key=lambda e: e[0].start_pos)
            self._names[key] = found
        return found

    def _apply(self, fn, events, node, state: Modes) -> Modes:
        """``state`` after the mode changes ``events`` (``_events_of``) of the body of ``fn`` (None: the module), on
        the way to ``node`` (None: to the end)."""
        for call, mode in events:
            where = _on_path(call, node, fn)
            if where == "never":
                continue
            if mode is not None and not isinstance(mode, str):
                after = self._exit(mode, state)  # a call of a function that sets the mode
            else:
                after = exactly(mode)
            if where == "always":
                state = after
            else:
                state = Modes(state.possible | after.possible, state.known & after.known)
        return state

    def _exit(self, fn, state: Modes) -> Modes:
        """The mode the function ``fn`` leaves when it starts in ``state``."""
        if fn in self._calling or len(self._calling) > _MAX_DEPTH:
            return state  # recursion: it adds no change
        self._calling.append(fn)
        try:
            return self._apply(fn, self._events_of(fn), None, state)
        finally:
            self._calling.pop()

    # ------------------------------------------------------------------ uses

    def use_modes(self, use) -> Modes:
        """The modes a use of a class or function (a leaf: ``_uses``) runs it in."""
        return self._use_modes(use)

    def _use_modes(self, use) -> Modes:
        modes = self.at(use)
        if self.jit and self._argument_of_jit_call(use):
            modes = modes | exactly(GRAPH)
        return modes

    def _has_uses(self, node) -> bool:
        return bool(self._uses(node))

    def _uses(self, node) -> list:
        """The places the class or function ``node`` is used, each a leaf; a use bound to a name by a plain
        assignment stands for the later uses of that name (when there are any)."""
        key = ("uses", id(node))
        found = self._names.get(key)
        if found is None:
            name = node.name.value
            found = self._names[key] = self._resolve_uses(name, _binding_scope(node), node.name, 0,
                                                           node.type == "classdef")
        return found

    def _resolve_uses(self, name: str, scope, skip, depth: int, is_class: bool = False) -> list:
        result = []
        for leaf in self._references(name, scope, skip):
            result += self._follow(leaf, depth, is_class)
        return result

    def _follow(self, leaf, depth: int, is_class: bool) -> list:
        """The uses ``leaf`` stands for: itself, or the later uses of the name it is bound to."""
        # Follow ``net = Net()`` and ``grad_net = GradNet(net)`` (the network, built or wrapped), not
        # ``out = grad_net(x)`` (calling the network runs it: the result is no network).
        target = _assigned_name(leaf) if depth < 3 and (is_class or not _is_callee(leaf)) else None
        if target is not None:
            later = [u for u in self._resolve_uses(target.value, _function_scope(target), target, depth + 1)
                     if _function_scope(u) is not _function_scope(target) or u.start_pos > target.start_pos]
            if later:
                return later
        return [leaf]

    def uses_of_import(self, name: str, scope, attributes: tuple) -> list:
        """The uses of what an import statement of the file binds to ``name`` in ``scope`` (a funcdef, or None:
        the module), reached through ``attributes`` (``model.Net``: ``("Net",)``), as ``_uses`` gives them."""
        self.words.add(name)
        result = []
        for leaf in self._references(name, scope, None):
            if attributes and not _followed_by(leaf, attributes):
                continue
            result += self._follow(leaf, 0, True)
        return result

    def top_level_uses(self, name: str) -> list:
        """The uses of the module-level class or function ``name`` of the file (none: it is not one)."""
        node = top_level_definition(self.p.module, name)
        return self._uses(node) if node is not None else []

    def sets_an_unknown_mode(self) -> bool:
        """Whether the file calls ``set_context(mode=...)`` with a mode it does not spell (``args.mode``)."""
        return any(mode is None for events in self.events.values() for _, mode in events)

    def _references(self, name: str, scope, skip) -> list:
        """Name leaves reading ``name`` bound in ``scope`` (a funcdef, or None: the module), not shadowed on the
        way (Python's scoping: enclosing functions, then the module; class bodies do not enclose methods)."""
        return [leaf for leaf in self._resolved(name).get(id(scope), ()) if leaf is not skip]

    def _resolved(self, name: str) -> dict:
        """id(the scope each read of ``name`` resolves to: the nearest enclosing function binding it, else the
        module) -> those reads; read once per name."""
        key = ("resolved", name)
        found = self._names.get(key)
        if found is None:
            leaves = self._leaves(name)
            binders = {id(_function_scope(leaf)) for leaf in leaves if leaf.is_definition()}
            found = {}
            for leaf in leaves:
                if leaf.is_definition() or not _is_read(leaf):
                    continue
                fn = _function_scope(leaf)
                while fn is not None and id(fn) not in binders:
                    fn = _function_scope(fn)
                found.setdefault(id(fn), []).append(leaf)
            self._names[key] = found
        return found

    def _leaves(self, name: str) -> list:
        key = ("leaves", name)
        found = self._names.get(key)
        if found is None:
            found = []
            module = self.p.module
            for offset in self._word_offsets(name):
                pos = self.p.index.position(offset)
                leaf = module.get_leaf_for_position((pos.line + 1, pos.column + 1))
                if leaf is not None and leaf.type == "name" and leaf.value == name:
                    found.append(leaf)
            self._names[key] = found
        return found

    def _word_offsets(self, word: str) -> list[int]:
        self.words.add(word)
        return self.p.word_offsets(word)

    def _subclasses(self, cls_node) -> list:
        name = cls_node.name.value
        self.words.add(name)  # (a class whose base is ``name`` or ``x.name`` spells it)
        found = []
        for cls in self.p.classes:
            node = cls.node
            if node.type != "classdef" or node is cls_node:
                continue
            if any(t is not None and (t == name or t.endswith("." + name)) for t in cls.base_texts):
                found.append(node)
        return found

    # ------------------------------------------------------------------ @jit

    def _in_jit(self, fn) -> bool:
        n = fn
        while n is not None:
            if any(n is j for j in self.jit):
                return True
            n = _function_scope(n)
        return False

    def _argument_of_jit_call(self, leaf) -> bool:
        """``step(Net(), x)`` where ``step`` is a ``@jit`` function that takes a gradient."""
        names = {j.name.value for j in self.jit}
        n = leaf.parent
        while n is not None and n.type not in ("simple_stmt", "funcdef", "classdef", "file_input"):
            if n.type == "trailer" and n.children[0] == "(":
                prev = n.get_previous_sibling()
                if prev is not None and prev.type == "name" and prev.value in names:
                    return True
            n = n.parent
        return False


def top_level_definition(module, name: str):
    """The module-level ``class`` or ``def`` statement binding ``name`` (the last one), or None."""
    found = None
    for child in module.children:
        node = child.children[-1] if child.type == "decorated" else child
        if node.type in _SCOPES and node.name.value == name:
            found = node
    return found


def top_level_name(node) -> str | None:
    """The name of the module-level ``class`` or ``def`` statement ``node`` is in (None: a module-level
    statement of another kind)."""
    n = node
    while n.parent is not None and n.parent.type != "file_input":
        n = n.parent
    if n.type == "decorated":
        n = n.children[-1]
    return n.name.value if n.type in _SCOPES else None


def _followed_by(leaf, attributes: tuple) -> bool:
    """``leaf`` read as ``leaf.a.b`` for ``attributes`` ``("a", "b")``."""
    parent = leaf.parent
    if parent is None or parent.type not in ("power", "atom_expr") or parent.children[0] is not leaf:
        return False
    trailers = parent.children[1:1 + len(attributes)]
    return len(trailers) == len(attributes) and all(
        t.type == "trailer" and t.children[0] == "." and t.children[1].value == a for t, a in zip(trailers, attributes))


def _binding_scope(node):
    """The function whose namespace the ``def``/``class`` statement binds its name in (None: the module; a
    class body's binding is an attribute, read through the class, never by a bare name from a method)."""
    scope = _scope(node)
    if scope is not None and scope.type == "classdef":
        return scope  # matches no function scope: a method or nested class is found through its class
    return scope


def _is_read(leaf) -> bool:
    parent = leaf.parent
    prev = leaf.get_previous_sibling()
    if parent is not None and parent.type == "trailer" and prev == ".":
        return False  # x.Net
    if parent is not None and parent.type == "argument" and parent.children[0] is leaf and len(parent.children) >= 2 \
            and parent.children[1] == "=":
        return False  # f(Net=...)
    if parent is not None and parent.type in ("import_from", "import_as_name", "dotted_as_name", "global_stmt",
                                              "nonlocal_stmt"):
        return False
    n = parent
    while n is not None and n.type not in ("suite", "simple_stmt", "file_input"):
        if n.type == "classdef":
            return False  # a base class: the subclass's uses count for it (``_subclasses``)
        n = n.parent
    return True


def _is_callee(leaf) -> bool:
    parent = leaf.parent
    return (parent is not None and parent.type in ("power", "atom_expr") and parent.children[0] is leaf
            and parent.children[1].type == "trailer" and parent.children[1].children[0] == "(")


def _assigned_name(leaf):
    """The name ``leaf``'s value is bound to by a plain ``name = <expression holding leaf>`` statement."""
    n = leaf
    while n.parent is not None and n.parent.type not in ("expr_stmt", "simple_stmt", "suite", "file_input"):
        n = n.parent
    stmt = n.parent
    if stmt is None or stmt.type != "expr_stmt":
        return None
    children = stmt.children
    if len(children) != 3 or children[1] != "=" or children[2] is not n:
        return None
    target = children[0]
    if target.type != "name":
        return None
    value = children[2]
    if value.type == "name":
        return target  # net2 = net
    if value.type in ("power", "atom_expr"):
        calls = [t for t in value.children[1:] if t.type == "trailer" and t.children[0] == "("]
        if len(calls) == 1 and value.children[-1] is calls[0]:
            return target  # net = Net(), grad_net = GradNet(net), grad_fn = grad_all(net): the network, wrapped
    return None  # out = grad_all(net)(x): a result, not the network (its later uses do not run it)


def _on_path(call, node, fn) -> str:
    """Whether the ``set_context`` call ``call`` in the body of ``fn`` runs on every path to ``node`` (None: to the
    end of the body): "always", "maybe" (under a condition, a loop or an exception handler), "never" (in a branch
    that excludes ``node``'s)."""
    top = fn
    child = call
    n = call.parent
    result = "always"
    while n is not None and n is not top:
        if n.type in ("funcdef", "classdef", "lambdef"):
            return "never"  # inside a nested function or class: runs when that is called
        if n.type in _CONDITIONAL or n.type == "try_stmt":
            contains = node is not None and _is_within(n, node)
            if contains:
                if _branch_of(n, child) is not _branch_of(n, node):
                    if n.type in ("if_stmt", "match_stmt", "try_stmt"):
                        return "never" if n.type != "try_stmt" else "maybe"
                    return "maybe"
            elif n.type == "try_stmt":
                if _branch_of(n, child) is not _first_suite(n):
                    result = "maybe"  # an except/else clause
            else:
                result = "maybe"
        child = n
        n = n.parent
    return result


def _branch_of(stmt, node):
    """The child of the compound statement ``stmt`` that holds ``node``."""
    for c in stmt.children:
        if _is_within(c, node):
            return c
    return None


def _first_suite(stmt):
    for c in stmt.children:
        if c.type == "suite":
            return c
    return None


def _under_main_guard(node) -> bool:
    n = node.parent
    while n is not None:
        if n.type == "if_stmt" and "__name__" in n.children[1].get_code() and "__main__" in n.children[1].get_code():
            return True
        n = n.parent
    return False


__all__ = ["GRAPH", "PYNATIVE", "Modes", "ModeModel", "UNKNOWN", "exactly", "top_level_definition",
           "top_level_name"]
