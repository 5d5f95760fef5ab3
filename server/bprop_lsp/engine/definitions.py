"""What a file defines, as Python binds it: functions and their parameters, classes and the members their bodies
bind, and the statement scan that finds a module's imports, classes, functions and assignments.

Read from the parso tree alone (``trees.py``); a class body's ``if`` on a condition the module decides
(``conditions.py``) binds only the taken branch. The whole-file tables, the MRO and attribute lookup are the
``Program``'s (``program.py``).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from functools import cached_property

from parso.python import tree

from .conditions import const_truth
from .trees import call_of, decorators_of, dotted, iter_scope_nodes, statement_code, string_value


@dataclass
class ParamInfo:
    node: tree.Param
    name: str
    kind: str  # "posonly" | "positional" | "vararg" | "kwonly" | "varkw"
    has_default: bool
    annotated: bool

    @property
    def content_end(self) -> tuple[int, int]:
        """End of the parameter itself, before its trailing comma (parso 1-based line)."""
        children = [c for c in self.node.children if not (c.type == "operator" and c.value == ",")]
        return children[-1].end_pos

    @property
    def start(self) -> tuple[int, int]:
        return self.node.start_pos


@dataclass(eq=False)
class Function:
    node: tree.Function | tree.Lambda
    name: str
    owner: "ClassInfo | None" = None
    decorators: list[tree.BaseNode] = field(default_factory=list)

    @property
    def is_lambda(self) -> bool:
        return self.node.type == "lambdef"

    @cached_property
    def params(self) -> list[ParamInfo]:
        container = self.node.children[1] if self.node.type == "lambdef" else self.node.children[2]
        children = container.children if self.node.type != "lambdef" else self.node.children[1:-2]
        result: list[ParamInfo] = []
        kwonly = False
        for child in children:
            if child.type == "operator":
                if child.value == "*":
                    kwonly = True
                elif child.value == "/":
                    for p in result:
                        if p.kind == "positional":
                            p.kind = "posonly"
                continue
            if child.type != "param":
                continue
            if child.star_count == 1:
                kind = "vararg"
                kwonly = True
            elif child.star_count == 2:
                kind = "varkw"
            else:
                kind = "kwonly" if kwonly else "positional"
            result.append(ParamInfo(child, child.name.value, kind, child.default is not None,
                                    child.annotation is not None))
        return result

    @property
    def params_node(self):
        """The parso node holding the parameter list (``parameters`` for a def)."""
        return self.node.children[2] if self.node.type == "funcdef" else None

    @property
    def name_node(self):
        return self.node.name if self.node.type == "funcdef" else None

    @cached_property
    def decorator_names(self) -> list[str]:
        """Dotted source text of each decorator's callee (``ms.jit``, ``staticmethod`` …)."""
        names = []
        for dec in self.decorators:
            expr = dec.children[1]
            names.append(dotted(expr) or "")
        return names

    @property
    def first_line(self) -> int:
        """0-based line where MindSpore points for this function: its first decorator, else the def."""
        if self.decorators:
            return self.decorators[0].start_pos[0] - 1
        return self.node.start_pos[0] - 1

    @property
    def def_line(self) -> int:
        return self.node.start_pos[0] - 1

    @property
    def body(self):
        return self.node.children[-1]


@dataclass(eq=False)
class Member:
    """A class-body binding: a method, or an assignment such as ``bprop = lambda ...`` / ``bprop = None``."""

    name: str
    owner: "ClassInfo"
    function: Function | None = None
    value: tree.BaseNode | None = None  # right-hand side for assignments
    node: tree.BaseNode | None = None  # the statement / funcdef
    # Bound under a condition the engine cannot decide, where another branch (or an earlier binding) may win:
    # which definition runs is unknown, so no finding may rest on this one.
    ambiguous: bool = False
    # The class-body bindings made before this one (what a name in ``value`` can refer to).
    scope: dict | None = None
    # Bound on the class after an instance exists (``type(self).bprop = f`` after ``super().__init__()``, a patch
    # after ``net = Cls()``): GRAPH sees it, PYNATIVE does not (``attached.py``).
    graph_only: bool = False


