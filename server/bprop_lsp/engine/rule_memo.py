"""Rule results per Cell, kept between versions of one document: a keystroke re-runs the Cell-scoped rules only
for the Cells whose facts changed.

A rule that declares ``per_cell = True`` promises to visit only ``ctx.cell_sites`` (and what ``cell_subjects``
derives from them) and to read, for a site, nothing but:

* the top-level statements of the classes in the site's MRO, of its bprop and construct, and (transitively) of
  every class of the file those statements name (child cells, ``Other.static``, their bases);
* the module's statements that are neither class statements nor lines of bare calls (imports, constants,
  helpers);
* the calls of the site's class (the call index, ``Cls(...)``);
* the settings and whether fixes are wanted.

The key of a site is a digest of exactly that (texts, not positions, apart from the call sites'), so a site hits
wherever it moved. Its drafts hold positions, though: each entry keeps the top-level statements (position and
text digest) its drafts point into, and a hit is used only while every one of them is still where it was with
the same text; else the site's rules run again. A site with no drafts points nowhere and hits wherever it moves.

Sites are run one at a time through a view of the Context whose ``cell_sites`` is that one site. That equals one
run over every site only while no two sites share a bprop function (rules deduplicate per function across
sites) and there is no ``ops.Custom`` site (BP028 deduplicates between the two): otherwise the memo stands aside.
"""
from __future__ import annotations

import bisect
import hashlib
import re

from .context import CellSite, Context
from .program import Program, scope_of

# Context entries derived from the site lists (``cell_subjects`` and the like): never shared between views.
_SITE_DERIVED = ("cell_sites", "custom_op_sites", "_cell_subjects", "_custom_subjects")
_FAILED = object()  # the rule raised for this site: the file gets none of its drafts, as in one run
_NONE: tuple = ()


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def statement_digest(program: Program, top) -> bytes:
    """A digest of one top-level statement's code (its prefix included), kept with the statement."""
    facts = program.statement_facts(top)
    found = facts.get("digest")
    if found is None:
        code = facts.get("code")
        if code is None:
            code = facts["code"] = top.get_code()
        found = facts["digest"] = _digest(code)
    return found


def _top(node):
    parent = getattr(node, "parent", None)
    while parent is not None and parent.type != "file_input":
        node, parent = parent, parent.parent
    return node if parent is not None else None


def _is_call_statement(node) -> bool:
    """A line of bare calls (``print(grad(net)(x))``, ``ms.set_context(...)``): it binds no name, so what a
    Cell-scoped rule can read of it is its calls of the Cell, which the Cell's key holds (the mode it sets is the
    engine's business, after the rules)."""
    return node.type == "simple_stmt" and all(
        c.type in ("power", "atom_expr", "newline") or (c.type == "operator" and c.value == ";") for c in node.children)


def _is_class_statement(node) -> bool:
    return node.type == "classdef" or (node.type == "decorated" and node.children[-1].type == "classdef")


