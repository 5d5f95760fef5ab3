"""A static model of one Python file: its whole-file tables (imports, classes, functions, assignments), what
attribute lookup finds on its classes (MRO within the file, late bindings), and where words stand in its text.

Everything here is read from the parso tree; nothing is imported or executed. What the model cannot resolve is
reported as unknown (``None``), and the rules leave unknown shapes alone. What a statement defines (functions,
classes and their members) is ``definitions.py``'s, the tree helpers are ``trees.py``'s, MindSpore's own names
``mindspore_api.py``'s.
"""
from __future__ import annotations

import bisect
import builtins
import operator
import re
import weakref
from functools import cached_property
from itertools import compress, repeat
from typing import Iterator, NamedTuple

from parso.python import tree

from .attached import attached_bindings, may_bind_late
from .definitions import ClassInfo, Function, Member, SyntheticClass, import_bindings, name_assignments, scan_statements
from .mindspore_api import is_cell_name, is_nn_layer_name, is_primitive_name, mode_settings_at
from .model import Position, Span
from .scope import CURRENT as _WORKSPACE
from .parsing import POSITIONAL  # statement facts under keys with this prefix hold positions
from .parsing import digest
from .text import LineIndex
from .trees import (NodeView, call_arguments, call_of, decorators_of, dict_items, display_items, dotted,
                    is_module_level, statement_code, statement_words, string_value)

# A ``# noqa`` comment, bare or naming codes (noqa.py reads which lines they stand on).
NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+\d+(?:[\s,]+[A-Za-z]+\d+)*))?", re.IGNORECASE)


class StatementDelta(NamedTuple):
    """One top-level statement replaced in place since the document's last analysis (typing in it), and no line
    moved: every other statement is the same node, with the same facts, at the same place. The whole-file tables
    of the last program (``previous``) are then brought up to date by swapping that statement's part instead of
    joining every statement's again."""

    previous: "ProgramTables"
    index: int  # the statement's place among the module's statements
    old: tuple  # (node, scan, facts) of the statement replaced
    new: tuple  # (node, scan, facts) of the one in its place


# The joined tables a program hands to the next one of its document (the lazy ones only when they were read).
_HANDED_ON = ("_entries", "import_nodes", "classes", "_funcdefs", "_assignment_stmts", "imports", "assignments",
              "functions", "classes_by_name", "_layout", "_layout_words", "_statement_ends", "_facts_owners",
              "_line_layout", "_substring_counts", "_noqa_matches", "_calls_found")


# The per-class answers of class resolution (MRO, is_cell, lookup …), handed on too: the next program keeps those a
# delta cannot have changed (``Program._carried_class_caches``).
_CLASS_CACHES = ("_mro_cache", "_acyclic_mro", "_is_cell_cache", "_is_primitive_cache", "_lookup_memo",
                 "_lookups_reading", "_nn_layer_memo", "_hierarchy_memos", "_member_memos")


class ProgramTables:
    """A program's whole-file tables, for the next program of its document to patch (``StatementDelta``): no
    text, line index or call index (a document keeps no program alive between versions)."""

    def __init__(self, program: "Program"):
        held = program.__dict__
        self.__dict__.update({name: held[name] for name in _HANDED_ON + _CLASS_CACHES if name in held})
        self.own = program._update_statements
        self.line_count = program.index.line_count
        self.synthetic = program._synthetic  # classes built with ``type(...)``, after the joined ones
        # What the late bindings of the classes were (a carried lookup read them: ``_carried_class_caches``).
        self.late_sources = program.has_late_sources
        # The other modules its classes were resolved through, with their digests (``workspace.py``).
        workspace = program.workspace
        self.foreign = workspace.depends_on(program.path, modes=False) if workspace is not None and program.path \
            else None


def _delta(previous: ProgramTables, program: "Program") -> StatementDelta | None:
    """``program``'s delta from the tables of the document's last program (see ``StatementDelta``); None when more
    changed, or when either is not the document's own (a fix's fork)."""
    if not (program._update_statements and previous.own):
        return None
    before, after = previous.__dict__.get("_entries"), program._entries
    if before is None or len(before) != len(after) or program.index.line_count != previous.line_count:
        return None
    differs = list(map(operator.is_not, before, after))
    if differs.count(True) != 1:
        return None
    k = differs.index(True)
    return StatementDelta(previous, k, before[k], after[k])


def _statement_swap(program: "Program") -> tuple[dict, str, str] | None:
    """(the handed-on tables, the replaced statement's code, its replacement's) when a whole-text count or search
    can be carried from the last program: one statement replaced in place, the codes laid end to end, and no match
    able to run across its edges (each of its codes and the one before it ends with a line break; a ``#`` ending a
    code before a line break may start a ``# noqa`` match running into the next)."""
    delta = program.delta
    if delta is None or program._layout is None or delta.previous.__dict__.get("_layout") is None:
        return None
    k = delta.index
    old_code = delta.old[2].get("code")
    new_code = program._layout[k][0]["code"]
    codes = [old_code, new_code]
    if k:
        codes.append(program._layout[k - 1][0]["code"])
    for code in codes:
        if not code or not code.endswith("\n") or code.rstrip().endswith("#"):
            return None
    return delta.previous.__dict__, old_code, new_code


def _patched_table(table: dict, old: list, new: list, start_of) -> dict | None:
    """``table`` (name -> values, in text order, joined over every statement) with the replaced statement's
    (name, value) pairs ``old`` swapped for ``new`` (``StatementDelta``): a name's run of old values is replaced
    where it stood, or its new values go where their place in the text puts them (``start_of(value)``: no line
    moved, so every other value is where it was). The same lists as a fresh join (a name that joins the table comes
    last among the keys: readers never depend on the keys' order); None when the old values are not where the
    table says."""
    if not old and not new:
        return table
    result = dict(table)
    for name in {name for name, _ in old}.union(name for name, _ in new):
        olds = [value for n, value in old if n == name]
        news = [value for n, value in new if n == name]
        values = table.get(name, [])
        if olds:
            first = olds[0]
            at = next((i for i, value in enumerate(values) if value is first), None)
            patched = _spliced(values, at, olds, news) if at is not None else None
            if patched is None:
                return None
        else:
            position = start_of(news[0])
            low, high = 0, len(values)
            while low < high:
                middle = (low + high) // 2
                if start_of(values[middle]) < position:
                    low = middle + 1
                else:
                    high = middle
            patched = values[:low] + news + values[low:]
        if patched:
            result[name] = patched
        else:
            del result[name]
    return result


def _resolution_signature(entry: tuple) -> tuple:
    """What resolving a base-class name reads of one top-level statement (``Program.resolve_class``): the names of
    its classes in order, and each module-level ``name = value`` with the dotted name it aliases (kept with its
    facts)."""
    facts = entry[2]
    signature = facts.get("resolution_signature")
    if signature is None:
        signature = facts["resolution_signature"] = (
            tuple(c.name for c in entry[1][1]),
            tuple((name, dotted(value) if call_of(value) is None else None)
                  for name, value in _assignment_pairs(entry) if is_module_level(value)))
    return signature


