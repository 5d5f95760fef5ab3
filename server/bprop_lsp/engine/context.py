"""The custom bprops of one file, found once and shared by every rule.

A *cell site* is a Cell class whose attribute lookup finds a ``bprop`` (own, inherited or from a
mixin) together with the ``construct`` the same lookup finds. A *custom-op site* is an
``ops.Custom(..., bprop=fn)`` call whose ``fn`` resolves to a function in the file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from .conditions import never_taken
from .definitions import ClassInfo, Function, Member
from .mindspore_api import CUSTOM_NAMES, is_mindspore
from .program import Program
from .settings import Settings
from .trees import call_arguments, call_of, dotted, scope_of
from .values import Resolved, across_modules, resolve_function


@dataclass(eq=False)
class Signature:
    """How a callable's parameters line up with what MindSpore passes."""

    function: Function
    skip_self: bool  # an instance method called through the instance

    @property
    def params(self):
        return self.function.params[1:] if self.skip_self and self.function.params else self.function.params

    @property
    def positional(self):
        return [p for p in self.params if p.kind in ("positional", "posonly")]

    @property
    def required_positional(self):
        return [p for p in self.positional if not p.has_default]

    @property
    def vararg(self):
        return next((p for p in self.params if p.kind == "vararg"), None)

    @property
    def varkw(self):
        return next((p for p in self.params if p.kind == "varkw"), None)

    @property
    def kwonly(self):
        return [p for p in self.params if p.kind == "kwonly"]


@dataclass(eq=False)
class ForeignBprop:
    """A bprop defined in another module of the project (``workspace.py``) that a site of this file uses: what it
    says about the def is shown here (a finding's span lies in the file being checked), on ``anchor``."""

    path: str  # the other module's file
    function: Function  # the def there (its nodes are that module's)
    anchor: object  # the node of this file a finding about the def is shown on
    # Whether the other module may check the def itself (a Cell there has it, or it names it again): then only
    # what depends on this site's inputs is shown here (the rest is reported there, once).
    shared: bool = False


@dataclass(eq=False)
class CellSite:
    cls: ClassInfo  # the concrete Cell
    bprop: Member  # as found through the MRO
    construct: Function | None
    # What the bprop binding evaluates to (a def, an alias, staticmethod(f), jit(f), a factory's result …).
    resolved: Resolved | None = None
    # The modes in which MindSpore calls this bprop: both for a class attribute; GRAPH only for a bound method
    # assigned to ``self.bprop`` in ``__init__`` (PYNATIVE decided has_bprop before and ignores it).
    modes: frozenset = frozenset({"graph", "pynative"})
    # construct inherited from a MindSpore layer (``class MyReLU(nn.ReLU)``): its qualified name.
    external_construct: str | None = None
    # The bprop is a def of another module of the project (``ForeignBprop``), else None.
    foreign: ForeignBprop | None = None

    @property
    def inherited(self) -> bool:
        return self.bprop.owner is not self.cls

    @property
    def function(self) -> Function | None:
        return self.resolved.function if self.resolved is not None else None

    # Positional argument counts of the file's calls of this cell (set only when construct's signature leaves
    # the count open: *inputs or defaults); None when no call can be read.
    call_counts: frozenset | None = None

    @cached_property
    def _layer_signature(self):
        """The construct a MindSpore layer base provides (``class MyReLU(nn.ReLU)``), from the 2.10 data."""
        if self.construct is not None or self.external_construct is None:
            return None
        from .mindspore_api import nn_cell_signature

        sig = nn_cell_signature(self.external_construct)
        if sig is None or sig.vararg or sig.varkw or sig.kwonly:
            return None
        return sig

    @cached_property
    def inputs(self) -> list[str] | None:
        """Names of the forward inputs MindSpore passes (None: cannot be told, e.g. ``*args`` never called)."""
        if self._layer_signature is not None:
            return list(self._layer_signature.params)
        if self.construct is None:
            return None
        sig = Signature(self.construct, skip_self=True)
        if sig.varkw is not None:
            return None
        names = [p.name for p in sig.positional]
        if sig.vararg is not None:
            n = self._single_count()
            if n is None or n < len(names):
                return None
            return names + [f"{sig.vararg.name}_{i}" for i in range(n - len(names))]
        return names

    @cached_property
    def input_range(self) -> tuple[int, int] | None:
        """(fewest, most) inputs a call can pass: defaulted construct params may be left out in GRAPH mode. The
        file's calls settle it: a defaulted input every call passes is an input (further behaviours 18), and
        ``construct(self, *inputs)`` takes as many as the calls pass (19)."""
        layer = self._layer_signature
        if layer is not None:
            hi = len(layer.params)
            lo = hi - layer.defaults
            return (hi, hi) if lo != hi and self._single_count() == hi else (lo, hi)
        if self.construct is None:
            return None
        sig = Signature(self.construct, skip_self=True)
        if sig.varkw is not None:
            return None
        if sig.vararg is not None:
            n = self._single_count()
            if n is None or n < len(sig.positional):
                return None
            return n, n
        lo, hi = len(sig.required_positional), len(sig.positional)
        if lo != hi and self._single_count() == hi:
            return hi, hi
        return lo, hi

    def _single_count(self) -> int | None:
        if not self.call_counts or len(self.call_counts) != 1:
            return None
        return next(iter(self.call_counts))

    @property
    def owner_label(self) -> str:
        if self.inherited:
            return f"{self.cls.name} (inherited from {self.bprop.owner.name})"
        return self.cls.name


