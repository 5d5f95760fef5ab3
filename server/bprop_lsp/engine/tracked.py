"""Tracking views of a revision's ``Program`` and ``Context``: every read a rule makes through them is recorded
(``query.record``) as a path from its root with a fingerprint of what it gave, and ``Revision`` re-reads such
paths on a later revision (``query.Replay``).

What a rule may read, and how it is recorded (docs/writing-rules.md):
* through ``ctx`` and ``ctx.program``: attributes, tables (``assignments.get("FLAG")``, ``"x" in imports``,
  iterating one: the whole table) and method calls (``resolve_dotted("nn.Cell")``, ``mro(cls)``), each a path
  whose arguments are *located* (a parso node by its type and place, a class by its node, a site by its class) so
  that the same read can be made again on the next revision's objects;
* the parso nodes those reads hand back, and ``ctx.cell_sites``' own: their fingerprint is their type, their place
  and the digest of the top-level statement holding them, so a read stays valid while that statement's code and
  place do. A rule walks a node's subtree freely; it does not walk out of the node's top-level statement (up to
  the module and into the next statement): what lies there is read through ``ctx.program``.
* ``ctx.__dict__`` is the view's own: what a rule keeps there (a list derived from ``ctx.cell_sites``) lives as
  long as the one run over one Cell that made it.
Node-local helpers (``span``, ``node_fact``, ``statement_facts``, the line index) are handed through as they are:
what they answer is a function of the node's own statement and place.
"""
from __future__ import annotations

from dataclasses import fields, is_dataclass
from enum import Enum
from types import GeneratorType
from collections.abc import Iterator
from typing import Hashable

from parso.tree import Leaf, NodeOrLeaf

from . import query
from .definitions import ClassInfo, Function, Member
from .parsing import digest as text_digest

# Program attributes that answer from a node's own top-level statement (and its place) alone: not reads of the
# program, handed through untracked.
_NODE_LOCAL = frozenset({"span", "node_fact", "statement_facts", "index"})
_MISSING = ("missing",)
_PLAIN = (str, int, float, bool, bytes, type(None))


class Untracked(query.Untracked):
    pass


# --- locating an argument: how a read made on one revision is made again on the next -------------------------

