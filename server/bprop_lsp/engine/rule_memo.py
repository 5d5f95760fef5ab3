"""Rule results per Cell, kept between versions of one document: a keystroke re-runs the Cell-scoped rules only
for the Cells whose facts changed.

A rule that declares ``per_cell = True`` promises to visit only ``ctx.cell_sites`` (and what ``cell_subjects``
derives from them) and to read, for a site, nothing but:

* the top-level statements of the classes in the site's MRO, of its bprop and construct, and (transitively) of
  every class of the file those statements name (child cells, ``Other.static``, their bases);
* the calls of the site's class (the call index) and the statements naming it (``Cls(...)``);
* the file's name tables (``assignments``, ``functions``, ``imports``) for the names those statements and calls
  hold, as the readers read them (``_Shared.summary``), and the imports whole;
* where those statements stand among the module's other statements (not lines of bare calls);
* the settings and whether fixes are wanted.

The key of a site is a digest of exactly that (texts, not positions, apart from the call sites'), and of which of the
statements read holds its class and where in it (a class is told by what it is, never by its name), so a site hits
wherever it moved. Its drafts hold positions, though: each entry keeps, for every top-level statement its drafts
point into, where that statement's code starts and its digest; a hit is used only while statements with those
digests still start there (where the statement before ends, kept with each statement while no line above it
moves; it holds whichever way the tree was re-parsed), and where the site's own class's statement started
(two copies of one statement have one key: drafts are read back only by the class at the place that made them),
else the site's rules run again. A site with no drafts points nowhere and hits wherever it moves.

Reading every site's key costs a pass over what each site reads, on every keystroke: so a key is itself kept from
one analysis to the next while nothing it read changed (``_reused_key``; only when one statement was replaced in
place by one of the same kind, no line moved and the settings and imports are the same): the replaced statement
was none of those it read, the new one names neither its class nor a class that brought a statement in, no name
it read says something else in the tables, and its MRO, bprop, construct and call sites are the same nodes.

The whole file's part of the keys (which statement stands where, the tops of the classes by name, the names the
tables hold, the imports: ``_Basis``) and what ``forget`` compares are patched from the last analysis's when a
keystroke replaced one statement in place (``program.StatementDelta``) and the memo's state is that analysis's
(the memo stands aside for some analyses: then it is joined again): only that statement's part is swapped.

Sites are run one at a time through a view of the Context whose ``cell_sites`` is that one site. That equals one
run over every site only while no two sites share a bprop function (rules deduplicate per function across
sites) and there is no ``ops.Custom`` site (BP028 deduplicates between the two): otherwise the memo stands aside.
"""
from __future__ import annotations

import bisect
import hashlib
import re
from typing import NamedTuple

from .context import CellSite, Context
from .parsing import POSITIONAL
from .program import _assignment_pairs, _functions_of
from .trees import WORD as _WORD, scope_of, statement_code, statement_words

# Context entries derived from the site lists (``cell_subjects`` and the like): never shared between views.
_SITE_DERIVED = ("cell_sites", "custom_op_sites", "_cell_subjects", "_custom_subjects")
_FAILED = object()  # the rule raised for this site: the file gets none of its drafts, as in one run
_DECORATOR = re.compile(r"@\s*([A-Za-z_][\w.]*)")
# Where a statement starts, kept in its facts: a positional fact (dropped when lines move above it).
_PLACE = POSITIONAL + "memo_place"


class _Known(NamedTuple):
    """A top-level statement of the last analysis, as ``RuleMemo.forget`` compares it with the next."""

    facts: dict
    bound: frozenset  # the names it puts in the name tables (``_bound_names``)
    index: int  # its place among the module's statements
    node: object
    scan: tuple  # its scan: (imports, classes, functions, assignments)


class _Delta(NamedTuple):
    """What changed since the last analysis, as far as a kept key cares (``_reused_key``)."""

    steady: bool  # at most one statement replaced, in place, by one of the same kind defining the same classes
    gone: frozenset  # ids of the facts of the statements replaced or removed
    new_words: frozenset  # the words of the statements put in
    changed: frozenset  # the names whose summary changed, or which joined or left the tables
    dirty: frozenset  # the names bound by a statement put in or taken out


class _KeptKey(NamedTuple):
    """A site's key with what it was computed from and read (``RuleMemo._key``)."""

    cls: object  # the site's class (held: a new class cannot take its id)
    pre: tuple  # ``_pre_key``
    key: bytes
    deps: frozenset  # ids of the facts of the statements it read
    watch: frozenset  # its class's name and those of the classes that brought a statement in
    read: tuple  # the word sets of the statements it read, and its calls' and decorators' words
    decorators: frozenset