def _weak(obj):
    """A weak reference to ``obj`` (a callable giving None for None)."""
    return weakref.ref(obj) if obj is not None else type(None)


@dataclass(eq=False)
class ClassInfo:
    node: tree.Class
    name: str

    # The program (``program.Program``) the class was last read in, or None, held weakly: a class's info is kept
    # with its statement's facts for many versions (and by the rule memo), and must not keep old programs alive,
    # each with its own text, line index and call index (measured: 4 MiB per 10,000-line document).
    @property
    def program(self):
        ref = self.__dict__.get("_program")
        return ref() if ref is not None else None

    @program.setter
    def program(self, program) -> None:
        self.__dict__["_program"] = _weak(program)

    @property
    def members(self) -> dict[str, "Member"]:
        """Class-body bindings (read on first use: most classes of a file are never looked into). Kept with the
        class while its statement is untouched, unless a class-body condition was read against the program
        (``if TYPE_CHECKING:`` …): those are re-read for each program."""
        memo = self.__dict__.get("_members_memo")
        if memo is None or (memo[0] and memo[1]() is not self.program):
            self.__dict__["_members_reads_program"] = False
            members = _class_members(self)
            # (A weak reference: the memo lives with the statement's facts for many versions, and must not keep
            # the program it was read in alive: its text, line index and call index.)
            memo = self.__dict__["_members_memo"] = (self.__dict__["_members_reads_program"],
                                                     _weak(self.program), members)
        return memo[2]

    def mentions(self, word: str) -> bool:
        """Whether the class's code holds ``word`` (its code is read once, kept with the class, and so is each
        answer: a keystroke asks it of every class in the file, and a scan of every class's code, mostly cold in
        the CPU's caches by then, cost 1-4 ms of a keystroke in a 10,000-line file)."""
        known = self.__dict__.get("_mentioned")
        if known is None:
            known = self.__dict__["_mentioned"] = {}
        answer = known.get(word)
        if answer is None:
            answer = known[word] = word in self._class_code()
        return answer

    def _class_code(self) -> str:
        code = self.__dict__.get("_code")
        if code is None:
            program = self.program
            if program is not None and self.node.parent is program.module:
                # a top-level class statement: its code is the statement's, which the program may have read already
                code = statement_code(program.statement_facts(self.node), self.node)
            else:
                code = self.node.get_code()
            self.__dict__["_code"] = code
        return code

    @cached_property
    def base_texts(self) -> list[str | None]:
        """Each base's dotted text, None where it is not a plain dotted name (a call, a subscript …)."""
        texts = []
        for base in self.bases:
            text = dotted(base)
            texts.append(None if text is None or call_of(base) is not None else text)
        return texts

    @property
    def bases(self) -> list[tree.BaseNode]:
        arglist = self.node.get_super_arglist()
        if arglist is None:
            return []
        if arglist.type == "arglist":
            items = [c for c in arglist.children if c.type != "operator"]
        else:
            items = [arglist]
        # keyword arguments (metaclass=...) are not bases
        return [i for i in items if not (i.type == "argument" and len(i.children) == 3 and i.children[1] == "=")]


@dataclass(eq=False)
class SyntheticClass(ClassInfo):
    """A class built by ``type(name, bases, namespace)``: its bases and its namespace dict are read like a class
    statement's; ``node`` is the ``type(...)`` call."""

    base_nodes: list = field(default_factory=list)
    namespace: list = field(default_factory=list)  # (key string node, value node)

    @property
    def bases(self) -> list:
        return self.base_nodes

    @cached_property
    def members(self) -> dict[str, "Member"]:
        members: dict[str, Member] = {}
        for key, value in self.namespace:
            name = string_value(key)
            if name is None:
                continue
            member = Member(name, self, value=value, node=value, scope={})
            if value.type == "lambdef":
                member.function = Function(value, name, owner=self)
            members[name] = member
        return members