def _kept(memo: dict, keys) -> dict:
    """A copy of ``memo`` with only the entries of ``keys`` (a set or a dict's keys; most of the memo)."""
    kept = dict(memo)
    for key in memo.keys() - keys:
        del kept[key]
    return kept


def _assignment_pairs(entry: tuple) -> list:
    """(name, value) of each ``name = value`` in one top-level statement (``Program._statements`` entry), read once
    and kept with its facts."""
    facts = entry[2]
    pairs = facts.get("assignments")
    if pairs is None:
        pairs = facts["assignments"] = name_assignments(entry[1][3])
    return pairs


def _functions_of(entry: tuple) -> list:
    """Every ``def`` in one top-level statement, read once and kept with its facts."""
    facts = entry[2]
    fns = facts.get("functions")
    if fns is None:
        fns = facts["functions"] = [Function(node, node.name.value, decorators=decorators_of(node))
                                    for node in entry[1][2]]
    return fns


def _edges(facts: dict, code: str) -> tuple[bool, bool]:
    """Whether a statement's code starts and ends with an identifier character (kept with its facts)."""
    edges = facts.get("edges")
    if edges is None:
        edges = facts["edges"] = (bool(code) and _is_ident_char(code[0]), bool(code) and _is_ident_char(code[-1]))
    return edges


def _start_of(node) -> tuple[int, int]:
    return node.start_pos


def _function_start(fn: "Function") -> tuple[int, int]:
    return fn.node.start_pos


def _class_start(cls: "ClassInfo") -> tuple[int, int]:
    return cls.node.start_pos


def _spliced(joined: list, start: int, old: list, new: list) -> list | None:
    """``joined`` with ``old`` (found at ``start``) replaced by ``new``; None when ``old`` is not there."""
    end = start + len(old)
    if len(joined) < end or not all(map(operator.is_, joined[start:end], old)):
        return None
    return joined[:start] + new + joined[end:]