_NO_DELTA = _Delta(False, frozenset(), frozenset(), frozenset(), frozenset())


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _facts_digest(facts: dict, top) -> bytes:
    """A digest of one top-level statement's code (its prefix included), kept with its facts."""
    found = facts.get("digest")
    if found is None:
        found = facts["digest"] = _digest(statement_code(facts, top))
    return found


def _top(node):
    parent = getattr(node, "parent", None)
    while parent is not None and parent.type != "file_input":
        node, parent = parent, parent.parent
    return node if parent is not None else None


def _kind(node) -> str:
    """"class" (a class statement), "calls" (a line of bare calls: ``print(grad(net)(x))``, ``ms.set_context(...)``:
    it binds no name, so what a Cell-scoped rule can read of it is its calls of the Cell, which the Cell's key
    holds; the mode it sets is the engine's business, after the rules) or "env" (any other statement)."""
    if node.type == "classdef" or (node.type == "decorated" and node.children[-1].type == "classdef"):
        return "class"
    if node.type == "simple_stmt" and all(c.type in ("power", "atom_expr", "newline")
                                          or (c.type == "operator" and c.value == ";") for c in node.children):
        return "calls"
    return "env"


class _Shared:
    """What every site's key reads from one analysis, computed once."""

    def __init__(self, ctx: Context, settings_key: str, memo: "RuleMemo"):
        self.ctx = ctx
        p = self.program = ctx.program
        self.settings_key = settings_key
        self.entries = p._entries  # (top-level node, scan, facts), in order
        # The whole file's part, patched from the last analysis's when one statement was replaced in place since
        # (``program.StatementDelta``) and the memo's state is that analysis's; else joined afresh.
        before, memo._basis = memo._basis, None  # (none kept should anything below raise)
        delta = p.delta
        if delta is None or before is None or delta.previous.__dict__.get("_entries") is not before.entries:
            delta = None
        basis = _patched_basis(before, p, delta) if delta is not None else None
        if basis is None:
            delta = None
            basis = _basis_of(p)
        self.index = basis.index
        # The indices of the "env" statements: where a class statement stands among them is part of a key (its
        # absolute index is not).
        self.env_indices = basis.env_indices
        # (The env statements themselves are not in a key: what a rule reads of them goes through the name tables,
        # summarised per name, and the imports, whole: the ops alias is looked for among all of them.)
        self.imports = basis.imports_digest
        self.class_tops = basis.class_tops
        self.class_names = basis.class_names
        self.newline = p.index.newline()
        self.table_names = basis.table_names
        self.line_count = basis.line_count
        # Whether a value is bound at module level, by node (a name's values are read again whenever a statement
        # binding it changed: most of them are the same nodes).
        self._levels = memo.levels(basis.values)
        # What the name tables say of a name, and a statement's names joined, kept between analyses: a name's
        # entry stays while what the tables say of it is the same (only a statement binding the name can change
        # that: such names are read again and compared).
        self._summaries, self._tables = memo.forget(self.entries, self.table_names, self._summary_of, delta)
        self._naming: dict | None = None
        self._offsets = None
        memo._basis = basis

    def facts(self, top) -> dict:
        i = self.index.get(id(top))
        if i is None or self.entries[i][0] is not top:
            return {}  # not a statement of this tree (a synthetic class's view): nothing kept
        return self.entries[i][2]

    def words(self, facts: dict, top) -> frozenset:
        return statement_words(facts, top)

    def decorator_words(self, facts: dict, top) -> frozenset:
        found = facts.get("decorator_words")
        if found is None:
            found = facts["decorator_words"] = frozenset(
                part for m in _DECORATOR.finditer(statement_code(facts, top)) for part in m.group(1).split("."))
        return found

    def naming(self, name: str) -> list | None:
        """(facts, node) of the statements whose words hold ``name`` (a site's class), in order; None when the words
        cannot tell (``Program._layout``). Read for every site's class in one pass over the statements."""
        if self._naming is None:
            layout = self.program._layout
            if layout is None:
                return None
            wanted = frozenset(site.cls.name for site in self.ctx.cell_sites)
            self._naming = {}
            for (facts, _offset), (child, _, _) in zip(layout, self.entries):
                for hit in wanted & facts["words"]:
                    self._naming.setdefault(hit, []).append((facts, child))
        return self._naming.get(name, [])

    def tables(self, facts: dict, top) -> bytes:
        """A digest of the ``summary`` of each of a statement's words that the name tables hold (kept between
        analyses like the summaries: many sites read the same statements)."""
        found = self._tables.get(id(facts))
        if found is None or found[0] is not facts:
            summary = self.summary
            found = (facts, hashlib.blake2b(b"".join(
                name.encode() + summary(name, False) for name in sorted(self.words(facts, top) & self.table_names)),
                digest_size=16).digest())
            if self.facts(top) is facts:  # (a statement of this analysis: ``forget`` keeps only theirs)
                self._tables[id(facts)] = found
        return found[1]

    def summary(self, name: str, decorators: bool) -> bytes:
        """What the file's name tables say of ``name`` as the readers read them: how many ``name = ...`` and the
        value when there is one, each ``def name`` (a method's code only when it is used as a decorator: elsewhere
        whether one exists is all that is read) and the import (once per analysis)."""
        key = (name, decorators)
        found = self._summaries.get(key)
        if found is None:
            found = self._summaries[key] = self._summary_of(name, decorators)
        return found

    def _summary_of(self, name: str, decorators: bool) -> bytes:
        """``summary``, read afresh."""
        p = self.program
        values = p.assignments.get(name, ())
        defs = []
        for fn in p.functions.get(name, ()):
            scope = scope_of(fn.node)
            if scope is not None and scope.type == "classdef" and not decorators:
                defs.append("method")
            else:
                defs.append(p.node_fact(fn.node, "code_digest", _code_digest))
        # (A value is read when it is the name's only one, or, by ``values.py``, when it is bound in the scope
        # being resolved: the module's, or the site's own statements, which the key holds whole. Of the values
        # bound elsewhere, readers tell none, one and several apart (``len(values) == 1``), never how many: a
        # keystroke renaming a local of one method (``y0`` bound in every Cell's construct) says the same of it.)
        if len(values) == 1:
            read = [p.node_fact(values[0], "code_digest", _code_digest)]
        else:
            levels = self._levels
            read = ["several" if values else "none"]
            for v in values:
                found = levels.get(id(v))
                if found is None or found[0] is not v:
                    found = levels[id(v)] = (v, _at_module_level(v))
                if found[1]:
                    read.append(p.node_fact(v, "code_digest", _code_digest))
        what = (read, defs, p.imports.get(name))
        return _digest(repr(what))

    def where(self, line: int, column: int) -> tuple | None:
        """(position where its code starts, digest) of the top-level statement holding 0-based ``(line,
        column)``; None past the end or when the statements' layout cannot tell (``Program._layout``)."""
        layout = self._layout()
        if layout is None:
            return None
        offsets, _ = layout
        from .model import Position

        i = bisect.bisect_right(offsets, self.program.index.offset(Position(line, column))) - 1
        if i < 0:
            return None
        return self._place(i)

    def place_of(self, node) -> tuple | None:
        """``_place`` of the top-level statement holding ``node``; None when it is not one of this analysis's."""
        top = _top(node)
        i = self.index.get(id(top)) if top is not None else None
        if i is None or self.entries[i][0] is not top:
            return None
        return self._place(i)

    def still_there(self, ref: tuple) -> bool:
        """Whether a statement with that digest still starts where it did (so every position in it holds)."""
        if self._layout() is None:
            return False
        # The statements start in order: the one starting there is found by bisection, reading a few places only.
        i = bisect.bisect_left(_Places(self), ref[:2])
        return i < len(self.entries) and self._place(i) == ref

    def _layout(self):
        if self._offsets is None:
            layout = self.program._layout
            self._offsets = False if layout is None else ([offset for _, offset in layout], layout)
        return self._offsets or None

    def _place(self, i: int) -> tuple:
        """(line, column, digest): where statement ``i``'s code (its prefix included) starts, which is where the
        statement before it ends (read from the tree, and kept with the statement while no line above it is
        added or removed: no line table of the whole file is needed), and its digest."""
        child, _, facts = self.entries[i]
        found = facts.get(_PLACE)
        if found is None:
            if i:
                line, column = self.entries[i - 1][0].end_pos
                line -= 1
            else:
                line, column = 0, 0
            found = facts[_PLACE] = (line, column, _facts_digest(facts, child))
        return found