_STATEMENT_CONTAINERS = {
    "file_input", "suite", "simple_stmt", "classdef", "funcdef", "async_funcdef", "async_stmt", "decorated",
    "if_stmt", "for_stmt", "while_stmt", "try_stmt", "with_stmt", "match_stmt", "case_block", "error_node",
}


def scan_statements(root) -> tuple[list, list, list, list]:
    """(imports, classes, funcdefs, assignment statements) under ``root``, walking statements only:
    imports, classes, functions and assignments are all statements, so the walk never descends into
    expressions (most of a file's nodes). Error nodes may hold statements."""
    imports: list = []
    classes: list = []
    funcdefs: list = []
    assignments: list = []
    stack = [root]
    pop, extend, containers = stack.pop, stack.extend, _STATEMENT_CONTAINERS
    while stack:
        node = pop()
        t = node.type
        if t == "expr_stmt":
            assignments.append(node)
        elif t in containers:
            if t == "funcdef":
                funcdefs.append(node)
                extend(node.children[-1:])  # the body; parameters and annotations hold no statements
            elif t == "classdef":
                classes.append(ClassInfo(node, node.name.value))
                extend(node.children[-1:])
            else:
                extend(reversed(node.children))
        elif t in ("import_name", "import_from"):
            imports.append(node)
    return imports, classes, funcdefs, assignments


def import_bindings(node) -> list[tuple[str, str]]:
    """(local name, full dotted name) for each name an ``import``/``from ... import`` statement binds (``import
    a.b`` binds ``a`` to ``a``); none for a relative import. A half-typed statement: what was read so far."""
    out: list[tuple[str, str]] = []
    try:
        if node.type == "import_name":
            for name, path in zip(node.get_defined_names(), node.get_paths()):
                full = ".".join(p.value for p in path)
                if name.value == path[0].value and len(path) > 1 and not _is_aliased(node, name):
                    out.append((name.value, path[0].value))  # `import a.b` binds `a`
                else:
                    out.append((name.value, full))
        else:
            if node.level:
                return out
            for name, path in zip(node.get_defined_names(), node.get_paths()):
                out.append((name.value, ".".join(p.value for p in path)))
    except (AttributeError, IndexError, ValueError):
        pass
    return out


def name_assignments(statements: list) -> list[tuple[str, object]]:
    """(name, value) for each ``name = value`` target among assignment statements, in order."""
    pairs = []
    for node in statements:
        if len(node.children) < 3 or node.children[1] != "=":
            continue
        value = node.children[-1]
        for target in node.children[:-1:2]:
            if target.type == "name":
                pairs.append((target.value, value))
    return pairs



def _class_members(info: "ClassInfo") -> dict[str, "Member"]:
    """What the class body leaves bound, statement by statement as Python runs it: under an ``if`` whose condition
    is known only the taken branch counts; under an unknown one a name bound in one branch and also elsewhere
    (another branch, or before) is ambiguous. ``try`` bodies count, their handlers are alternatives."""
    members: dict[str, Member] = {}
    _bind_suite(info, info.node.children[-1], members, conditional=False)
    return members


def _bind_suite(info, suite, members: dict, conditional: bool) -> None:
    children = suite.children if suite.type == "suite" else [suite]
    for child in children:
        _bind_statement(info, child, members, conditional)