class Program:
    def __init__(self, module: tree.Module, text: str, statements: dict | None = None, *,
                 update_statements: bool = True, lines: list[str] | None = None,
                 previous: ProgramTables | None = None, workspace=None, path: str | None = None):
        """``statements``: the document's per-statement scan cache (``ParsedDocument.statements``), read and, with
        ``update_statements``, brought up to date; a fix's forked tree only reads it. ``previous``: the tables of the
        document's last program (``tables()``), which this one patches when one statement was replaced in place
        (``delta``)."""
        self.module = module
        self.text = text
        if workspace is None:
            scope = _WORKSPACE.get()
            if scope is not None:
                workspace, path = scope
        # The project's other modules (``workspace.py``) and this module's path, or None: one file alone.
        self.workspace = workspace
        self.path = path
        self._statement_cache = statements
        self._lines = lines  # ``text`` split by the parser (line breaks kept), when at hand
        self._update_statements = update_statements
        self.imports: dict[str, str] = {}
        self.import_nodes: list = []
        self.classes: list[ClassInfo] = []
        self._funcdefs: list = []
        self._assignment_stmts: list = []
        # One top-level statement replaced in place since ``previous``, no line moved: None otherwise.
        self.delta: StatementDelta | None = None
        self._scan(previous)

    # ----------------------------------------------------------------- scanning
    def _scan(self, previous: ProgramTables | None) -> None:
        # Per top-level statement, cached by node identity: an edit that the parser spliced into one statement
        # re-scans only that statement (ParsedDocument clears the cache when the diff parser re-links the tree).
        # Each entry also carries a dict of facts read from that statement alone (call sites, ``self.``
        # assignments ...), filled lazily by whoever needs them: see ``statement_facts``.
        store = self._statement_cache
        cache = store if store is not None else {}
        fresh: dict[int, tuple] = {}
        lines = self._lines
        before = None  # the statement before
        for child in self.module.children:
            entry = cache.get(id(child))
            if entry is None or entry[0] is not child:
                entry = (child, scan_statements(child), {})
                if lines is not None:
                    # A statement read afresh (the one an edit touched): its code is the text from where the one
                    # before ends to where it ends (parso's tree is lossless), whole lines when both are at a line's
                    # start: joined from the parser's lines instead of walking its leaves (a class of 40 lines: ~3
                    # ms), before any reader of its code (``statement_code``) asks.
                    start_line, start_column = before.end_pos if before is not None else (1, 0)
                    end_line, end_column = child.end_pos
                    if start_column == 0 and end_column == 0:
                        entry[2]["code"] = "".join(lines[start_line - 1:end_line - 1])
            before = child
            fresh[id(child)] = entry
        if store is not None and self._update_statements:
            store.clear()
            store.update(fresh)
        self._statements = fresh
        self._entries = entries = list(fresh.values())
        delta = self.delta = _delta(previous, self) if previous is not None else None
        if delta is not None:
            # The joined lists are the last program's with the replaced statement's part swapped (the scans before
            # it say where that part starts): the same lists a join over every statement gives.
            k = delta.index
            scans_before = list(map(operator.itemgetter(1), entries[:k]))
            joined_classes = previous.classes[:len(previous.classes) - previous.synthetic]
            spliced = [_spliced(list_before, sum(map(len, map(operator.itemgetter(slot), scans_before))),
                                delta.old[1][slot], delta.new[1][slot])
                       for slot, list_before in enumerate((previous.import_nodes, joined_classes,
                                                           previous._funcdefs, previous._assignment_stmts))]
            if any(joined is None for joined in spliced):
                delta = self.delta = None
            else:
                self.import_nodes, self.classes, self._funcdefs, self._assignment_stmts = spliced
                if not delta.old[1][0] and not delta.new[1][0]:
                    self.imports = dict(previous.imports)
                else:
                    for node in self.import_nodes:
                        self._record_import(node)
        if delta is None:
            for _child, (imports, classes, funcdefs, assignments), _facts in entries:
                self.import_nodes += imports
                self.classes += classes
                self._funcdefs += funcdefs
                self._assignment_stmts += assignments
            for node in self.import_nodes:
                self._record_import(node)
        self._synthetic = 0
        if self.text_contains("type("):
            synthetic = self._synthetic_classes()  # (new objects on every analysis: never patched from the last)
            self.classes += synthetic
            self._synthetic = len(synthetic)
        ref = weakref.ref(self)  # (the same object for every class: CPython shares a plain weak reference)
        for cls in self.classes:
            held = cls.__dict__
            if held.get("_program") is not ref:
                # Members depend on module-level facts (constants in class-body conditions): re-read them.
                held["_program"] = ref
                held.pop("members", None)

    def statement_facts(self, node) -> dict:
        """A dict for facts read from the top-level statement holding ``node`` and nothing else (what its calls
        are, which ``self.`` attributes its methods assign ...): kept with the statement while an edit elsewhere
        leaves it untouched, so such facts are read once per statement, not once per keystroke. Keys are the
        callers'; a fact about an inner node keeps the node with it (``(node, value)``) and checks identity.
        Facts are kept when lines are inserted or removed above the statement (its nodes move with their leaves),
        except those under keys starting with ``POSITIONAL``: a fact holding a position must use such a key."""
        # Up to the top-level statement (a forked tree's unchanged statements have the document's module as
        # parent, its re-parsed ones the fork: both are top level).
        top = node
        parent = getattr(top, "parent", None)
        while parent is not None and parent.type != "file_input":
            top, parent = parent, parent.parent
        entry = self._statements.get(id(top)) if parent is not None else None
        if entry is None or entry[0] is not top:
            return self._loose_facts  # not in this module's tree (a light view, a synthetic node)
        return entry[2]

    def statement_digest(self, facts: dict, top) -> bytes:
        """The digest of a top-level statement's code (read once, kept with its facts)."""
        found = facts.get("digest")
        if found is None:
            found = digest(statement_code(facts, top))
            if facts is not self.__dict__.get("_loose_facts"):
                facts["digest"] = found
        return found

    def statement_layout(self, full: bool = False) -> list[tuple]:
        """(line where its code starts, digest of its code) of each top-level statement, in order; ``full``: with
        its facts too."""
        layout = []
        for (child, _scan, facts), start in zip(self._entries, self._statement_starts):
            if child.type == "endmarker":
                continue
            digest_ = self.statement_digest(facts, child)
            layout.append((start[0], digest_, facts) if full else (start[0], digest_))
        return layout

    @cached_property
    def _statement_starts(self) -> list[tuple[int, int]]:
        """``start_pos`` of each top-level statement (kept with the statement while it does not move)."""
        starts = []
        for child, _scan, facts in self._entries:
            start = facts.get(POSITIONAL + "start")
            if start is None:
                start = facts[POSITIONAL + "start"] = child.start_pos
            starts.append(start)
        return starts

    def statement_at(self, position: tuple[int, int]):
        """The last top-level statement whose code starts at or before ``position`` (the one holding it, when it
        is where a leaf starts); None before the first."""
        i = bisect.bisect_right(self._statement_starts, position) - 1
        return self.module.children[i] if i >= 0 else None

    def node_fact(self, node, key: str, compute):
        """``compute(node)``, a fact read from ``node`` alone, once while its top-level statement stays untouched
        and the node where it was (kept in that statement's facts under ``key``, with the node to check identity
        and its place: a fact may hold a position, and a node moves with its leaves when lines are added above)."""
        facts = self.statement_facts(node).setdefault(key, {})
        entry = facts.get(id(node))
        if entry is None or entry[0] is not node or entry[2] != node.start_pos:
            entry = facts[id(node)] = (node, compute(node), node.start_pos)
        return entry[1]

    @cached_property
    def _loose_facts(self) -> dict:
        return {}

    def tables(self) -> ProgramTables:
        """The tables the next program of this document patches (``StatementDelta``)."""
        return ProgramTables(self)


    def _synthetic_classes(self) -> list[ClassInfo]:
        """``Net = type("Net", (nn.Cell,), {"construct": ..., "bprop": ...})`` anywhere in the file."""
        found = []
        if "type" in self.imports:
            return found
        for node in self.nodes_matching("type", ("power", "atom_expr")):
            c = call_of(node)
            if c is None or c[0] != "type":
                continue
            positional, keywords, has_star = call_arguments(c[1])
            if len(positional) != 3 or keywords or has_star:
                continue
            name_node, bases_node, ns_node = positional
            name = string_value(name_node)
            if name is None and name_node.type == "name":
                # ``type(_name, ...)`` in a loop or a comprehension: one class per name, all alike (named here by
                # the expression, which no class statement can be called)
                name = f"type({name_node.value})"
            bases = display_items(bases_node)
            if name is None or bases is None:
                continue
            namespace = dict_items(ns_node)
            if namespace is None:
                continue
            found.append(SyntheticClass(node, name, bases, namespace))
        return found

    def calls_of(self, name: str) -> list:
        """Call expressions ``name(...)`` whose callee is exactly the bare name (found by ``str.find``)."""
        by_statement = self._word_statements(name)
        if by_statement is None:
            return self._calls_at(self.word_offsets(name))
        found = []
        for facts, offset in by_statement:
            # read once per statement: the calls found at its occurrences of the name lie within it
            cache = facts.setdefault("calls_of", {})
            calls = cache.get(name)
            if calls is None:
                calls = cache[name] = self._calls_at([offset + rel for rel in _word_hits(facts, name)])
            found += calls
        return found

    def _calls_at(self, offsets: list[int]) -> list:
        found = []
        for start in offsets:
            pos = self.index.position(start)
            # One column into the name: at a leaf boundary parso returns the leaf that ends there.
            leaf = self.module.get_leaf_for_position((pos.line + 1, pos.column + 1))
            parent = leaf.parent if leaf is not None and leaf.type == "name" else None
            if (parent is None or parent.type not in ("power", "atom_expr") or parent.children[0] is not leaf
                    or parent.children[1].type != "trailer" or parent.children[1].children[0] != "("):
                continue
            # ``Cls(...)(x)``: the instantiation is the first trailer; view it as its own call.
            found.append(parent if len(parent.children) == 2 else NodeView(parent.type, parent.children[:2]))
        return found

    def word_offsets(self, word: str) -> list[int]:
        """Text offsets where the identifier ``word`` stands (not inside a longer identifier)."""
        by_statement = self._word_statements(word)
        if by_statement is not None:
            return [offset + rel for facts, offset in by_statement for rel in _word_hits(facts, word)]
        return _identifier_offsets(self.text, word)

    @cached_property
    def _layout(self) -> list | None:
        """(facts, text offset) of each top-level statement, each statement's code and the words in it read once
        and kept with it; None when the text is not the statements' codes laid end to end with no identifier
        running from one into the next (then a word's occurrences are looked for in the whole text)."""
        delta = self.delta
        before = delta.previous.__dict__.get("_layout", False) if delta is not None else False
        if before:
            # One statement's code swapped: the offsets after it move by the change in its length; whether codes
            # run into each other is what it was while the statement's code starts and ends as it did.
            k, (old_facts, old_offset) = delta.index, before[delta.index]
            child, _scanned, facts = delta.new
            code = statement_code(facts, child)
            statement_words(facts, child)
            old_code = old_facts["code"]
            if code and old_code and _edges(facts, code) == old_facts.get("edges"):
                moved = len(code) - len(old_code)
                layout = before[:k]
                layout.append((facts, old_offset))
                layout += [(f, offset + moved) for f, offset in before[k + 1:]]
                if before[-1][1] + len(before[-1][0]["code"]) + moved == len(self.text):
                    return layout
        entries = []
        offset = 0
        joined = False  # the code so far ends in an identifier character
        for child, _scanned, facts in self._entries:
            code = statement_code(facts, child)
            statement_words(facts, child)
            if code:
                first, last = _edges(facts, code)
                if joined and first:
                    return None
                joined = last
            entries.append((facts, offset))
            offset += len(code)
        return entries if offset == len(self.text) else None

    def _word_statements(self, word: str) -> list | None:
        """(facts, text offset) of the statements whose code holds the identifier ``word``; None when the layout
        cannot tell (see ``_layout``) or ``word`` is not made of identifier characters."""
        if not word or not all(_is_ident_char(c) for c in word):
            return None
        layout = self._layout
        if layout is None:
            return None
        return list(compress(layout, map(operator.contains, self._layout_words, repeat(word))))

    @cached_property
    def _layout_words(self) -> list:
        """The words of each statement of the layout, in order."""
        delta = self.delta
        before = delta.previous.__dict__.get("_layout_words") if delta is not None else None
        if before is not None and self._layout is not None:
            words = list(before)
            words[delta.index] = self._layout[delta.index][0]["words"]
            return words
        return [facts["words"] for facts, _offset in self._layout]

    def test_definitions(self) -> list:
        """The top-level ``def test*`` functions and ``class Test*`` classes (a decorated one's def or class), in
        order: where a test suite uses the file's Cells (once per program)."""
        found = self.__dict__.get("_test_definitions")
        if found is None:
            found = []
            for child in self.module.children:
                top = child.children[-1] if child.type == "decorated" else child
                if top.type == "funcdef" and top.name.value.startswith("test") or (
                        top.type == "classdef" and (top.name.value.startswith("Test")
                                                    or top.name.value.startswith("test"))):
                    found.append(top)
            self.__dict__["_test_definitions"] = found
        return found

    def nodes_matching(self, word: str, types: tuple[str, ...]) -> list:
        """For each occurrence of the identifier ``word`` in the text, the outermost enclosing node of one of
        ``types`` around it (deduplicated, in text order). Lets rules that look for a rare name (``Custom``,
        ``set_context``, ``bprop_debug``) skip walking the whole tree: ``str.find`` costs next to nothing."""
        by_statement = self._word_statements(word)
        if by_statement is None:
            return self.nodes_at(self.word_offsets(word), types)
        return self._nodes_in(by_statement, word, types)

    def _nodes_in(self, by_statement: list, word: str, types: tuple[str, ...]) -> list:
        """``nodes_matching`` over the statements (facts, offset) that hold ``word``."""
        found = []
        for facts, offset in by_statement:
            # read once per statement: the nodes around its occurrences of the word lie within it
            cache = facts.setdefault("nodes_matching", {})
            key = (word, types)
            nodes = cache.get(key)
            if nodes is None:
                rels = _word_hits(facts, word)
                nodes = self._nodes_in_statement(facts, rels, types)
                if nodes is None:
                    nodes = self.nodes_at([offset + rel for rel in rels], types)
                cache[key] = nodes
            found += nodes
        return found

    def _nodes_in_statement(self, facts: dict, rels: list[int], types: tuple[str, ...]) -> list | None:
        """``nodes_at`` for offsets ``rels`` into one top-level statement's code (``facts`` of the layout), their
        positions read from the statement alone (where its code starts, its own line breaks) instead of the whole
        text's line table and every statement's end, which a statement read afresh (the one a keystroke touched)
        would otherwise build; None when its code holds a carriage return (then the line table tells)."""
        code = facts["code"]
        if "\r" in code:
            return None
        owners = self.__dict__.get("_facts_owners")
        if owners is None:
            delta = self.delta
            before = delta.previous.__dict__.get("_facts_owners") if delta is not None else None
            if before is not None:
                owners = dict(before)
                owners.pop(id(delta.old[2]), None)
                owners[id(delta.new[2])] = delta.new[0]
                self.__dict__["_facts_owners"] = owners
            else:
                owners = self.__dict__["_facts_owners"] = {id(f): child for child, _, f in self._entries}
        top = owners.get(id(facts))
        if top is None:
            return None
        line0, column0 = top.get_first_leaf().get_start_pos_of_prefix()
        found = []
        seen = set()
        for rel in rels:
            breaks = code.count("\n", 0, rel)
            if breaks:
                line, column = line0 + breaks, rel - code.rfind("\n", 0, rel) - 1
            else:
                line, column = line0, column0 + rel
            best = self._outermost_in(top, (line, column + 1), types)  # (one column into the word: see nodes_at)
            if best is not None and id(best) not in seen:
                seen.add(id(best))
                found.append(best)
        return found

    def nodes_at(self, offsets: list[int], types: tuple[str, ...]) -> list:
        """``nodes_matching`` for occurrences already found (text offsets, in order)."""
        found = []
        seen = set()
        for start in offsets:
            pos = self.index.position(start)
            # One column into the word: at a leaf boundary parso returns the leaf that ends there (the previous
            # statement's newline for a word at the start of a line).
            best = self._outermost_at((pos.line + 1, pos.column + 1), types)
            if best is not None and id(best) not in seen:
                seen.add(id(best))
                found.append(best)
        return found

    def _outermost_at(self, position: tuple[int, int], types: tuple[str, ...]):
        """The outermost node of one of ``types`` around the leaf at ``position``, within its statement: what
        ``module.get_leaf_for_position`` finds, searched the same way, the answer kept with the top-level statement
        it lies in (the same position in an untouched statement gives the same node on the next keystroke)."""
        children = self.module.children
        ends = self._statement_ends
        if not ((1, 0) <= position <= ends[-1]):
            raise ValueError("Please provide a position that exists within this node.")
        # parso's binary search over the module's children: the first whose end is not before the position.
        element = children[min(bisect.bisect_left(ends, position), len(children) - 1)]
        return self._outermost_in(element, position, types)

    def _outermost_in(self, element, position: tuple[int, int], types: tuple[str, ...]):
        """``_outermost_at`` within the top-level statement ``element`` known to hold ``position``."""
        if position < element.start_pos:
            return None  # on a prefix
        cache = self.statement_facts(element).setdefault(POSITIONAL + "outermost_at", {})
        key = (position, types)
        if key in cache:
            return cache[key]
        try:
            leaf = element.get_leaf_for_position(position)
        except AttributeError:
            leaf = element
        best = None
        node = leaf.parent if leaf is not None else None
        while node is not None and node.type not in ("funcdef", "classdef", "file_input", "simple_stmt"):
            if node.type in types:
                best = node
            node = node.parent
        cache[key] = best
        return best

    @cached_property
    def _statement_ends(self) -> list[tuple[int, int]]:
        """``end_pos`` of each top-level statement (each costs a walk to its last leaf: kept with the statement)."""
        delta = self.delta
        before = delta.previous.__dict__.get("_statement_ends") if delta is not None else None
        if before is not None and len(before) == len(self.module.children):
            # No line moved: the other statements end where they did.
            ends = list(before)
            child = delta.new[0]
            facts = delta.new[2]
            end = facts.get(POSITIONAL + "end")
            if end is None:
                end = facts[POSITIONAL + "end"] = child.end_pos
            ends[delta.index] = end
            return ends
        ends = []
        for child in self.module.children:
            facts = self.statement_facts(child)
            end = facts.get(POSITIONAL + "end")
            if end is None:
                end = facts[POSITIONAL + "end"] = child.end_pos
            ends.append(end)
        return ends

    def _record_import(self, node) -> None:
        self.imports.update(import_bindings(node))


    @cached_property
    def functions(self) -> dict[str, list[Function]]:
        """name -> every ``def`` of that name anywhere in the file (methods and nested functions included; in text
        order)."""
        delta = self.delta
        if delta is not None and "functions" in delta.previous.__dict__:
            patched = _patched_table(delta.previous.functions, [(fn.name, fn) for fn in _functions_of(delta.old)],
                                     [(fn.name, fn) for fn in _functions_of(delta.new)], _function_start)
            if patched is not None:
                return patched
        result: dict[str, list[Function]] = {}
        for _facts, fns in self.functions_by_statement():
            for fn in fns:
                result.setdefault(fn.name, []).append(fn)
        return result

    def functions_by_statement(self) -> Iterator[tuple[dict, list[Function]]]:
        """(facts, every ``def`` in it) of each top-level statement, in order: read once per statement and kept
        with it (a Function holds nothing from other statements)."""
        for entry in self._entries:
            yield entry[2], _functions_of(entry)

    def binds(self, name: str, inside) -> bool:
        """Whether the module (or any scope in it) or Python's builtins bind ``name``; occurrences within the
        node ``inside`` do not count. Cheap when the name appears nowhere else in the text (the common case)."""
        if hasattr(builtins, name):
            return True
        # A fix asks for every name a function reads: the counts, the function's code and the names bound are
        # read once per analysis (each is a pass over the file or the function).
        memo = self._binds_memo
        if name not in memo["text"]:
            memo["text"][name] = self._text_count(name)
        entry = memo["code"].get(id(inside))
        if entry is None or entry[0] is not inside:
            # the code of a node is read once while its statement stays untouched
            codes = self.statement_facts(inside).setdefault("node_code", {})
            entry = codes.get(id(inside))
            if entry is None or entry[0] is not inside:
                entry = codes[id(inside)] = (inside, inside.get_code())
            memo["code"][id(inside)] = entry
        if memo["text"][name] == entry[1].count(name):
            return False
        if "defined" not in memo:
            memo["defined"] = {c.name for c in self.classes} | {node.name.value for node in self._funcdefs}
        return name in self.imports or name in self.assignments or name in memo["defined"]

    def text_contains(self, needle: str) -> bool:
        """``needle in self.text`` for a needle without a line break. A search of a whole 10,000-line text holding
        CJK comments costs 0.3-0.8 ms when the needle is absent (most of these are, in most files: ``custom_vjp``,
        ``.register``, ``get_bprop`` ...): a document's program counts it once and, on a keystroke that replaced one
        statement (``delta``), takes the last program's count, less the replaced statement's, plus its
        replacement's."""
        found = self.__dict__.setdefault("_substring_counts", {}).get(needle)
        if found is None:
            found = self._substring_count(needle)
            self._substring_counts[needle] = found
        return found != 0

    def _substring_count(self, needle: str) -> int:
        """How many times ``needle`` stands in the text; -1 for "at least once" (a one-off program, which no next
        program counts from, stops at the first)."""
        if not self._update_statements or self._statement_cache is None:
            return -1 if needle in self.text else 0
        counts = _statement_swap(self)
        before = counts[0].get("_substring_counts", {}).get(needle, -1) if counts is not None else -1
        if before < 0 or "\n" in needle:
            return self.text.count(needle)
        _, old_code, new_code = counts
        return before - old_code.count(needle) + new_code.count(needle)

    def noqa_matches(self) -> list[tuple[int, str | None]]:
        """(text offset, codes or None) of every ``# noqa`` comment-like match of ``NOQA`` in the text (a regex
        search of a whole large text costs ~0.7 ms): on a keystroke that replaced one statement, the last program's
        matches before and after it (moved by the change in its length) and its replacement's own."""
        found = self.__dict__.get("_noqa_matches")
        if found is not None:
            return found
        swap = _statement_swap(self)
        before = swap[0].get("_noqa_matches") if swap is not None else None
        if before is not None:
            tables, old_code, new_code = swap
            delta = self.delta
            start = self._layout[delta.index][1]
            old_end, moved = start + len(old_code), len(new_code) - len(old_code)
            found = [m for m in before if m[0] < start]
            found += [(start + m.start(), m.group("codes")) for m in NOQA.finditer(new_code)]
            found += [(at + moved, codes) for at, codes in before if at >= old_end]
        else:
            found = [(m.start(), m.group("codes")) for m in NOQA.finditer(self.text)]
        self.__dict__["_noqa_matches"] = found
        return found

    def _text_count(self, word: str) -> int:
        """``self.text.count(word)``: for an identifier, summed over the statements' codes (each count kept with its
        statement) when the layout allows it (no identifier runs from one statement's code into the next)."""
        layout = self._layout if word and all(_is_ident_char(c) for c in word) else None
        if layout is None:
            return self.text.count(word)
        total = 0
        for facts, _offset in layout:
            counts = facts.get("counts")
            if counts is None:
                counts = facts["counts"] = {}
            n = counts.get(word)
            if n is None:
                n = counts[word] = facts["code"].count(word)
            total += n
        return total

    @cached_property
    def _binds_memo(self) -> dict:
        return {"text": {}, "code": {}}

    @cached_property
    def index(self) -> LineIndex:
        return _ProgramLineIndex(self.text, self)

    @cached_property
    def _line_layout(self) -> list[int] | None:
        """For each statement of the layout, the number of line breaks before it (each statement's own breaks read
        once and kept with it); None without a layout or when the text has a ``\r``."""
        layout = self._layout
        if layout is None or "\r" in self.text:
            return None
        delta = self.delta
        before = delta.previous.__dict__.get("_line_layout") if delta is not None else None
        if before is not None:
            # No line moved: every statement holds as many line breaks as before.
            facts = delta.new[2]
            starts = facts.get("line_starts")
            if starts is None:
                starts = facts["line_starts"] = [m.end() for m in re.finditer("\n", facts["code"])]
            if len(starts) == len(delta.old[2]["line_starts"]):
                return before
        firsts = []
        total = 0
        for facts, _offset in layout:
            starts = facts.get("line_starts")
            if starts is None:
                starts = facts["line_starts"] = [m.end() for m in re.finditer("\n", facts["code"])]
            firsts.append(total)
            total += len(starts)
        firsts.append(total)
        return firsts

    def _line_span(self, line: int) -> tuple[int, int] | None:
        """(start, end) text offsets of the line's content, as ``LineIndex`` tells them, read from the statement that
        holds the line; None when it cannot be told that way (the line runs from one statement's code into the
        next, no layout, a line out of range)."""
        firsts = self._line_layout
        if firsts is None or line < 0 or line > firsts[-1]:
            return None
        layout = self._layout
        if line == 0:
            i, r = 0, 0
        else:
            i = bisect.bisect_left(firsts, line, 0, len(layout)) - 1  # the statement holding the line-th break
            r = layout[i][0]["line_starts"][line - firsts[i] - 1]
        code = layout[i][0]["code"]
        while r == len(code) and i + 1 < len(layout):
            i, r = i + 1, 0
            code = layout[i][0]["code"]
        end = code.find("\n", r)
        offset = layout[i][1]
        if end == -1:
            if any(entry[0]["code"] for entry in layout[i + 1:]):
                return None
            return offset + r, offset + len(code)  # the text's last line
        return offset + r, offset + end

    @cached_property
    def assignments(self) -> dict[str, list]:
        """name -> right-hand sides of ``name = value`` statements anywhere in the file (in text order)."""
        delta = self.delta
        if delta is not None and "assignments" in delta.previous.__dict__:
            patched = _patched_table(delta.previous.assignments, _assignment_pairs(delta.old),
                                     _assignment_pairs(delta.new), _start_of)
            if patched is not None:
                return patched
        result: dict[str, list] = {}
        for entry in self._entries:
            for name, value in _assignment_pairs(entry):
                result.setdefault(name, []).append(value)
        return result

    # ----------------------------------------------------------------- resolution
    def qualname(self, node) -> str | None:
        """The fully qualified name a Name/attribute chain refers to, through the file's imports."""
        text = dotted(node)
        if text is None:
            return None
        return self.resolve_dotted(text)

    def resolve_dotted(self, text: str) -> str:
        head, _, rest = text.partition(".")
        if head in self.imports:
            full = self.imports[head]
            return f"{full}.{rest}" if rest else full
        return text

    @cached_property
    def classes_by_name(self) -> dict[str, list[ClassInfo]]:
        delta = self.delta
        if delta is not None and "classes_by_name" in delta.previous.__dict__ and not delta.previous.synthetic \
                and not self._synthetic:
            patched = _patched_table(delta.previous.classes_by_name, [(c.name, c) for c in delta.old[1][1]],
                                     [(c.name, c) for c in delta.new[1][1]], _class_start)
            if patched is not None:
                return patched
        result: dict[str, list[ClassInfo]] = {}
        for c in self.classes:
            result.setdefault(c.name, []).append(c)
        return result

    def class_of_node(self, node) -> ClassInfo | None:
        """The first of the file's classes whose node is ``node``."""
        by_node = self.__dict__.get("_classes_by_node")
        if by_node is None:
            by_node = self.__dict__["_classes_by_node"] = {}
            for c in self.classes:
                by_node.setdefault(id(c.node), c)
        return by_node.get(id(node))

    def class_named(self, name: str) -> ClassInfo | None:
        found = self.classes_by_name.get(name)
        return found[-1] if found else None

    def mro(self, cls: ClassInfo) -> list[ClassInfo | str]:
        """C3-like linearisation within the file; external bases appear as qualified names."""
        cached = self._mro_cache.get(id(cls))
        if cached is None:
            cached = self._mro_cache[id(cls)] = self._mro(cls, set(), [False])
        return cached

    def _mro(self, cls: ClassInfo, seen: set[int], cut: list) -> list[ClassInfo | str]:
        """``cut[0]`` is set when a cycle was cut below ``cls``: only a linearisation without a cut is the same
        whatever the path to ``cls`` was, and only such a one is memoised and reused for the bases of others
        (without reuse, linearising every class of a deep hierarchy repeats the work for each)."""
        if id(cls) in seen:
            cut[0] = True
            return []
        whole = self._acyclic_mro.get(id(cls))
        if whole is not None:
            return whole
        texts = cls.base_texts
        if len(texts) == 1 and texts[0] is not None and ("." in texts[0] or texts[0] in self.imports) and (
                self.workspace is None or self._workspace_class(texts[0]) is None):
            # ``class Net(nn.Cell)``: one base outside the file (resolve_class reads it through the imports alone)
            whole = self._acyclic_mro[id(cls)] = [cls, self.resolve_dotted(texts[0])]
            return whole
        seen = seen | {id(cls)}
        own_cut = [False]
        parents: list[list[ClassInfo | str]] = []
        for text in cls.base_texts:
            if text is None:
                parents.append(["?"])
                continue
            target = self.resolve_class(text)
            home = target.program if isinstance(target, ClassInfo) and self.workspace is not None else self
            if home is not self and home is not None:
                # a class of another module of the project: linearised by its own program
                with self.workspace.entered(target) as fresh:
                    parents.append(list(home.mro(target)) if fresh else ["?"])
                own_cut[0] = True  # (not memoised across programs: the other module may change)
            elif isinstance(target, ClassInfo):
                parents.append(self._mro(target, seen, own_cut) if target is not cls else ["?"])
            else:
                parents.append([target])
        if len(parents) == 1:
            # One base: the merge of its linearisation with its own head is that linearisation (which never
            # repeats an entry), the common case.
            result = [cls] + parents[0]
        else:
            result = [cls] + _c3_merge(parents + [[p[0] for p in parents if p]])
        if own_cut[0]:
            cut[0] = True
        else:
            self._acyclic_mro[id(cls)] = result
        return result

    @cached_property
    def _acyclic_mro(self) -> dict:
        return self._carried("_acyclic_mro")

    def is_cell(self, cls: ClassInfo) -> bool:
        found = self._is_cell_cache.get(id(cls))
        if found is None:
            found = self._is_cell_cache[id(cls)] = self._is_cell(cls)
        return found

    @cached_property
    def _is_cell_cache(self) -> dict:
        return self._carried("_is_cell_cache")

    def resolve_class(self, text: str, depth: int = 0) -> "ClassInfo | str":
        """A base-class expression: a class of this file, else a qualified name, following module-level aliases
        (``Base = nn.Cell``); "?" when it is bound to something else."""
        if self.workspace is not None and (depth or text not in self.classes_by_name):
            found = self._workspace_class(text)
            if found is not None:
                return found
        if "." in text or text in self.imports:
            return self.resolve_dotted(text)
        local = self.class_named(text)
        if local is not None:
            return local
        values = [v for v in self.assignments.get(text, []) if is_module_level(v)]
        if len(values) == 1 and depth < 8:
            alias = dotted(values[0])
            if alias is not None and call_of(values[0]) is None and alias != text:
                return self.resolve_class(alias, depth + 1)
            return "?"
        return text

    def _workspace_class(self, text: str) -> ClassInfo | None:
        """The class another module of the project defines that ``text`` names through this module's imports
        (``workspace.Workspace.resolve_base``), memoised for the program; None: not one."""
        memo = self.__dict__.setdefault("_workspace_classes", {})
        if text not in memo:
            memo[text] = self.workspace.resolve_base(self, text)
        return memo[text]

    def _is_cell(self, cls: ClassInfo) -> bool:
        return any(isinstance(k, str) and (is_cell_name(k) or self.is_nn_layer(k)) for k in self.mro(cls))

    def is_nn_layer(self, qualname: str) -> bool:
        """A class MindSpore ships in ``mindspore.nn`` (every one of them is a Cell): ``nn.ReLU``, ``nn.Dense`` …"""
        memo = self._nn_layer_memo
        found = memo.get(qualname)
        if found is None:
            found = memo[qualname] = is_nn_layer_name(qualname, self.imports)
        return found

    @cached_property
    def _nn_layer_memo(self) -> dict:
        return self._carried("_nn_layer_memo")

    def is_primitive(self, cls: ClassInfo) -> bool:
        memo = self._is_primitive_cache
        found = memo.get(id(cls))
        if found is None:
            found = memo[id(cls)] = self._is_primitive(cls)
        return found

    @cached_property
    def _is_primitive_cache(self) -> dict:
        return self._carried("_is_primitive_cache")

    def _is_primitive(self, cls: ClassInfo) -> bool:
        return any(isinstance(k, str) and is_primitive_name(k) for k in self.mro(cls))

    def has_unknown_base(self, cls: ClassInfo) -> bool:
        """A base we cannot see into (an unresolved name that is not MindSpore's Cell/Primitive/object)."""
        for k in self.mro(cls):
            if isinstance(k, str) and not (
                k == "object"
                or is_cell_name(k)
                or self.is_nn_layer(k)
                or is_primitive_name(k)
            ):
                return True
        return False

    def lookup(self, cls: ClassInfo, name: str) -> Member | None:
        """The member ``name`` as attribute lookup finds it, or None (also None past an opaque base)."""
        memo = self._lookup_memo
        key = (id(cls), name)
        if key in memo:
            return memo[key]
        found = memo[key] = self._lookup(cls, name)
        if any(not isinstance(k, str) and k.__dict__.get("_members_reads_program") for k in self.mro(cls)):
            # through a class whose members are read against the program (``if FLAG:`` in its body): not carried
            # over to the next program of the document (``_carried_class_caches``)
            self._lookups_reading.add(key)
        return found

    @cached_property
    def _lookups_reading(self) -> set:
        return set()

    @cached_property
    def _lookup_memo(self) -> dict:
        return self._carried("_lookup_memo")

    def _lookup(self, cls: ClassInfo, name: str) -> Member | None:
        for k in self.mro(cls):
            if isinstance(k, str):
                if name != "bprop" and self.is_nn_layer(k):
                    return None  # a built-in layer's own construct etc.: see external_owner
                if k == "object" or is_cell_name(k) or is_primitive_name(k):
                    continue
                return None
            home = self if self.workspace is None else (k.program or self)
            late = home.attached.member(k, name) if home.attached.touches(k) else None
            if late is False:
                return None  # bound after the class statement in a way not read: unknown
            if late is not None:
                return late
            if name in k.members:
                return k.members[name]
        return None

    @cached_property
    def has_late_sources(self) -> bool:
        """Whether a statement of the file may bind a class's attributes after its class statement (read from each
        statement's words once, kept with its facts)."""
        found = False
        for top, _scan, facts in self._entries:
            source = facts.get("late_source")
            if source is None:
                source = facts["late_source"] = may_bind_late(statement_code(facts, top), statement_words(facts, top))
            found = found or source
        return found

    def bound_late(self, cls: ClassInfo) -> bool:
        """Whether something binds a tracked attribute (``bprop``, ``construct``) on a class of ``cls``'s MRO after
        its class statement, readably or not (``attached.py``)."""
        return self.has_late_sources and any(not isinstance(k, str) and self.attached.touches(k)
                                             for k in self.mro(cls))

    @cached_property
    def attached(self):
        """What the file binds on its classes after their ``class`` statements (``attached.py``)."""
        return attached_bindings(self)

    def external_owner(self, cls: ClassInfo, name: str) -> str | None:
        """The qualified name of the MindSpore layer whose ``name`` attribute lookup reaches (``nn.ReLU`` for the
        ``construct`` of ``class MyReLU(nn.ReLU)``), when no class of the file defines it first."""
        for k in self.mro(cls):
            if isinstance(k, str):
                return k if self.is_nn_layer(k) else None
            home = self if self.workspace is None else (k.program or self)
            if name in k.members or home.attached.member(k, name) is not None:
                return None
        return None

    def mode_settings(self) -> list[tuple[object, str]]:
        """Every ``set_context(mode=...)`` of the file: (the function it runs in, or None at module level; mode)."""
        found = self.__dict__.get("_mode_settings")
        if found is not None:
            return found
        by_statement = self._word_statements("set_context")
        if by_statement is None:
            found = mode_settings_at(self.nodes_matching("set_context", ("power", "atom_expr")))
        else:
            found = []
            for entry in by_statement:
                # read once per statement (what a set_context call sets, and the function it runs in, lie within it)
                settings = entry[0].get("mode_settings")
                if settings is None:
                    settings = entry[0]["mode_settings"] = mode_settings_at(
                        self._nodes_in([entry], "set_context", ("power", "atom_expr")))
                found += settings
        self.__dict__["_mode_settings"] = found
        return found

    def mode_hint(self) -> str | None:
        """"graph"/"pynative" when the file sets the execution mode (the last ``set_context`` in the text), else None."""
        settings = self.mode_settings()
        return settings[-1][1] if settings else None

    @cached_property
    def _mro_cache(self) -> dict:
        return self._carried("_mro_cache")

    def hierarchy_memo(self, kind: str, *, members: bool = False) -> dict:
        """A memo of per-class answers (id of one of the program's classes -> answer) read from the class's own
        code, the imports and the classes of its MRO alone (``Context.cell_sites``' first sieve), or (``members``)
        from those and the class's own lookups (``lookup(cls, ...)``: the members of its MRO's classes): carried
        from the document's last program like the MRO and the lookups are (``_carried_class_caches``)."""
        memos = self._member_memos if members else self._hierarchy_memos
        memo = memos.get(kind)
        if memo is None:
            memo = memos[kind] = {}
        return memo

    @cached_property
    def _hierarchy_memos(self) -> dict:
        return self._carried("_hierarchy_memos")

    @cached_property
    def _member_memos(self) -> dict:
        return self._carried("_member_memos")

    def _carried(self, name: str) -> dict:
        """This program's cache ``name`` (one of ``_CLASS_CACHES``): what the last program's held that a delta
        cannot have changed, or empty."""
        carried = self._carried_class_caches
        return carried.get(name, {}) if carried is not None else {}

    @cached_property
    def _carried_class_caches(self) -> dict | None:
        """The class caches of the document's last program (``_CLASS_CACHES``) with every answer the replaced
        statement may have changed dropped; None without a delta, or when the statement changed how a name
        resolves (the imports, its classes' names, its module-level bindings: ``_resolution_signature``).

        Resolving a base-class name reads only the imports, the last class of that name and the module-level
        bindings of the name; while those are what they were, every name resolves as before except to the
        replaced statement's classes, now their new counterparts. So an MRO (as computed) that holds none of the
        statement's old classes is still right, and so is every answer read from it: is_cell and is_primitive
        (the MRO and the imports), a lookup (the MRO and the members of its classes, unless a class read its
        members against the program: ``ClassInfo.members``, noted in ``_lookups_reading``), the hierarchy memos
        and the member memos (those of a class none of whose lookups read the program). The entries are the last
        program's classes' (ids of live objects: a class of the replaced statement is held by the delta)."""
        delta = self.delta
        if delta is None:
            return None
        before = delta.previous.__dict__
        if "_mro_cache" not in before:
            return None
        foreign = delta.previous.foreign
        if foreign and (self.workspace is None or any(self.workspace.digest(path) != digest
                                                      for path, digest in foreign.items())):
            return None  # another module a class was resolved through has changed
        for classes in (self.classes, before.get("classes")):
            if not classes or isinstance(classes[-1], SyntheticClass):
                return None  # (classes built with ``type(...)``, after the others, are new objects on every analysis)
        if (delta.old[1][0] or delta.new[1][0]) and self.imports != delta.previous.imports:
            return None
        if _resolution_signature(delta.old) != _resolution_signature(delta.new):
            return None
        if delta.previous.late_sources or self.has_late_sources:
            return None  # a lookup may read a binding made after a class statement (``attached.py``)
        old_classes = {id(c) for c in delta.old[1][1]}
        carried = {"_nn_layer_memo": dict(before.get("_nn_layer_memo", {}))}
        # A lookup reads the members of the MRO's classes: not carried through a class that reads them against the
        # program (its members are read again: ``if FLAG:`` in its body, and the statement may be ``FLAG = False``).
        lookups = dict(before.get("_lookup_memo", {}))
        reading = before.get("_lookups_reading", ())
        for key in reading:
            lookups.pop(key, None)
        reading_classes = {key[0] for key in reading}  # (whose member memos are not carried either)
        if not old_classes:
            # (the statement had no class: nothing was resolved to it, no class went and none came, so no key can
            # be the id of a class made since)
            for name in ("_mro_cache", "_acyclic_mro", "_is_cell_cache", "_is_primitive_cache"):
                carried[name] = dict(before.get(name, {}))
            carried["_hierarchy_memos"] = {kind: dict(memo) for kind, memo in before.get("_hierarchy_memos",
                                                                                          {}).items()}
            carried["_lookup_memo"] = lookups
            carried["_member_memos"] = {kind: _kept(memo, memo.keys() - reading_classes)
                                        for kind, memo in before.get("_member_memos", {}).items()}
            return carried
        # The last program's classes but the replaced statement's: all alive while this one is made, so no other
        # object has their ids (a class of another program asked about, since gone, may have left its id to a class
        # of the replaced statement's new code: not live, dropped).
        live = set(map(id, before["classes"])).difference(old_classes)

        # (the old classes are alive, held by the delta: no other object of an MRO has their id)
        disjoint = old_classes.isdisjoint
        mros = before["_mro_cache"]
        kept = carried["_mro_cache"] = {key: mro for key, mro in mros.items()
                                        if key in live and disjoint(map(id, mro))}
        carried["_acyclic_mro"] = {key: mro for key, mro in before.get("_acyclic_mro", {}).items()
                                   if key in live and disjoint(map(id, mro))}
        for name in ("_is_cell_cache", "_is_primitive_cache"):
            carried[name] = _kept(before.get(name, {}), kept)
        carried["_lookup_memo"] = {key: found for key, found in lookups.items() if key[0] in kept}
        # A hierarchy answer read without the MRO (no class of the file among the bases) holds while the class
        # does.
        # (its keys are the last program's classes: a class there and here is live)
        gone = old_classes.union(mros.keys() - kept.keys())
        carried["_hierarchy_memos"] = {kind: _kept(memo, memo.keys() - gone)
                                       for kind, memo in before.get("_hierarchy_memos", {}).items()}
        gone.update(reading_classes)
        carried["_member_memos"] = {kind: _kept(memo, memo.keys() - gone)
                                    for kind, memo in before.get("_member_memos", {}).items()}
        return carried

    def span(self, node_or_start, end=None):
        if end is None:
            start, end = node_or_start.start_pos, node_or_start.end_pos
        else:
            start = node_or_start
        return Span(Position(start[0] - 1, start[1]), Position(end[0] - 1, end[1]))