class _Basis(NamedTuple):
    """The whole file's part of every site's key, from one analysis (``_Shared``), kept by the memo for the next
    analysis to patch when a keystroke replaced one statement in place (``_patched_basis``)."""

    entries: list  # the program's (top-level node, scan, facts), in order (``Program._entries``: the list itself)
    index: dict  # id(top-level node) -> its place among them
    env_indices: list  # the places of the "env" statements (``_kind``)
    imports: dict  # the program's imports
    imports_digest: bytes
    class_tops: dict  # class name -> the top-level statement of each class of that name, in the classes' order
    class_names: frozenset
    table_names: frozenset  # the names the name tables hold
    values: int  # how many values the assignments table holds
    line_count: int


def _basis_of(p) -> _Basis:
    """The ``_Basis`` of program ``p``, joined over every statement."""
    entries = p._entries
    index = {id(child): i for i, (child, _, _) in enumerate(entries)}
    env_indices = []
    for i, (child, _, facts) in enumerate(entries):
        if _memo_kind(facts, child) == "env":
            env_indices.append(i)
    class_tops: dict[str, list] = {}
    for cls in p.classes:
        top = _top(cls.node)
        if top is not None:
            class_tops.setdefault(cls.name, []).append(top)
    return _Basis(entries, index, env_indices, p.imports, _digest(repr(sorted(p.imports.items()))), class_tops,
                  frozenset(class_tops), frozenset(p.assignments).union(p.functions, p.imports),
                  sum(len(v) for v in p.assignments.values()), p.index.line_count)