def _bind_statement(info, node, members: dict, conditional: bool) -> None:
    t = node.type
    if t == "simple_stmt":
        for c in node.children:
            if c.type not in ("newline", "operator"):
                _bind_statement(info, c, members, conditional)
    elif t == "decorated":
        _bind_statement(info, node.children[-1], members, conditional)
    elif t in ("funcdef", "async_funcdef", "async_stmt"):
        fn_node = node if t == "funcdef" else next((c for c in node.children if c.type == "funcdef"), None)
        if fn_node is None:
            return
        fn = Function(fn_node, fn_node.name.value, owner=info, decorators=decorators_of(fn_node))
        members[fn.name] = Member(fn.name, info, function=fn, node=fn_node, scope=dict(members))
    elif t == "classdef":
        members[node.name.value] = Member(node.name.value, info, node=node, scope=dict(members))
    elif t == "expr_stmt" and len(node.children) >= 3 and node.children[1] == "=":
        value = node.children[-1]
        for target in node.children[:-1:2]:
            if target.type == "name":
                member = Member(target.value, info, value=value, node=node, scope=dict(members))
                if value.type == "lambdef":
                    member.function = Function(value, target.value, owner=info)
                members[target.value] = member
    elif t == "if_stmt":
        _bind_if(info, node, members)
    elif t == "try_stmt":
        _bind_try(info, node, members)


def _bind_if(info, node, members: dict) -> None:
    program = info.program
    info.__dict__["_members_reads_program"] = True
    branches = []  # (condition or None for else, suite)
    children = node.children
    i = 0
    while i < len(children):
        c = children[i]
        if c in ("if", "elif"):
            branches.append((children[i + 1], children[i + 3]))
            i += 4
        elif c == "else":
            branches.append((None, children[i + 2]))
            i += 3
        else:
            i += 1
    possible = []  # suites that may run, in order; a known-true condition (or ``else``) ends the chain
    exhaustive = False
    for condition, suite in branches:
        truth = True if condition is None else (const_truth(program, condition) if program is not None else None)
        if truth is False:
            continue
        possible.append(suite)
        if truth is True:
            exhaustive = True
            break
    if exhaustive and len(possible) == 1:
        _bind_suite(info, possible[0], members, conditional=False)
        return
    # Each possible branch, bound separately; then merged: a name bound by exactly one alternative (and by
    # nothing before that could survive) keeps that binding, anything else is ambiguous.
    alternatives = []
    for suite in possible:
        bound: dict = {}
        _bind_suite(info, suite, bound, conditional=True)
        alternatives.append(bound)
    _merge_alternatives(members, alternatives, fallthrough=not exhaustive)


def _bind_try(info, node, members: dict) -> None:
    body = None
    handlers = []
    tail = []  # else / finally suites: run after the body (else) or always (finally)
    children = node.children
    for i, c in enumerate(children):
        if c == "try":
            body = children[i + 2]
        elif getattr(c, "type", None) == "except_clause" or c == "except":
            handlers.append(children[i + 2])
        elif c in ("else", "finally"):
            tail.append(children[i + 2])
    alternatives = []
    if body is not None:
        bound: dict = {}
        _bind_suite(info, body, bound, conditional=True)
        alternatives.append(bound)
    for suite in handlers:
        bound = {}
        _bind_suite(info, suite, bound, conditional=True)
        alternatives.append(bound)
    if len(alternatives) == 1:
        members.update(alternatives[0])
    else:
        _merge_alternatives(members, alternatives, fallthrough=False)
    for suite in tail:
        _bind_suite(info, suite, members, conditional=False)


def _merge_alternatives(members: dict, alternatives: list, fallthrough: bool) -> None:
    names = {n for alt in alternatives for n in alt}
    for name in names:
        binders = [alt[name] for alt in alternatives if name in alt]
        candidates = len(binders) + (1 if name in members and (fallthrough or len(binders) < len(alternatives)) else 0)
        member = binders[-1]
        if candidates > 1:
            member.ambiguous = True
        members[name] = member



def _is_aliased(node, name) -> bool:
    return any(c.type == "dotted_as_name" and c.children[-1] is name for c in iter_scope_nodes(node))