@dataclass(eq=False)
class CustomOpSite:
    call: object  # the ``ops.Custom(...)`` node
    bprop_arg: object  # the expression given as ``bprop=``
    function: Function | None
    bound: bool  # a bound method (``self.backward``): MindSpore does not pass self
    inputs: int | None  # number of op inputs, when the forward function or a call site tells
    foreign: ForeignBprop | None = None  # the bprop is a def of another module of the project


class Context:
    def __init__(self, program: Program, settings: Settings):
        self.program = program
        self.settings = settings
        # False while re-checking a fix: rules may skip building fixes of their own.
        self.want_fixes = True
        # What could not be done for this file (a rule that raised, a fix that could not be built), as messages
        # for the user: ``Analysis.failures`` (shared with every view of this Context: one list).
        self.failures: list[str] = []

    def fix_failed(self, code: str, exc: BaseException) -> None:
        """A rule's fix could not be built (a bug of ours on this input): the finding is reported without it."""
        message = f"the fix of {code} could not be built ({type(exc).__name__}); {code} is reported without it"
        if message not in self.failures:
            self.failures.append(message)

    @cached_property
    def cell_sites(self) -> list[CellSite]:
        sites: list[CellSite] = []
        seen: set[tuple[int, int]] = set()
        uncalled: dict = {}  # (bprop, construct) -> index in sites of a counted site the file never calls
        p = self.program
        # Which classes can be cell sites at all, read from each class's code, the imports and its MRO alone; and
        # what a candidate's lookups found, when read from its classes' defs alone: kept by the program for the
        # classes a keystroke cannot have changed (``Program.hierarchy_memo``).
        sieve = p.hierarchy_memo("cell_sites")
        found = p.hierarchy_memo("cell_site_parts", members=True)
        for cls in p.classes:
            candidate = sieve.get(id(cls))
            if candidate is None:
                candidate = sieve[id(cls)] = self._may_be_cell_site(cls)
            if not candidate:
                continue
            if cls.node.parent.type != "file_input" and never_taken(p, cls.node, None):
                # ``if USE_FAST: class Gate ... else: class Gate ...`` on a module flag: the class statement of the
                # branch Python never takes makes no class at all. (Not in the sieve: it reads the flag's value,
                # which another statement holds.)
                continue
            parts = found.get(id(cls))
            if parts is None:
                parts, from_defs = self._site_parts(cls)
                if from_defs:
                    found[id(cls)] = parts
            elif parts:
                # (a binding to a def: resolved as a fresh one, Resolved(def), as each program resolves it anew)
                parts = (parts[0], parts[1], Resolved(parts[2].function) if parts[2] is not None else None,
                         *parts[3:])
            if not parts:
                continue
            bprop, modes, resolved, construct, external, counted = parts
            foreign = self._foreign_bprop(cls, bprop, resolved, construct) if p.workspace is not None else None
            if foreign is False:
                continue
            pair = (id(resolved.function.node) if resolved else id(bprop), id(construct))
            counts = self._call_counts(cls) if counted else None
            if pair in seen:
                # A class sharing an earlier one's bprop and construct adds nothing, unless the construct's defaults
                # make the calls decide the inputs and only this class is called (a base never built itself, its
                # subclass made by a factory: case 321): then this class's calls are the ones that count.
                earlier = uncalled.get(pair)
                if counts is None or earlier is None:
                    continue
                site = CellSite(cls, bprop, construct, resolved, modes, external, foreign)
                site.call_counts = counts
                sites[earlier] = site
                del uncalled[pair]
                continue
            seen.add(pair)
            site = CellSite(cls, bprop, construct, resolved, modes, external, foreign)
            if counted:
                site.call_counts = counts
                if counts is None:
                    uncalled[pair] = len(sites)
            sites.append(site)
        shadowed = self._shadowed_classes(sites)
        return [site for site in sites if site.cls not in shadowed]

    def _site_parts(self, cls: ClassInfo) -> tuple[tuple | bool, bool]:
        """What makes a candidate of ``cell_sites`` a cell site: (its bprop member, the modes, what the bprop
        resolves to, its construct, the MindSpore layer whose construct it inherits, whether the file's calls are
        to count its inputs), or False when it is none; and whether that was read from the class's lookups alone
        (every binding looked at a def: no name resolved through the program)."""
        p = self.program
        bprop = p.lookup(cls, "bprop")
        modes = _GRAPH_ONLY if bprop is not None and bprop.graph_only else _BOTH_MODES
        if bprop is None:
            bprop = self._instance_bound_bprop(cls)
            if bprop is None:
                return False, True
            modes = _GRAPH_ONLY
        if bprop.ambiguous:
            return False, True  # which definition runs depends on a condition we cannot decide
        if p.workspace is not None and _foreign(bprop, cls) and not _bound_to_def(bprop):
            return False, True  # another module's binding other than a def: read in its own program only
        if cls.mentions("custom_vjp"):  # (then the text does, its code being in it)
            return False, True  # MindSpore's custom_vjp cells: `bprop(self, *args)` is special-cased by that flag
        from_defs = _bound_to_def(bprop)
        with across_modules():  # (a bprop bound from another module: placed here by ``ForeignBprop``)
            resolved = self.resolve_member(bprop)
        if resolved is None and bprop.value is not None and bprop.function is None and _is_none(bprop.value) is False \
                and not self._is_partial(bprop.value):
            return False, from_defs  # bound to something we cannot resolve: unknown, never guessed
        construct_member = p.lookup(cls, "construct")
        construct = None
        if construct_member is not None and p.workspace is not None and _foreign(construct_member, cls) \
                and not _bound_to_def(construct_member):
            construct_member = None  # (another module's binding other than a def: read in its own program only)
        if construct_member is not None and not construct_member.ambiguous:
            from_defs = from_defs and _bound_to_def(construct_member)
            c = self.resolve_member(construct_member)
            if c is not None and c.binding == "method":
                construct = c.function
        external = p.external_owner(cls, "construct") if construct_member is None else None
        counted = False
        if construct is not None:
            sig = Signature(construct, skip_self=True)
            counted = sig.vararg is not None or len(sig.required_positional) != len(sig.positional)
        return (bprop, modes, resolved, construct, external, counted), from_defs

    def _foreign_bprop(self, cls: ClassInfo, bprop: Member, resolved: Resolved | None, construct: Function | None):
        """How a site's bprop stands to the workspace (``workspace.py``): None, this file's; a ``ForeignBprop``, a
        def of another module checked here against this file's construct; False, not checked here (its own
        module checks it, or what it reads cannot be read from here)."""
        p = self.program
        if _foreign(bprop, cls):
            # Inherited from a class of another module: checked here only against a construct of this file that
            # takes other inputs than the one the def's own class sees (that pair is its module's to report).
            owner = bprop.owner
            home = owner.program
            if construct is None or construct.owner is None or construct.owner.program is not p or home is None \
                    or resolved is None or resolved.function.node is not bprop.function.node:
                return False
            theirs = home.lookup(owner, "construct")
            if theirs is not None:
                if theirs.ambiguous or not _bound_to_def(theirs):
                    return False
                if _arity(theirs.function) == _arity(construct):
                    return False  # the same inputs: its own module reports what is wrong with it
            if not self._reads_alike(resolved.function, home):
                return False
            return ForeignBprop(home.path, resolved.function, cls.node.children[1], shared=True)
        if resolved is None or resolved.home is None:
            return None
        home = resolved.home
        if bprop.value is None or not self._reads_alike(resolved.function, home):
            return False
        anchor = bprop.value
        while anchor.parent is not None and anchor.type != "expr_stmt":
            anchor = anchor.parent
        if anchor.type != "expr_stmt":
            return False
        return ForeignBprop(home.path, resolved.function, anchor, shared=_named_again(home, resolved.function))

    def _reads_alike(self, fn: Function, home: Program) -> bool:
        """Whether every name ``fn`` (a def of ``home``, another module) reads means here what it means there, or
        nothing here: a rule reads the def's body against this file's program, so a name this file binds at
        module level otherwise (a helper, a constant of the same name) would be read wrong."""
        from .trees import is_module_level

        p = self.program
        names = set()
        stack = [fn.node, *fn.decorators]
        while stack:
            node = stack.pop()
            if node.type == "name":
                names.add(node.value)
            stack.extend(getattr(node, "children", ()))
        for name in names:
            if any(scope_of(f.node).type == "file_input" for f in p.functions.get(name, ())) \
                    or any(is_module_level(v) for v in p.assignments.get(name, ())) or p.classes_by_name.get(name):
                return False
            if name in p.imports and p.imports.get(name) != home.imports.get(name):
                return False
        return True

    def _is_partial(self, value) -> bool:
        """``functools.partial(...)`` / ``partialmethod(...)``: no function MindSpore can read (unknown: a rule
        may say so)."""
        call = call_of(value) if value.type in ("power", "atom_expr") else None
        return call is not None and bool(call[0]) and self.program.resolve_dotted(call[0]) in (
            "functools.partial", "functools.partialmethod")

    def _may_be_cell_site(self, cls: ClassInfo) -> bool:
        """A Cell some class of whose MRO says bprop (else it has neither a bprop member nor ``self.bprop = ...``)."""
        p = self.program
        if p.bound_late(cls):
            return p.is_cell(cls)  # a bprop bound after the class statement (``attached.py``)
        if not cls.mentions("bprop") and (
                # every base outside the file (dotted, imported, or no name): no class of the file in its MRO
                # (most classes of a model file; their MRO is then not even built)
                all(t is None or "." in t or t in p.imports for t in cls.base_texts)
                # (a base of another module's: its bprop is checked here against a construct of this class)
                and (p.workspace is None or not cls.mentions("construct")
                     or not any(t is not None and p._workspace_class(t) is not None for t in cls.base_texts))
                or not any(not isinstance(k, str) and k.mentions("bprop") for k in p.mro(cls))):
            return False
        return p.is_cell(cls)

    def _shadowed_classes(self, sites: list[CellSite]) -> set:
        """Cells whose bprop MindSpore never calls: every use of the class in the file is a child cell
        (``self.q = Quantize()``) of a Cell whose own custom bprop replaces the backward of its whole subtree
        (bprop-rules.md, further behaviours 10). Any other mention of the name (another call, a base list, a
        string) keeps the cell checked."""
        p = self.program
        with_bprop = {id(site.cls) for site in sites if site.modes == _BOTH_MODES}
        result = set()
        if len(with_bprop) < 2:
            return result  # shadowing needs an outer and an inner cell with bprops
        names = sorted({site.cls.name for site in sites}, key=len, reverse=True)
        # Every mention of every site's class name, counted in one pass over the text.
        mentions_of: dict[str, int] = {}
        # Every occurrence as ``nodes_matching`` finds it (``.Name`` too), in the same pass when the names are
        # all word characters (identifiers with combining marks are not): one search per name is a pass over the
        # text each, most of the cost in a large file.
        occurrences: dict[str, list[int]] | None = None
        # Or, better, the statements holding each name, from the words of each statement (read once per statement).
        holders: dict[str, list] | None = None
        plain = _WORD_CHARACTERS.fullmatch("".join(names)) is not None  # (every name: none is empty)
        layout = p._layout if plain else None
        if layout is not None:
            holders = {}
            text = p.text
            wanted = frozenset(names)
            # What each statement says of these names, kept with its facts while the names stay the same: a
            # keystroke reads again only the statement it touched (intersecting every statement's words with the
            # names was a millisecond of each keystroke in a 10,000-line file).
            names_key = tuple(sorted(wanted))
            # (the very key the statements keep, when it is the same: then telling that it is takes no comparing
            # of its names, for each statement of the file)
            kept_key = next((facts["site_mentions"][0] for facts, _offset in layout if "site_mentions" in facts), None)
            if kept_key == names_key:
                names_key = kept_key
            for entry in layout:
                facts, offset = entry
                kept = facts.get("site_mentions")
                if kept is None or kept[0] is not names_key:
                    if kept is not None and kept[0] == names_key:
                        kept = facts["site_mentions"] = (names_key, kept[1])
                    else:
                        kept = facts["site_mentions"] = (names_key, _statement_mentions(facts, wanted))
                for name, count, first in kept[1]:
                    holders.setdefault(name, []).append(entry)
                    if first and offset and text[offset - 1] == ".":
                        count -= 1  # the statement starts with the name, right after a dot ending the one before
                    mentions_of[name] = mentions_of.get(name, 0) + count
        elif plain:
            occurrences = {}
            text = p.text
            for m in re.finditer(r"(?<!\w)(" + "|".join(map(re.escape, names)) + r")\b", text):
                occurrences.setdefault(m.group(1), []).append(m.start())
                if m.start() == 0 or text[m.start() - 1] != ".":
                    mentions_of[m.group(1)] = mentions_of.get(m.group(1), 0) + 1
        else:
            for m in re.finditer(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")\b", p.text):
                mentions_of[m.group(1)] = mentions_of.get(m.group(1), 0) + 1
        for site in sites:
            cls = site.cls
            name = cls.name
            if len(p.classes_by_name.get(name, [])) != 1:
                continue
            mentions = mentions_of.get(name, 0)
            if mentions < 2:
                continue  # the class statement alone: no use to be a child cell
            if holders is not None:
                uses = p._nodes_in(holders.get(name, []), name, ("expr_stmt",))
            else:
                uses = p.nodes_matching(name, ("expr_stmt",)) if occurrences is None else \
                    p.nodes_at(occurrences.get(name, []), ("expr_stmt",))
            if not uses or mentions != len(uses) + 1:
                continue
            ok = True
            for stmt in uses:
                value = stmt.children[-1] if len(stmt.children) == 3 and stmt.children[1] == "=" else None
                target = stmt.children[0]
                c = call_of(value) if value is not None else None
                if c is None or c[0] != name or not (dotted(target) or "").startswith("self."):
                    ok = False
                    break
                owner_node = stmt.search_ancestor("classdef")
                owner = next((k for k in p.classes if k.node is owner_node), None)
                if owner is None or owner is cls or id(owner) not in with_bprop:
                    ok = False
                    break
            if ok:
                result.add(cls)
        return result

    def non_tensor_inputs(self, site: CellSite) -> set[int]:
        """Indices of construct inputs that are evidently not Tensors — annotated or defaulted as a Python number,
        string, bool or sequence, passed only such literals by the file's calls, or used as ``range(n)``. A ``None``
        gradient for them is the PyTorch habit, not a divergence (issue: values)."""
        if site.construct is None or site.inputs is None:
            return set()
        sig = Signature(site.construct, skip_self=True)
        result = set()
        calls = [c for c in self.call_index.sites(site.cls) if not c.has_star]
        code = site.construct.body.get_code()
        for i, param in enumerate(sig.positional):
            ann = param.node.annotation
            if ann is not None and (dotted(ann) or ann.get_code()).strip().split("[")[0].rsplit(".", 1)[-1] in _PY_TYPES:
                result.add(i)
                continue
            default = param.node.default
            if default is not None and _is_python_literal(default):
                result.add(i)
                continue
            passed = [c.positional[i] if i < len(c.positional) else c.keywords.get(param.name) for c in calls]
            if passed and all(a is not None and _is_python_literal(a) for a in passed):
                result.add(i)
                continue
            if f"range({param.name})" in code:
                result.add(i)
        return result

    def attribute_values(self, cls: ClassInfo, attr: str) -> list | None:
        """The values ``self.<attr>`` can hold on instances the file builds: a literal assigned in ``__init__``, or
        an ``__init__`` parameter as each ``Cls(...)`` call of the file passes it (its default when omitted).
        None when any of that cannot be read (GRAPH folds conditions on such attributes: bprop-rules.md, 11)."""
        p = self.program
        init = p.lookup(cls, "__init__")
        if init is None or init.function is None or init.function.is_lambda or init.ambiguous:
            return None
        from .trees import iter_own_nodes

        assigned = []
        for k in p.mro(cls):
            if isinstance(k, str):
                continue
            for member in k.members.values():
                fn = member.function
                if fn is None or fn.is_lambda:
                    continue
                for node in iter_own_nodes(fn.node):
                    if node.type == "expr_stmt" and any(dotted(t) == f"self.{attr}" for t in node.children[:-1:2]):
                        if fn.node is not init.function.node or len(node.children) != 3:
                            return None  # set elsewhere too (another method, a base, an augmented assignment)
                        assigned.append(node.children[2])
        if len(assigned) != 1:
            return None
        value = assigned[0]
        if value.type in ("keyword", "number", "string"):
            return [value]
        if value.type != "name":
            return None
        params = [q for q in init.function.params]
        index = next((i for i, q in enumerate(params) if q.name == value.value), None)
        if index is None or params[index].kind in ("vararg", "varkw"):
            return None
        param = params[index]
        position = index - 1  # after self
        calls = p.calls_of(cls.name)
        if not calls:
            return None
        values = []
        for node in calls:
            positional, keywords, has_star = call_arguments(call_of(node)[1])
            if has_star:
                return None
            if param.name in keywords:
                passed = keywords[param.name]
            elif param.kind != "kwonly" and 0 <= position < len(positional):
                passed = positional[position]
            elif param.node.default is not None:
                passed = param.node.default
            else:
                return None
            if passed.type not in ("keyword", "number", "string"):
                return None
            values.append(passed)
        return values

    def primitive_inputs(self, prim: ClassInfo) -> int | None:
        """A Primitive's input count, read from its infer_shape/infer_dtype/infer_value signature."""
        for name in ("infer_shape", "infer_dtype", "infer_value"):
            member = self.program.lookup(prim, name)
            if member is not None and member.function is not None:
                sig = Signature(member.function, skip_self=True)
                if sig.vararg is None and sig.varkw is None:
                    return len(sig.positional)
        return None

    def _call_counts(self, cls: ClassInfo) -> frozenset | None:
        counts = set()
        for call in self.call_index.sites(cls):
            if call.has_star or call.keywords:
                return None  # a count we cannot read: the calls do not settle it
            counts.add(len(call.positional))
        return frozenset(counts) or None

    def resolve_member(self, member: Member) -> Resolved | None:
        """What a class-body binding evaluates to when looked up on an instance."""
        fn = member.function
        if fn is not None and member.value is None:
            names = fn.decorator_names
            if "property" in names or any(n.endswith(".setter") or n.endswith(".getter") for n in names):
                return self._property_target(member)
            return Resolved(fn)
        if member.value is not None:
            return resolve_function(self.program, member.value, class_members=member.scope or {})
        return None

    def _property_target(self, member: Member) -> Resolved | None:
        """``@property def bprop(self): return self._back``: the method the property hands back, bound."""
        from .trees import iter_own_nodes

        returns = [n for n in iter_own_nodes(member.function.node) if n.type == "return_stmt"]
        if len(returns) != 1 or len(returns[0].children) != 2:
            return None
        text = dotted(returns[0].children[1])
        if text is None or not text.startswith("self.") or text.count(".") != 1:
            return None
        target = self.program.lookup(member.owner, text[5:])
        if target is None or target.ambiguous or target is member:
            return None
        resolved = self.resolve_member(target)
        return resolved if resolved is not None and resolved.binding == "method" else None

    def _instance_bound_bprop(self, cls: ClassInfo) -> Member | None:
        """``self.bprop = self._method`` in ``__init__``: GRAPH uses the bound method (arity check included)."""
        p = self.program
        init = p.lookup(cls, "__init__")
        if init is None or init.function is None or init.function.is_lambda:
            return None
        from .trees import iter_own_nodes

        found = None
        fn_node = init.function.node
        facts = p.statement_facts(fn_node).setdefault("self_bprop_assignments", {})
        entry = facts.get(id(fn_node))
        if entry is None or entry[0] is not fn_node:  # read once per def, kept with its top-level statement
            entry = facts[id(fn_node)] = (fn_node, [
                node for node in iter_own_nodes(fn_node)
                if node.type == "expr_stmt" and len(node.children) == 3 and node.children[1] == "="
                and dotted(node.children[0]) == "self.bprop"])
        for node in entry[1]:
            value = dotted(node.children[2])
            if found is not None or value is None or not value.startswith("self.") or value.count(".") != 1:
                return None  # assigned twice, or not a bound method: unknown
            target = p.lookup(cls, value[5:])
            if target is None or target.function is None or target.value is not None or target.ambiguous:
                return None
            if any(n in ("staticmethod", "classmethod", "property") for n in target.function.decorator_names):
                return None
            found = target
        return found

    @cached_property
    def custom_op_sites(self) -> list[CustomOpSite]:
        p = self.program
        sites = []
        for node in p.nodes_matching("Custom", ("power", "atom_expr")):
            c = call_of(node)
            if not c or not c[0]:
                continue
            if not is_mindspore(p.resolve_dotted(c[0]), CUSTOM_NAMES, bare=("ops.Custom", "Custom")):
                continue
            positional, keywords, has_star = call_arguments(c[1])
            arguments = _bind_custom_arguments(positional, keywords)
            for bound_args in self._through_helpers(node, arguments):
                site = self._custom_site(node, bound_args)
                if site is not None:
                    sites.append(site)
        return sites

    def _custom_site(self, node, arguments: dict) -> CustomOpSite | None:
        p = self.program
        bprop_arg = arguments.get("bprop")
        if bprop_arg is None or _is_none(bprop_arg):
            return None
        with across_modules():  # (a func or bprop of another module: placed here by ``ForeignBprop``)
            function, bound = self.resolve_callable(bprop_arg)
        forward = arguments.get("func")
        func_type = arguments.get("func_type")
        inputs = None
        # An aot/aicpu kernel's `func` is a registration stub or a library path: its parameters say nothing
        # about the op's inputs.
        kernel_stub = func_type is not None and func_type.type == "string" and any(
            k in func_type.value for k in ("aot", "aicpu", "tbe", "julia"))
        if forward is not None and not kernel_stub:
            with across_modules():
                fwd, fwd_bound = self.resolve_callable(forward)
            if fwd is not None:
                sig = Signature(fwd, skip_self=fwd_bound)
                if sig.vararg is None and sig.varkw is None:
                    inputs = len(sig.positional)
        foreign = None
        if function is not None and p.workspace is not None and function.node.get_root_node() is not p.module:
            home = p.workspace.program_holding(function.node)
            if home is None or home is p or not self._reads_alike(function, home):
                return None
            foreign = ForeignBprop(home.path, function, bprop_arg, shared=_named_again(home, function))
        return CustomOpSite(node, bprop_arg, function, bound, inputs, foreign)

    def _through_helpers(self, custom_call, arguments: dict):
        """The Custom call's arguments as written, or — when ``bprop``/``func`` are parameters of the function that
        builds the op (a project helper ``build_op(f, bprop=g)``) — as each call of that helper in the file
        passes them."""
        helper = custom_call.search_ancestor("funcdef")
        params = {}
        if helper is not None:
            fn = Function(helper, helper.name.value)
            params = {q.name: i for i, q in enumerate(fn.params) if q.kind in ("positional", "posonly", "kwonly")}
        forwarded = {k: v.value for k, v in arguments.items()
                     if k in ("bprop", "func") and v.type == "name" and v.value in params}
        if not forwarded:
            yield arguments
            return
        if helper.parent is not None and helper.parent.type == "classdef" or scope_of(helper).type == "classdef":
            return  # a method building the op: its callers are not followed
        for call_node in self.program.nodes_matching(helper.name.value, ("power", "atom_expr")):
            c = call_of(call_node)
            if not c or c[0] != helper.name.value:
                continue
            pos, kws, star = call_arguments(c[1])
            if star:
                continue
            bound = dict(arguments)
            for key, param in forwarded.items():
                index = params[param]
                value = kws.get(param) if param in kws else (pos[index] if index < len(pos) else None)
                if value is None:
                    bound.pop(key, None)
                else:
                    bound[key] = value
            yield bound

    def resolve_callable(self, expr) -> tuple[Function | None, bool]:
        """The function an expression names (module/closure function, ``self.method``, ``Class.static_method``,
        lambda, a factory's result) and whether it is a bound method (MindSpore then passes no self)."""
        function, bound = self._resolve_callable(expr)
        if function is not None:
            return function, bound
        p = self.program
        text = dotted(expr) if expr.type in ("name", "power", "atom_expr") else None
        if text is not None and text.count(".") == 1 and call_of(expr) is None:
            owner, attr = text.split(".")
            cls = p.class_named(owner) if owner not in p.imports else None
            if cls is not None:
                member = p.lookup(cls, attr)
                if member is not None and not member.ambiguous and member.function is not None and member.value is None:
                    if "staticmethod" in member.function.decorator_names:
                        return member.function, False
            if cls is not None or p.workspace is None:
                return None, False
            # (``kernels.add_bprop`` after ``from . import kernels``: another module's function, through the workspace)
        if expr.type in ("name", "power", "atom_expr"):
            resolved = resolve_function(p, expr)
            if resolved is not None and resolved.binding == "method" and not resolved.jit:
                owner_scope = scope_of(resolved.function.node)
                if owner_scope is not None and owner_scope.type != "classdef":
                    return resolved.function, False
        return None, False

    def _resolve_callable(self, expr) -> tuple[Function | None, bool]:
        p = self.program
        if expr.type == "lambdef":
            return Function(expr, "<lambda>"), False
        text = dotted(expr)
        if text is None or expr.type not in ("name", "power", "atom_expr"):
            return None, False
        if call_of(expr) is not None:
            return None, False
        parts = text.split(".")
        if len(parts) == 1:
            return None, False  # a name: resolve_function follows it (bounded; rebound names are unknown)
        if len(parts) == 2 and parts[0] == "self":
            cls_node = expr.search_ancestor("classdef")
            cls = next((c for c in p.classes if c.node is cls_node), None)
            if cls is not None:
                member = p.lookup(cls, parts[1])
                if member is not None and member.function is not None and not member.function.is_lambda:
                    decorators = member.function.decorator_names
                    if "staticmethod" in decorators or "classmethod" in decorators:
                        return None, False
                    return member.function, True
        return None, False

    @cached_property
    def call_index(self):
        from .callsites import build_call_index

        return build_call_index(self.program)

    @cached_property
    def mode_hint(self) -> str | None:
        return self.program.mode_hint()