def _patched_basis(before: _Basis, p, delta) -> _Basis | None:
    """``_basis_of(p)``, from ``before`` (the basis of ``delta.previous``'s program) with the replaced
    statement's part swapped (``program.StatementDelta``: every other statement is the same node at the same place,
    its classes the same objects); None when that cannot be told from the two statements alone."""
    k = delta.index
    old_child, old_scan, old_facts = delta.old
    new_child, new_scan, new_facts = delta.new
    if not (0 <= k < len(before.entries)) or before.entries[k] is not delta.old or p._entries[k] is not delta.new:
        return None
    index = dict(before.index)
    del index[id(old_child)]
    index[id(new_child)] = k
    env_indices = before.env_indices
    old_env, new_env = _memo_kind(old_facts, old_child) == "env", _memo_kind(new_facts, new_child) == "env"
    if old_env != new_env:
        env_indices = list(env_indices)
        at = bisect.bisect_left(env_indices, k)
        if new_env:
            env_indices.insert(at, k)
        else:
            del env_indices[at]
    # (The same imports unless either statement imports: compared, not assumed.)
    imports = p.imports
    same_imports = imports == before.imports
    imports_digest = before.imports_digest if same_imports else _digest(repr(sorted(imports.items())))
    # The tops of the replaced statement's classes (the old ones in the old statement, the new ones in the new), in
    # their run among the tops of their name; the other classes' tops are the same nodes.
    class_tops, class_names = before.class_tops, before.class_names
    named = {cls.name for cls in old_scan[1]}.union(cls.name for cls in new_scan[1])
    if named:
        class_tops = dict(class_tops)
        for name in named:
            tops = [top for top in class_tops.get(name, ()) if top is not old_child]
            news = []
            for cls in new_scan[1]:
                if cls.name == name:
                    top = _top(cls.node)
                    if top is not None:
                        if top is not new_child:
                            return None
                        news.append(top)
            if news:
                at = 0
                while at < len(tops) and index.get(id(tops[at]), k) < k:
                    at += 1
                tops[at:at] = news
            if tops:
                class_tops[name] = tops
            else:
                class_tops.pop(name, None)
        if len(class_tops) != len(class_names) or not class_names.issuperset(class_tops):
            class_names = frozenset(class_tops)
    # A name joins or leaves the tables only as one the statements bind (their imports: the imports whole).
    table_names = before.table_names
    old_pairs, new_pairs = _assignment_pairs(delta.old), _assignment_pairs(delta.new)
    bound = {name for name, _ in old_pairs}.union(name for name, _ in new_pairs)
    bound.update(fn.name for fn in _functions_of(delta.old))
    bound.update(fn.name for fn in _functions_of(delta.new))
    if not same_imports:
        bound.update(before.imports)
        bound.update(imports)
    assignments, functions = p.assignments, p.functions
    joined = {name for name in bound if name in assignments or name in functions or name in imports}
    if not table_names.issuperset(joined) or not joined.issuperset(bound & table_names):
        table_names = (table_names - bound) | joined
    values = before.values - len(old_pairs) + len(new_pairs)
    return _Basis(p._entries, index, env_indices, imports, imports_digest, class_tops, class_names, table_names,
                  values, before.line_count)


def _memo_kind(facts: dict, child) -> str:
    """``_kind`` of a top-level statement, kept with its facts."""
    kind = facts.get("memo_kind")
    if kind is None:
        kind = facts["memo_kind"] = _kind(child)
    return kind


class _Places:
    """The places (line, column) where the statements of an analysis start, in order, read on demand."""

    __slots__ = ("shared",)

    def __init__(self, shared: _Shared):
        self.shared = shared

    def __len__(self) -> int:
        return len(self.shared.entries)

    def __getitem__(self, i: int) -> tuple:
        return self.shared._place(i)[:2]