class _ProgramLineIndex(LineIndex):
    """The program's LineIndex: a line's text is read from the statement that holds it, so that asking for a few
    lines does not build the whole table (``starts``)."""

    def __init__(self, text: str, program: Program):
        super().__init__(text, program._lines)
        self._program = program

    def line_text(self, line: int) -> str:
        if self._starts is None:
            span = self._program._line_span(line)
            if span is not None:
                return self.text[span[0]:span[1]]
        return super().line_text(line)

    def offset(self, pos) -> int:
        if self._starts is None:
            span = self._program._line_span(pos.line)
            if span is not None:
                return min(span[0] + max(pos.column, 0), span[1])
        return super().offset(pos)



def _is_ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


# Runs of identifier characters (``\w`` is exactly ``_is_ident_char``).


def _word_hits(facts: dict, word: str) -> list[int]:
    """Offsets in a statement's code (``facts["code"]``) where the identifier ``word`` stands, kept in ``facts``.
    The code's ends count as boundaries: the layout guarantees no identifier runs across them."""
    cache = facts.setdefault("word_hits", {})
    hits = cache.get(word)
    if hits is None:
        hits = cache[word] = _identifier_offsets(facts["code"], word)
    return hits


def _identifier_offsets(text: str, word: str) -> list[int]:
    """Offsets in ``text`` where the identifier ``word`` stands (not inside a longer identifier)."""
    offsets = []
    start = text.find(word)
    while start != -1:
        end = start + len(word)
        if (start == 0 or not _is_ident_char(text[start - 1])) and (end == len(text) or not _is_ident_char(text[end])):
            offsets.append(start)
        start = text.find(word, end)
    return offsets