# ops.Custom(func, out_shape=None, out_dtype=None, func_type="hybrid", bprop=None, reg_info=None)
_CUSTOM_PARAMS = ("func", "out_shape", "out_dtype", "func_type", "bprop", "reg_info")


def _bind_custom_arguments(positional: list, keywords: dict) -> dict:
    bound = {name: value for name, value in zip(_CUSTOM_PARAMS, positional)}
    bound.update({k: v for k, v in keywords.items() if k in _CUSTOM_PARAMS})
    return bound


_PY_TYPES = {"int", "float", "bool", "str", "tuple", "list", "Tuple", "List", "Sequence", "bytes"}


def _is_python_literal(node) -> bool:
    """A number, string, bool or a tuple/list display (of anything): not a Tensor."""
    t = node.type
    if t in ("number", "string", "strings"):
        return True
    if t == "keyword":
        return node.value in ("True", "False")
    if t == "factor" and node.children[-1].type == "number":
        return True
    if t == "atom" and node.children[0] in ("(", "["):
        return not (node.children[0] == "(" and len(node.children) == 3 and node.children[1].type != "testlist_comp")
    return False


_WORD_CHARACTERS = re.compile(r"\w+")
_BOTH_MODES = frozenset({"graph", "pynative"})
_GRAPH_ONLY = frozenset({"graph"})