def _bound_names(facts: dict, top, scanned) -> frozenset:
    """The names a top-level statement puts in the name tables: its ``name = ...`` targets, its defs (methods and
    nested ones included) and, for a statement with imports, every word in it (an import's names, read simply)."""
    names = {name for name, _ in facts.get("assignments", ())}
    names.update(fn.name for fn in facts.get("functions", ()))
    if "assignments" not in facts or "functions" not in facts or scanned[0]:
        names.update(statement_words(facts, top))
    return frozenset(names)


def _contributions(facts: dict) -> dict:
    """name -> what one top-level statement puts in the name tables under it, as ``_Shared.summary`` reads it: each
    value (whether at module level, and its code) and each def (a method's only as such, other defs' code), in
    order. Kept with the statement's facts."""
    found = facts.get("memo_contributions")
    if found is None:
        found = {}
        for name, value in facts.get("assignments", ()):
            found.setdefault(name, []).append(("=", _at_module_level(value), value.get_code(include_prefix=False)))
        for fn in facts.get("functions", ()):
            scope = scope_of(fn.node)
            found.setdefault(fn.name, []).append(
                "method" if scope is not None and scope.type == "classdef" else fn.node.get_code(include_prefix=False))
        facts["memo_contributions"] = found
    return found


def _at_module_level(node) -> bool:
    scope = scope_of(node)
    return scope is None or scope.type == "file_input"


def _code_digest(node) -> bytes:
    return _digest(node.get_code(include_prefix=False))


def _changed_statements(known: dict, entries: list) -> tuple[dict, list, list]:
    """(id(facts) -> ``_Known`` of each statement of ``entries``, the ``_Known`` of those that are not in ``known``
    (the last analysis's), those of ``known``'s that are no longer there)."""
    current = {}
    added = []
    for i, (child, scanned, facts) in enumerate(entries):
        entry = known.get(id(facts))
        if entry is None or entry.facts is not facts:
            entry = _Known(facts, _bound_names(facts, child, scanned), i, child, scanned)
            added.append(entry)
        current[id(facts)] = entry
    removed = [entry for key, entry in known.items()
               if current.get(key) is None or current[key].facts is not entry.facts]
    return current, added, removed


def _swapped_statement(known: dict, delta) -> tuple[dict, list, list] | None:
    """``_changed_statements`` when ``known`` holds the statements of ``delta.previous`` (one replaced in place
    since): the replaced one out, its replacement in; None when ``known`` does not hold the replaced one."""
    old_child, _old_scan, old_facts = delta.old
    child, scanned, facts = delta.new
    gone = known.get(id(old_facts))
    if gone is None or gone.facts is not old_facts or gone.node is not old_child or facts is old_facts \
            or id(facts) in known:
        return None
    entry = _Known(facts, _bound_names(facts, child, scanned), delta.index, child, scanned)
    current = dict(known)
    del current[id(old_facts)]
    current[id(facts)] = entry
    return current, [entry], [gone]


def _kept_tables(tables: dict, current: dict, changed: set, delta) -> dict:
    """The statement tables (``_Shared.tables``) still good: those of the statements still there (a table is kept
    only for a statement of its analysis) holding no name whose summary ``changed``. With ``delta`` (the tables
    are of ``delta.previous``'s statements), only the replaced statement's is not there."""
    if delta is not None and not changed:
        tables.pop(id(delta.old[2]), None)
        return tables
    return {k: v for k, v in tables.items() if k in current and current[k].facts is v[0]
            and v[0]["words"].isdisjoint(changed)}