def _c3_merge(seqs: list[list]) -> list:
    """C3 merge; on an inconsistent hierarchy (Python would refuse it) the first remaining head is taken.

    Linear in the total length: a head is taken once no sequence holds it after its own first remaining entry
    (counted in ``tails``); taking a head drops every occurrence of it (``done``) and moves each sequence's
    start past the entries already taken."""
    seqs = [s for s in seqs if s]
    done: dict = {}  # entries taken (classes by identity, names by value: what ``in``/``==`` compare)
    tails: dict = {}  # entry -> occurrences after the first remaining entry of each sequence
    starts = [0] * len(seqs)
    for s in seqs:
        for x in s[1:]:
            tails[x] = tails.get(x, 0) + 1
    result = []
    live = list(range(len(seqs)))  # sequences with entries left, in order
    while live:
        head = None
        for i in live:
            candidate = seqs[i][starts[i]]
            if not tails.get(candidate):
                head = candidate
                break
        if head is None:
            head = seqs[live[0]][starts[live[0]]]
        result.append(head)
        done[head] = True
        still = []
        for i in live:
            s = seqs[i]
            k = starts[i]
            # drop the taken entries at the front; the new first entry leaves the tail
            while k < len(s) and s[k] in done:
                k += 1
            if k < len(s):
                if k != starts[i]:
                    tails[s[k]] -= 1
                starts[i] = k
                still.append(i)
        live = still
    return result