def _foreign(member: Member, cls: ClassInfo) -> bool:
    """Whether ``member`` is bound in a class of another module than ``cls`` (``workspace.py``)."""
    return member.owner is not None and member.owner.program is not cls.program


def _arity(fn: Function) -> tuple:
    sig = Signature(fn, skip_self=True)
    return (len(sig.required_positional), len(sig.positional), sig.vararg is not None, sig.varkw is not None,
            len(sig.kwonly))


def _named_again(home: Program, fn: Function) -> bool:
    """Whether ``home`` (the module that defines ``fn``) names it anywhere but its ``def``: then a Cell or op of
    that module may use it, and its own analysis reports what is wrong with it."""
    import re

    top = fn.node
    while scope_of(top) is not None and scope_of(top).type != "file_input":
        top = scope_of(top)  # (a factory's inner def: the factory's name)
    name = top.name.value if top.type == "funcdef" else fn.name
    return len(re.findall(r"(?<![\w.])" + re.escape(name) + r"\b", home.text)) > 1


def _bound_to_def(member: Member) -> bool:
    """A def that is no property: what it resolves to (``Resolved(def)``) reads nothing of the program."""
    fn = member.function
    if fn is None or member.value is not None:
        return False
    names = fn.decorator_names
    return not ("property" in names or any(n.endswith(".setter") or n.endswith(".getter") for n in names))


def _is_none(node) -> bool:
    return node.type == "keyword" and node.value == "None"


def _statement_mentions(facts: dict, names: frozenset) -> tuple:
    """(name, mentions not after a dot, whether one is at the very start of the code) for each of ``names`` in a
    top-level statement (``facts`` of the program's layout: its code and words read)."""
    from .program import _word_hits

    found = []
    code = facts["code"]
    for name in names.intersection(facts["words"]):
        hits = _word_hits(facts, name)
        count = sum(1 for rel in hits if not rel or code[rel - 1] != ".")
        found.append((name, count, bool(hits) and hits[0] == 0))
    return tuple(found)