class RuleMemo:
    """Per-site drafts of the Cell-scoped rules, for one document (owned by its ``ParsedDocument``): two
    generations, so the sites of the last few versions hit and the memo stays bounded."""

    SIZE = 512  # entries before a generation turns over (at least four per site of the document)
    # Below this many Cells the rules run directly: the memo's keys read the whole file's name tables, which costs
    # more than running the rules for a few Cells (bench_server's one-Cell 10,000-line file: 24 -> 43 ms a keystroke
    # with the memo). Tests set it to 0 to exercise the memo on small files.
    min_sites = 16

    def __init__(self) -> None:
        self.new: dict = {}
        self.old: dict = {}
        # For tests and logs: sites whose rules ran / were read back in the last analysis.
        self.ran = 0
        self.reused = 0
        self.keys_kept = 0  # sites whose key was kept from the last analysis

        self._summaries: dict = {}
        self._tables: dict = {}
        self._known: dict = {}  # id(facts) -> _Known, the statements of the last analysis
        self._table_names: frozenset = frozenset()  # the names the last analysis's tables held
        # id(class) -> _KeptKey of the last analysis's sites, what changed since (``forget``) and what the whole
        # file's part of a key was (``_steady``).
        self._keys: dict = {}
        self._delta = _NO_DELTA
        self._globals: tuple | None = None
        self._levels: dict = {}
        # The whole file's part of the keys of the last analysis (``_Basis``), for the next to patch.
        self._basis: _Basis | None = None
        # code -> the rule object whose drafts the entries hold under that code (kept alive, so never mistaken for
        # another): drafts are stored by code, and a rule set handing in another object for a code starts afresh.
        self._rules: dict = {}

    def clear(self) -> None:
        self.new, self.old = {}, {}
        self._summaries, self._tables, self._known = {}, {}, {}
        self._table_names = frozenset()
        self._keys, self._globals = {}, None
        self._levels = {}
        self._basis = None
        self._rules = {}

    def levels(self, values: int) -> dict:
        """id(value node) -> (node, bound at module level), kept between analyses (bounded by the file's values)."""
        if len(self._levels) > 2 * values + 64:
            self._levels = {}
        return self._levels

    def forget(self, entries: list, table_names: frozenset, summary_of, delta=None) -> tuple[dict, dict]:
        """The name summaries and statement tables (see ``_Shared``) still good for the statements ``entries`` of
        an analysis whose tables hold ``table_names``; ``summary_of(name, decorators)`` reads a summary afresh.
        ``delta``: the ``program.StatementDelta`` from the last analysis's statements (those the memo knows), when
        one statement was replaced in place (then only that one is compared).

        A summary can only change with a statement binding the name (its assignments, defs and imports are
        what it reads): the names bound by every added, changed or removed statement are read again, and a
        statement's table is dropped when a name in it now says something else (or joined or left the tables).
        Typing in a method binds its locals anew (``y0``, ``out``), which most Cells' statements hold too, but
        says the same of them: the other statements' tables stay."""
        known = self._known
        found = _swapped_statement(known, delta) if delta is not None else None
        if found is None:
            delta = None
            found = _changed_statements(known, entries)
        current, added, removed = found
        dirty: set = set()
        for entry in added:
            dirty |= entry.bound
        for entry in removed:
            dirty |= entry.bound
        self._known = current
        old_names, self._table_names = self._table_names, table_names
        # One statement in the place of another (typing in it).
        swap = len(added) == 1 and len(removed) == 1 and added[0].index == removed[0].index
        changed = set()
        if dirty:
            # Neither importing: a name the old and the new statement bind alike keeps its summary without reading it
            # again (its values elsewhere are the same nodes, in the same order).
            swapped = None
            if swap and not added[0].scan[0] and not removed[0].scan[0]:
                swapped = (_contributions(removed[0].facts), _contributions(added[0].facts))
            summaries = self._summaries
            for name in dirty:
                summaries.pop((name, True), None)  # read by keys alone, never by a table: read again on demand
                if (name in old_names) != (name in table_names):
                    changed.add(name)
                    summaries.pop((name, False), None)
                    continue
                if swapped is not None and swapped[0].get(name) == swapped[1].get(name):
                    continue
                old = summaries.get((name, False))
                if old is not None:
                    new = summaries[(name, False)] = summary_of(name, False)
                    if new != old:
                        changed.add(name)
        if dirty or removed:  # (a table is kept only for a statement still there)
            self._tables = _kept_tables(self._tables, current, changed, delta)
        # What a key kept from the last analysis must not have read (``_reused_key``).
        steady = not added and not removed or (
            swap and added[0].facts.get("memo_kind") == removed[0].facts.get("memo_kind") is not None
            and _class_names(added[0]) == _class_names(removed[0]))
        self._delta = _Delta(steady, frozenset(id(entry.facts) for entry in removed),
                             frozenset().union(*(statement_words(entry.facts, entry.node) for entry in added)),
                             frozenset(changed), frozenset(dirty))
        return self._summaries, self._tables

    def drafts(self, ctx: Context, rules: list, settings_key: str, run) -> dict | None:
        """code -> the drafts of each rule of ``rules`` over every cell site, in site order (what one
        ``rule.check(ctx)`` yields, before the engine's deduplication), reading unchanged sites back; None when
        the memo cannot stand in for one run (see the module docstring). ``run(rule, ctx)``: the rule's drafts
        for a context, or None when it raised."""
        sites = ctx.cell_sites
        if ctx.custom_op_sites or len(sites) < self.min_sites:
            return None
        functions = [id(s.function.node) for s in sites if s.function is not None]
        if len(set(functions)) != len(functions):
            return None
        if any(self._rules.setdefault(rule.code, rule) is not rule for rule in rules):
            self.clear()  # another rule set's drafts: none of them may be read back for these rules
            self._rules = {rule.code: rule for rule in rules}
        shared = _Shared(ctx, settings_key, self)
        self.ran = self.reused = self.keys_kept = 0
        steady = self._steady(shared)
        keys, self._keys = self._keys if steady else {}, {}
        per_site = []
        for site in sites:
            pre = _pre_key(shared, site)
            key = _reused_key(keys.get(id(site.cls)), site, pre, self._delta)
            if key is None:
                key = self._key(shared, site, pre)
            else:
                self._keys[id(site.cls)] = keys[id(site.cls)]
                self.keys_kept += 1
            entry = self.new.get(key) if key is not None else None
            if entry is None and key is not None:
                entry = self.old.get(key)
                if entry is not None:
                    self.new[key] = entry
            # Drafts hold positions: they are read back only by the site at the place of the one that made them
            # (its class's statement starting where it did, with its digest: the key tells the class within the
            # statement), and only while the statements they point into are still there. (Another class of that
            # text elsewhere may have the same key: two copies of one statement, the one that made the drafts
            # moved away and another taking its lines in one edit.) A site with no drafts hits wherever it is.
            if entry is not None and (not entry[1] or (entry[2] == shared.place_of(site.cls.node) is not None
                                                       and all(shared.still_there(ref) for ref in entry[1]))):
                self.reused += 1
                per_site.append(entry[0])
                continue
            self.ran += 1
            view = _view(ctx, site)
            results = {}
            refs: set = set()
            keep = key is not None
            for rule in rules:
                found = run(rule, view)
                if found is None:
                    results[rule.code] = _FAILED
                    continue
                if not found:
                    continue  # (a rule with no drafts for the site has no entry)
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
            own = shared.place_of(site.cls.node) if keep and refs else None
            if keep and refs and own is None:
                keep = False
            if keep:
                self.new[key] = (results, frozenset(refs), own)
            per_site.append(results)
        if len(self.new) > max(self.SIZE, 4 * len(sites)):
            self.old, self.new = self.new, {}
        # Each rule's drafts in site order (a site's results hold only the rules with drafts or that raised).
        out: dict = {rule.code: [] for rule in rules}
        failed = set()
        for results in per_site:
            for code, found in results.items():
                if found is _FAILED:
                    failed.add(code)
                else:
                    drafts = out.get(code)
                    if drafts is not None:
                        drafts += found
        for code in failed:
            if code in out:
                out[code] = None
        return out

    def _steady(self, shared: _Shared) -> bool:
        """Whether the keys of the last analysis may be kept for sites that read nothing that changed: at most one
        statement replaced in place (``forget``), and the same settings, line terminator, imports and line
        count (no position moved)."""
        now = (shared.settings_key, shared.newline, shared.imports, shared.line_count)
        before, self._globals = self._globals, now
        return self._delta.steady and before == now

    def _key(self, shared: _Shared, site: CellSite, pre: tuple | None = None) -> bytes | None:
        """The digest of what the Cell-scoped rules read for ``site`` (the module docstring); None when that
        cannot be told cheaply (then the site runs). With ``pre`` (``_pre_key``), the key is kept with what it
        read, for the next analysis (``_reused_key``)."""
        p = shared.program
        seeds = [k.node for k in p.mro(site.cls) if not isinstance(k, str)]
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
        class_tops, class_names = shared.class_tops, shared.class_names
        decorators = set()
        facts_of = {}
        tops_names = set()  # the class names that brought statements in
        while todo:
            top = todo.pop()
            facts = facts_of[id(top)] = shared.facts(top)
            found = shared.words(facts, top)
            decorators |= shared.decorator_words(facts, top)
            hits = class_names & found
            tops_names |= hits
            for name in hits:
                for other in class_tops[name]:
                    if id(other) not in tops:
                        tops[id(other)] = other
                        todo.append(other)
        index, env_indices, tables = shared.index, shared.env_indices, shared.tables
        statements = sorted((index.get(id(t), -1), id(t)) for t in tops.values())
        # Which of those statements holds the class, and where in it (so two classes of one name, in two statements
        # of one text or in one statement, never share a key: the class is told by what it is, not by its name).
        own = _top(site.cls.node)
        own_at = next((k for k, (_, key) in enumerate(statements) if key == id(own)), -1)
        parts = [repr((shared.settings_key, shared.newline, site.cls.name, own_at, _relative(site.cls.node),
                       sorted(site.modes), site.external_construct, sorted(site.call_counts or ()),
                       [bisect.bisect_left(env_indices, i) for i, _ in statements])).encode()]
        for _, key in statements:
            facts = facts_of[key]
            parts.append(_facts_digest(facts, tops[key]))
            parts.append(tables(facts, tops[key]))
        parts.append(shared.imports)
        # The calls of the class, and the statements naming it (its ``Cls(...)`` calls, which attribute_values
        # reads), by text.
        words = set()
        for call in shared.ctx.call_index.sites(site.cls):
            code = call.node.get_code(include_prefix=False)
            words.update(_WORD.findall(code))
            parts.append(repr((call.node.start_pos, code)).encode())
        naming = shared.naming(site.cls.name)
        if naming is None:
            return None
        for facts, top in naming:
            parts.append(_facts_digest(facts, top))
            parts.append(tables(facts, top))
        # What the name tables say of the other names read (a method's code too for those used as decorators).
        summary = shared.summary
        for name in sorted(words & shared.table_names):
            parts.append(name.encode())
            parts.append(summary(name, False))
        for name in sorted(decorators & shared.table_names):
            parts.append(name.encode())
            parts.append(summary(name, True))
        key = hashlib.blake2b(b"\0".join(parts), digest_size=16).digest()
        if pre is not None and all(shared.facts(t) is facts_of[k] and facts_of[k] for k, t in tops.items()):
            # The words read: each statement's own set (kept with its facts: not copied into one per site) and the
            # calls' and decorators' words.
            read = [frozenset(words | decorators)]
            deps = set()
            for facts in (*facts_of.values(), *(facts for facts, _top_node in naming)):
                if id(facts) not in deps:
                    deps.add(id(facts))
                    read.append(facts["words"])
            watch = {site.cls.name}
            watch.update(tops_names)
            self._keys[id(site.cls)] = _KeptKey(site.cls, pre, key, frozenset(deps), frozenset(watch), tuple(read),
                                                frozenset(decorators))
        return key