class _Shared:
    """What every site's key and check reads from one analysis, computed once (lazily)."""

    def __init__(self, ctx: Context, settings_key: str):
        self.ctx = ctx
        p = self.program = ctx.program
        self.settings_key = settings_key
        children = p.module.children
        self.children = children
        self.order = {id(c): i for i, c in enumerate(children)}
        # The statements that are not class statements: their digests in order, and their indices (where a class
        # statement stands among them is part of a key; its absolute index is not).
        self.env_indices = []
        env = []
        for i, child in enumerate(children):
            if not _is_class_statement(child) and not _is_call_statement(child):
                self.env_indices.append(i)
                env.append(statement_digest(p, child))
        self.env = _digest(repr(env))
        # name -> what the class statements bind to it (assignments, defs, imports anywhere under them), in order:
        # the file's name tables (``assignments``, ``functions``, ``imports``) read them all, so a site reading a
        # name depends on every class statement binding it, not only on those its own statements name.
        self.bindings: dict[str, list] = {}
        for i, child in enumerate(children):
            if _is_class_statement(child):
                for name, entries in _bindings(p, child).items():
                    self.bindings.setdefault(name, []).extend(entries)
        self.class_tops: dict[str, list] = {}
        for cls in p.classes:
            top = _top(cls.node)
            if top is not None:
                self.class_tops.setdefault(cls.name, []).append(top)
        self.newline = p.index.newline()
        self._ends = None
        self._current = None
        self._summaries: dict = {}

    def words(self, top) -> frozenset:
        facts = self.program.statement_facts(top)
        words = facts.get("words")
        if words is None:
            from .program import _WORD
            import sys

            code = facts.get("code")
            if code is None:
                code = facts["code"] = top.get_code()
            words = facts["words"] = frozenset(map(sys.intern, _WORD.findall(code)))
        return words

    def summary(self, name: str, decorators: bool) -> bytes:
        """A digest of ``_summary`` of the class statements' bindings of ``name`` (once per analysis)."""
        key = (name, decorators)
        found = self._summaries.get(key)
        if found is None:
            found = self._summaries[key] = _digest(repr(_summary(self.bindings[name], decorators)))
        return found

    def decorator_words(self, top) -> frozenset:
        facts = self.program.statement_facts(top)
        found = facts.get("decorator_words")
        if found is None:
            code = facts.get("code")
            if code is None:
                code = facts["code"] = top.get_code()
            found = facts["decorator_words"] = frozenset(
                part for m in _DECORATOR.finditer(code) for part in m.group(1).split("."))
        return found

    def ref_of(self, line: int, column: int) -> tuple | None:
        """(start, end, digest) of the top-level statement holding 0-based ``(line, column)``; None past the end."""
        if self._ends is None:
            self._ends = [c.end_pos for c in self.children]
        i = bisect.bisect_right(self._ends, (line + 1, column))
        if i >= len(self.children):
            return None
        child = self.children[i]
        return child.start_pos, child.end_pos, statement_digest(self.program, child)

    def still_there(self, ref: tuple) -> bool:
        if self._current is None:
            self._current = {(c.start_pos, c.end_pos): c for c in self.children}
        child = self._current.get((ref[0], ref[1]))
        return child is not None and statement_digest(self.program, child) == ref[2]