def locate(value) -> Hashable:
    """A hashable description of ``value`` from which ``Revision.find`` gets the next revision's counterpart."""
    if isinstance(value, _PLAIN):
        return ("v", type(value).__name__, value)
    if isinstance(value, (tuple, list)):
        return ("l" if isinstance(value, list) else "t", tuple(locate(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return ("fs" if isinstance(value, frozenset) else "set", frozenset(locate(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((locate(k), locate(v)) for k, v in value.items()))
    if isinstance(value, Enum):
        return ("e", type(value).__name__, value.value)
    if isinstance(value, _Tracked):
        return ("root", value._path[0]) if len(value._path) == 1 else ("path", value._path)
    if _is_node(value):
        return ("node", value.type, value.start_pos, _height(value))
    if isinstance(value, ClassInfo):
        return ("class", locate(value.node), value.name)
    if isinstance(value, Function):
        return ("fn", locate(value.node), value.name, locate(value.owner) if value.owner is not None else None,
                tuple(locate(d) for d in value.decorators))
    if isinstance(value, Member):
        return ("member", locate(value.owner), value.name, locate(value.node) if value.node is not None else None)
    from .context import CellSite

    if isinstance(value, CellSite):
        return ("site", locate(value.cls))
    raise Untracked(type(value).__name__)


def _height(node) -> int:
    """How many steps up from the first leaf of ``node`` it stands (with its start and type, where it is told
    within its statement: cheaper to compare than its end, which parso computes from the last leaf)."""
    steps, leaf = 0, node
    while not isinstance(leaf, Leaf):
        leaf = leaf.children[0]
        steps += 1
    return steps


def _is_node(value) -> bool:
    return isinstance(value, NodeOrLeaf)


# --- fingerprints: what a read gave, comparable across revisions ---------------------------------------------

_MODEL = (ClassInfo, Function, Member)
_FIELDS: dict[type, tuple[str, ...]] = {}

_CATEGORY: dict[type, str] = {}


def _category(kind: type) -> str:
    """How ``Fingerprints`` prints a value of type ``kind`` (the checks in the order they were made for each value,
    read once per type)."""
    if issubclass(kind, NodeOrLeaf):
        return "node"
    if kind in _MODEL or is_dataclass(kind):
        return "model"
    if issubclass(kind, (tuple, list)):
        return "list"
    if issubclass(kind, dict):
        return "dict"
    if issubclass(kind, (set, frozenset)):
        return "set"
    if issubclass(kind, Enum):
        return "enum"
    if issubclass(kind, _Tracked):
        return "tracked"
    return "other"


class Fingerprints:
    """Fingerprints of one revision's values (a node's is memoised by identity for the revision)."""

    def __init__(self, program):
        self.program = program
        self._nodes: dict[int, tuple] = {}
        self._tops: dict[int, tuple] = {}
        self._objects: dict[int, tuple] = {}

    def __call__(self, value, depth: int = 0) -> Hashable:
        if depth > 40:
            raise Untracked("too deep")
        kind = type(value)
        if kind in _PLAIN:
            return (kind.__name__, value)
        if kind is list or kind is tuple:
            return ("l", tuple([self(v, depth + 1) for v in value]))
        category = _CATEGORY.get(kind)
        if category is None:
            category = _CATEGORY[kind] = _category(kind)
        if category == "node":
            return self.node(value)
        if category == "model":
            # (The model's objects are printed once per revision: a class is the owner of many functions.)
            found = self._objects.get(id(value))
            if found is not None and found[0] is value:
                return found[1]
            print_ = self._model(value, depth + 1)
            self._objects[id(value)] = (value, print_)
            return print_
        d = depth + 1
        if category == "list":
            return ("l", tuple(self(v, d) for v in value))
        if category == "dict":
            return ("d", tuple((self(k, d), self(v, d)) for k, v in value.items()))
        if category == "set":
            return ("s", frozenset(self(v, d) for v in value))
        if category == "enum":
            return ("e", type(value).__name__, value.value)
        if category == "tracked":
            return ("root", value._path)
        raise Untracked(type(value).__name__)

    def _model(self, value, d: int) -> Hashable:
        if isinstance(value, ClassInfo):
            if value.__dict__.get("_members_reads_program"):
                # (Its members were read against one program's conditions: ``if TYPE_CHECKING:`` in the body.)
                raise Untracked("class body read against the program")
            return ("C", type(value).__name__, value.name, self.node(value.node))
        if isinstance(value, Function):
            return ("F", self.node(value.node), value.name,
                    self(value.owner, d) if value.owner is not None else None,
                    tuple(self.node(n) for n in value.decorators))
        if isinstance(value, Member):
            # (Its scope is the bindings made before it in the class body holding its node, whose print holds that
            # statement's code and place: the names say the rest, without printing every earlier member again.)
            return ("M", value.name, self(value.owner, d), self(value.function, d), self(value.value, d),
                    self(value.node, d), value.ambiguous, tuple(value.scope) if value.scope else None,
                    value.graph_only)
        kind = type(value)
        names = _FIELDS.get(kind)
        if names is None:
            names = _FIELDS[kind] = tuple(f.name for f in fields(kind))
        printed = []
        for name in names:
            field_value = getattr(value, name)
            field_kind = type(field_value)
            # (a plain value printed here: a call fewer per field)
            printed.append((field_kind.__name__, field_value) if field_kind in _PLAIN else self(field_value, d))
        return ("D", kind.__name__, tuple(printed))

    def node(self, node) -> tuple:
        found = self._nodes.get(id(node))
        if found is not None and found[0] is node:
            return found[1]
        top, parent = node, node.parent
        while parent is not None and parent.type != "file_input":
            top, parent = parent, parent.parent
        if parent is None:
            digest = text_digest(node.get_code())  # (the module itself, or a node outside the tree)
        else:
            kept = self._tops.get(id(top))
            if kept is not None and kept[0] is top:
                digest = kept[1]
            else:
                program = self.program
                entry = program._statements.get(id(top))
                facts = entry[2] if entry is not None and entry[0] is top else program.statement_facts(top)
                if facts is program.__dict__.get("_loose_facts"):
                    digest = text_digest(top.get_code())  # (another module's statement: ``workspace.py``)
                else:
                    digest = program.statement_digest(facts, top)
                self._tops[id(top)] = (top, digest)
        # (Where the statement starts is in the print: a node's code and every position in it hold while the
        # statement's code and place do; its type and start tell it within the statement.)
        print_ = ("n", node.type, node.start_pos, top.start_pos, digest)
        self._nodes[id(node)] = (node, print_)
        return print_


# --- the tracking views -----------------------------------------------------------------------------------------

class _Tracked:
    """A view of ``target`` whose reads are recorded under ``path``."""

    def __init__(self, target, path: tuple, prints: Fingerprints):
        self.__dict__["_target"] = target
        self.__dict__["_path"] = path
        self.__dict__["_prints"] = prints

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        target = self._target
        value = getattr(target, name)
        if name in _NODE_LOCAL and self._path == ("program",):
            return value
        return _wrap(value, self._path + (("attr", name),), self._prints)

    def __setattr__(self, name, value):  # a rule's own attribute: the view's, never the target's
        self.__dict__[name] = value


class _TrackedCall(_Tracked):
    def __call__(self, *args, **kwargs):
        try:
            where = (tuple(locate(a) for a in args), tuple(sorted((k, locate(v)) for k, v in kwargs.items())))
        except query.Untracked:
            query.mark_volatile()
            where = None
        args = tuple(_unwrapped(a) for a in args)
        kwargs = {k: _unwrapped(v) for k, v in kwargs.items()}
        if where is None:
            return self._target(*args, **kwargs)
        path = self._path + (("call",) + where,)
        try:
            result = self._target(*args, **kwargs)
        except (Exception, RecursionError) as exc:
            query.record(path, query.Failed(type(exc).__name__))
            raise
        return _wrap(result, path, self._prints)


class _TrackedMapping(_Tracked):
    """A table (``assignments``, ``imports`` …): each key read is a read of its own."""

    def get(self, key, default=None):
        value = self._target.get(key, _MISSING)
        _note(self, ("get", key), value)
        return default if value is _MISSING else value

    def __getitem__(self, key):
        value = self._target.get(key, _MISSING)
        _note(self, ("get", key), value)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key) -> bool:
        found = key in self._target
        _note(self, ("in", key), found)
        return found

    def __len__(self) -> int:
        n = len(self._target)
        _note(self, ("len",), n)
        return n

    def __bool__(self) -> bool:
        return len(self) > 0

    def __iter__(self):
        keys = list(self._target)
        _note(self, ("keys",), keys)
        return iter(keys)

    def keys(self):
        return list(self)

    def items(self):
        items = list(self._target.items())
        _note(self, ("items",), items)
        return items

    def values(self):
        return [v for _, v in self.items()]


def _note(view: _Tracked, step: tuple, value) -> None:
    reads = query.active()
    if reads is None:
        return
    try:
        print_ = view._prints(value)
    except query.Untracked:
        reads.volatile = True
        return
    reads.add(view._path + (step,), print_)


def _settled(value):
    """A generator's items, as a list (a read is printed, and iterated by the rule, once)."""
    return list(value) if isinstance(value, (GeneratorType, Iterator)) and not isinstance(value, (str, bytes)) else value


def _wrap(value, path: tuple, prints: Fingerprints):
    if isinstance(value, (GeneratorType, Iterator)):
        settled = _settled(value)
        _wrap(settled, path, prints)
        return iter(settled)
    if callable(value) and not isinstance(value, type) and not _is_node(value):
        return _TrackedCall(value, path, prints)
    if isinstance(value, dict):
        return _TrackedMapping(value, path, prints)
    if not _is_node(value) and _is_service(type(value)):
        return _Tracked(value, path, prints)  # (the call index: each of its answers is a read of its own)
    reads = query.active()
    if reads is None:
        return value
    try:
        print_ = prints(value)
    except query.Untracked:
        if isinstance(value, (list, tuple, set, frozenset)) or is_dataclass(value):
            reads.volatile = True
            return value
        return _Tracked(value, path, prints)  # an object of its own (the call index): its reads are recorded
    reads.add(path, print_)
    return value


_SERVICES: dict[type, bool] = {}


def _is_service(kind: type) -> bool:
    """An object answering questions (public methods), not one of the model's values: read through its methods."""
    found = _SERVICES.get(kind)
    if found is None:
        found = _SERVICES[kind] = (
            kind not in (ClassInfo, Function, Member)
            and not issubclass(kind, (ClassInfo, _PLAIN, tuple, list, dict, set, frozenset, Enum))
            and kind.__module__ != "builtins"  # (a set has public methods too, but it is a value to print)
            and any(not n.startswith("_") and callable(v) and not isinstance(v, type) for n, v in vars(kind).items()))
    return found


def _unwrapped(value):
    return value._target if isinstance(value, _Tracked) else value


class _NotFound:
    def __init__(self, error: BaseException):
        self.error = error


def tracked_program(program) -> _Tracked:
    return _Tracked(program, ("program",), Fingerprints(program))


class Revision:
    """One revision's program and context, answering recorded paths (``query.Replay``'s ``walk``)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.program = ctx.program
        self.prints = Fingerprints(ctx.program)
        self.replay = query.Replay(self.walk, self.prints)
        self._sites: dict | None = None
        self._located: dict | None = None
        self._found: dict = {}

    def walk(self, path: tuple):
        root = path[0]
        if root == "program":
            value = self.program
        elif root == "context":
            value = self.ctx
        elif root == "site":
            return self.site(path[1])
        elif root == "workspace":  # another module of the project, by its digest (``workspace.py``)
            workspace = self.program.workspace
            return workspace.digest(path[1]) if workspace is not None else None
        else:
            raise query.Untracked(root)
        for step in path[1:]:
            kind = step[0]
            if kind == "attr":
                value = getattr(value, step[1])
            elif kind == "call":
                args = tuple(self.find(a) for a in step[1])
                kwargs = {k: self.find(v) for k, v in step[2]}
                value = _settled(value(*args, **kwargs))
            elif kind == "get":
                value = value.get(step[1], _MISSING)
            elif kind == "in":
                value = step[1] in value
            elif kind == "len":
                value = len(value)
            elif kind == "keys":
                value = list(value)
            elif kind == "items":
                value = list(value.items())
            else:
                raise query.Untracked(kind)
        return value

    def sites(self) -> dict:
        """id of each Cell site -> where it is (``locate``; none for a site that cannot be located)."""
        if self._located is None:
            self._located, self._sites = {}, {}
            for site in self.ctx.cell_sites:
                try:
                    where = locate(site)
                except query.Untracked:
                    continue
                self._located[id(site)] = where
                self._sites.setdefault(where, site)
        return self._located

    def site(self, where):
        if self._sites is None:
            self.sites()
        site = self._sites.get(where)
        if site is None:
            raise LookupError("no such site")
        return site

    def find(self, where):
        """The value ``where`` (``locate``) describes, in this revision (each found once per revision)."""
        found = self._found.get(where, _MISSING)
        if found is _MISSING:
            try:
                found = self._find(where)
            except (Exception, RecursionError) as exc:  # noqa: BLE001 - not found now: the read fails again
                found = _NotFound(exc)
            self._found[where] = found
        if isinstance(found, _NotFound):
            raise found.error
        return found

    def _find(self, where):
        kind = where[0]
        if kind == "v" or kind == "e":
            return where[2] if kind == "v" else where  # (an Enum is compared by its print: never located)
        if kind == "l":
            return [self.find(w) for w in where[1]]
        if kind == "t":
            return tuple(self.find(w) for w in where[1])
        if kind == "fs":
            return frozenset(self.find(w) for w in where[1])
        if kind == "set":
            return {self.find(w) for w in where[1]}
        if kind == "dict":
            return {self.find(k): self.find(v) for k, v in where[1]}
        if kind == "root":
            return {"program": self.program, "context": self.ctx}[where[1]]
        if kind == "path":
            return self.walk(where[1])
        if kind == "node":
            return self.node(where)
        if kind == "class":
            node = self.node(where[1])
            found = self.program.class_of_node(node)
            if found is None or found.name != where[2]:
                raise LookupError("no such class")
            return found
        if kind == "fn":
            node = self.node(where[1])
            owner = self.find(where[3]) if where[3] is not None else None
            return Function(node, where[2], owner, [self.node(d) for d in where[4]])
        if kind == "member":
            owner = self.find(where[1])
            member = owner.members.get(where[2])
            if member is None or (where[3] is not None and (member.node is None or locate(member.node) != where[3])):
                raise LookupError("no such member")
            return member
        if kind == "site":
            return self.site(where)
        raise query.Untracked(kind)

    def node(self, where):
        _, type_, start, steps = where
        top = self.program.statement_at(start)
        node = _leaf_starting_at(top if top is not None else self.program.module, start)
        for _ in range(steps):
            node = node.parent if node is not None else None
        if node is None or node.type != type_ or node.start_pos != start:
            raise LookupError("no such node")
        return node


def _leaf_starting_at(module, start: tuple[int, int]):
    """The last leaf of ``module`` starting at or before ``start`` (the first leaf of a node ``locate`` described,
    when that node is still there): found by the children's starts, which cost a walk down their first children,
    where parso's ``get_leaf_for_position`` compares ends (a walk down the last children, then the leaf's lines)."""
    node = module
    while not isinstance(node, Leaf):
        children = node.children
        lower, upper = 0, len(children) - 1
        while lower < upper:
            index = (lower + upper + 1) // 2
            if children[index].start_pos <= start:
                lower = index
            else:
                upper = index - 1
        node = children[lower]
    return node