def _pre_key(shared: _Shared, site: CellSite) -> tuple:
    """What a kept key must have been computed for: the site's own fields, and the statements its MRO, bprop and
    construct lie in and its call sites, as nodes (compared by identity: an unchanged statement keeps its nodes,
    and no line moved while keys are kept; held by the kept key, so that no new node can take an old one's id)."""
    p = shared.program
    seeds = [_top(k.node) for k in p.mro(site.cls) if not isinstance(k, str)]
    for node in (getattr(site.bprop, "node", None), site.function.node if site.function is not None else None,
                 site.construct.node if site.construct is not None else None):
        seeds.append(_top(node) if node is not None else None)
    calls = tuple(call.node for call in shared.ctx.call_index.sites(site.cls))
    return (tuple(seeds), calls, _relative(site.cls.node), tuple(sorted(site.modes)), site.external_construct,
            tuple(sorted(site.call_counts or ())))


def _same_pre(a: tuple, b: tuple) -> bool:
    """Whether two pre-keys are the same: the same nodes (by identity) and the same fields."""
    return (len(a[0]) == len(b[0]) and all(x is y for x, y in zip(a[0], b[0])) and len(a[1]) == len(b[1])
            and all(x is y for x, y in zip(a[1], b[1])) and a[2:] == b[2:])