class RuleMemo:
    """Per-site drafts of the Cell-scoped rules, for one document (owned by its ``ParsedDocument``): two
    generations, so the sites of the last few versions hit and the memo stays bounded."""

    SIZE = 512  # entries before a generation turns over (at least four per site of the document)

    def __init__(self) -> None:
        self.new: dict = {}
        self.old: dict = {}
        # For tests and logs: sites whose rules ran / were read back in the last analysis.
        self.ran = 0
        self.reused = 0

    def clear(self) -> None:
        self.new, self.old = {}, {}

    def drafts(self, ctx: Context, rules: list, settings_key: str, run) -> dict | None:
        """code -> the drafts of each rule of ``rules`` over every cell site, in site order (what one
        ``rule.check(ctx)`` yields, before the engine's deduplication), reading unchanged sites back; None when
        the memo cannot stand in for one run (see the module docstring). ``run(rule, ctx)``: the rule's drafts
        for a context, or None when it raised."""
        sites = ctx.cell_sites
        if ctx.custom_op_sites:
            return None
        functions = [id(s.function.node) for s in sites if s.function is not None]
        if len(set(functions)) != len(functions):
            return None
        shared = _Shared(ctx, settings_key)
        self.ran = self.reused = 0
        per_site = []
        for site in sites:
            key = self._key(shared, site)
            entry = self.new.get(key)
            if entry is None:
                entry = self.old.get(key)
                if entry is not None:
                    self.new[key] = entry
            if entry is not None and all(shared.still_there(ref) for ref in entry[1]):
                self.reused += 1
                per_site.append(entry[0])
                continue
            self.ran += 1
            view = _view(ctx, site)
            results = {}
            refs: set = set()
            keep = True
            for rule in rules:
                found = run(rule, view)
                if found is None:
                    results[rule.code] = _FAILED
                    continue
                if not found:
                    results[rule.code] = _NONE
                    continue
                stored = []
                for draft in found:
                    where = _refs(shared, draft)
                    if where is None:
                        keep = False
                    else:
                        refs |= where
                    stored.append(_detached(draft))
                results[rule.code] = tuple(stored)
            _share(ctx, view)
            if keep:
                self.new[key] = (results, frozenset(refs))
            per_site.append(results)
        if len(self.new) > max(self.SIZE, 4 * len(sites)):
            self.old, self.new = self.new, {}
        out: dict = {}
        for rule in rules:
            drafts = []
            for results in per_site:
                found = results.get(rule.code, _NONE)
                if found is _FAILED:
                    drafts = None
                    break
                drafts += found
            out[rule.code] = drafts
        return out

    def _key(self, shared: _Shared, site: CellSite) -> bytes:
        p = shared.program
        seeds = []
        for k in p.mro(site.cls):
            if isinstance(k, str):
                continue
            seeds.append(k.node)
        for node in (getattr(site.bprop, "node", None), site.function.node if site.function is not None else None,
                     site.construct.node if site.construct is not None else None):
            if node is not None:
                seeds.append(node)
        tops: dict[int, object] = {}
        todo = []
        for node in seeds:
            top = _top(node)
            if top is not None and id(top) not in tops:
                tops[id(top)] = top
                todo.append(top)
        # Every class the statements name, and the classes theirs name, ...
        class_tops = shared.class_tops
        while todo:
            top = todo.pop()
            for name in shared.words(top).intersection(class_tops):
                for other in class_tops[name]:
                    if id(other) not in tops:
                        tops[id(other)] = other
                        todo.append(other)
        order, env_indices = shared.order, shared.env_indices
        statements = sorted((order.get(id(t), -1), statement_digest(p, t)) for t in tops.values())
        statements = [(bisect.bisect_left(env_indices, i), d) for i, d in statements]
        calls = [(c.node.start_pos, c.node.get_code(include_prefix=False))
                 for c in shared.ctx.call_index.sites(site.cls)]
        made = [(_start(n), _code(n)) for n in p.calls_of(site.cls.name)]
        # The names the site's statements and calls read, and what the class statements elsewhere bind to them.
        words = set()
        decorators = set()
        for t in tops.values():
            words |= shared.words(t)
            decorators |= shared.decorator_words(t)
        for _pos, code in calls + made:
            words.update(_WORDS.findall(code))
        summary = shared.summary
        bound = [(name, summary(name, name in decorators)) for name in sorted(words.intersection(shared.bindings))]
        what = (shared.settings_key, shared.newline, site.cls.name, _relative(site.cls.node),
                sorted(site.modes), site.external_construct, sorted(site.call_counts or ()),
                statements, shared.env, bound, calls, made)
        return _digest(repr(what))


def _bindings(program: Program, top) -> dict:
    """name -> what one top-level statement binds to it, in order, each as (kind, digest of its code): ``=``
    (an assignment naming it among its targets), ``def`` (a function not directly in a class body), ``method``
    (a def in a class body), ``import``. Kept with the statement."""
    facts = program.statement_facts(top)
    found = facts.get("bindings")
    if found is None:
        entry = program._statements.get(id(top))
        imports, _classes, funcdefs, assignments = entry[1] if entry is not None and entry[0] is top else \
            ([], [], [], [])
        parts: dict[str, list] = {}
        for node in assignments:
            # (Every name among the targets, whatever the form: more than ``Program.assignments`` reads.)
            digest = None
            for target in node.children[:-1]:
                for name in _names(target):
                    if digest is None:
                        digest = _digest(node.get_code(include_prefix=False))
                    parts.setdefault(name, []).append(("=", digest))
        for node in funcdefs:
            scope = scope_of(node)
            kind = "method" if scope is not None and scope.type == "classdef" else "def"
            parts.setdefault(node.name.value, []).append((kind, _digest(node.get_code(include_prefix=False))))
        for node in imports:
            digest = _digest(node.get_code(include_prefix=False))
            for name in node.get_defined_names():
                parts.setdefault(name.value, []).append(("import", digest))
        found = facts["bindings"] = parts
    return found


def _summary(entries: list, decorators: bool) -> tuple:
    """What of a name's bindings in class statements (outside the site's own) a Cell-scoped rule can read: the
    file's name tables read an assignment's value only when it is the name's one assignment, a method's code only
    as a decorator (elsewhere only whether one exists), and any other def or import in full."""
    assigned = sum(1 for kind, _ in entries if kind == "=")
    return tuple((kind, None if (kind == "=" and assigned > 1) or (kind == "method" and not decorators) else digest)
                 for kind, digest in entries)


from .program import _WORD as _WORDS  # (the words of a statement, as Program reads them)
_DECORATOR = re.compile(r"@\s*([A-Za-z_][\w.]*)")


def _names(target):
    """The names an assignment target binds: a name, or the names of a tuple or list of targets (not
    ``self.x`` or ``a[i]``)."""
    if target.type == "name":
        yield target.value
    elif target.type in ("atom", "testlist_star_expr", "exprlist", "testlist_comp", "star_expr", "testlist"):
        for child in target.children:
            yield from _names(child)


def _relative(node) -> tuple:
    """Where ``node`` sits within its top-level statement (which class of the statement the site is)."""
    top = _top(node)
    if top is None:
        return node.start_pos
    return node.start_pos[0] - top.start_pos[0], node.start_pos[1]


def _start(node):
    return node.children[0].start_pos if hasattr(node, "children") else node.start_pos


def _code(node) -> str:
    return "".join(c.get_code(include_prefix=i > 0) for i, c in enumerate(node.children))


def _view(ctx: Context, site: CellSite) -> Context:
    """``ctx`` as seen by a run over ``site`` alone: its caches shared, the site lists (and what derives from
    them) its own."""
    view = object.__new__(type(ctx))
    view.__dict__.update(ctx.__dict__)
    for name in _SITE_DERIVED:
        view.__dict__.pop(name, None)
    view.__dict__["cell_sites"] = [site]
    view.__dict__["custom_op_sites"] = []
    return view


def _share(ctx: Context, view: Context) -> None:
    """Caches a view filled (signature views, class facts …) handed back to the Context for the next views."""
    for name, value in view.__dict__.items():
        if name not in _SITE_DERIVED and name not in ctx.__dict__:
            ctx.__dict__[name] = value


def _refs(shared: _Shared, draft) -> set | None:
    """The top-level statements (start, end, digest) the draft's positions lie in; None when one lies past the
    end of the tree."""
    positions = [draft.span.start, draft.span.end]
    if draft.fix is not None:
        for edit in draft.fix.edits:
            positions += (edit.span.start, edit.span.end)
    for related in draft.related:
        positions += (related.span.start, related.span.end)
    found = set()
    for pos in positions:
        ref = shared.ref_of(pos.line, pos.column)
        if ref is None:
            return None
        found.add(ref)
    if draft.noqa_line is not None:
        ref = shared.ref_of(draft.noqa_line, 0)
        if ref is None:
            return None
        found.add(ref)
    return found


class _Modes:
    """What the engine reads of a draft's subject once the analysis that made it is gone: its modes (a stored
    draft must not keep that analysis's sites and nodes alive)."""

    __slots__ = ("modes",)

    def __init__(self, modes):
        self.modes = modes


def _detached(draft):
    from dataclasses import replace

    modes = getattr(draft.subject, "modes", None)
    return replace(draft, subject=_Modes(modes) if modes is not None else None)