def _reused_key(kept: _KeptKey | None, site: CellSite, pre: tuple, delta: _Delta) -> bytes | None:
    """The key kept from the last analysis for ``site``'s class, when nothing it read changed: its statements
    are all still there (the replaced one was none of them), the new statement names neither the class nor a
    class its statements brought in (no new ``Cls(...)`` nor naming statement), no name it read says something
    else in the name tables (nor is a decorator it read bound by the replaced statement), and its pre-key is the
    same. None otherwise (the key is computed again)."""
    if kept is None or kept.cls is not site.cls or not _same_pre(kept.pre, pre):
        return None
    if not delta.gone.isdisjoint(kept.deps) or not kept.watch.isdisjoint(delta.new_words) \
            or not kept.decorators.isdisjoint(delta.dirty):
        return None  # (a decorator's summary is not compared, only dropped: a name bound anew is enough)
    if delta.changed and any(not words.isdisjoint(delta.changed) for words in kept.read):
        return None
    return kept.key


def _class_names(entry: _Known) -> tuple:
    """The names of the classes a top-level statement defines (its scan's classes)."""
    return tuple(cls.name for cls in entry.scan[1])


def _relative(node) -> tuple:
    """Where ``node`` sits within its top-level statement (which class of the statement the site is)."""
    top = _top(node)
    if top is None:
        return node.start_pos
    return node.start_pos[0] - top.start_pos[0], node.start_pos[1]


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
    """Where the top-level statements the draft's positions lie in start, with their digests; None when that
    cannot be told."""
    positions = [draft.span.start, draft.span.end]
    if draft.fix is not None:
        for edit in draft.fix.edits:
            positions += (edit.span.start, edit.span.end)
    for related in draft.related:
        positions += (related.span.start, related.span.end)
    found = set()
    for pos in positions:
        ref = shared.where(pos.line, pos.column)
        if ref is None:
            return None
        found.add(ref)
    if draft.noqa_line is not None:
        ref = shared.where(draft.noqa_line, 0)
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
