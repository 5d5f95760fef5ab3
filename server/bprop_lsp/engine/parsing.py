"""Parsing with parso: error-tolerant, exact positions, and incremental for a document that changes.

A :class:`ParsedDocument` is one document's parse state (its tree, the lines it was parsed from, the
per-statement caches keyed by that tree's top-level nodes, and its syntax-issue cache); it is owned by a
``DocumentSession`` and nothing here is shared between documents. Its incremental parse uses parso's diff parser
with changes that matter for an editor:

* the old/new line lists are matched by trimming their common prefix and suffix instead of
  ``difflib.SequenceMatcher`` over every line (60-100 % of the diff parser's cost for an in-line
  edit; the trees are the same, an edit is one changed block of lines), and a large changed middle by
  ``text.line_opcodes`` (about linear: difflib is cubic in the changes of a fix-all);
* an edit that stays inside one top-level statement (typing within a line, or lines added inside it) re-parses
  just that statement and splices it into the tree: no other node is touched, where parso's diff parser
  re-links every top-level node (most of an in-line edit's cost in a large file). The statement must parse on
  its own without errors into one statement, else the diff parser does the work.
* an edit inside one statement of a top-level class's or function's body, at any depth (a method, a line of a
  method: the usual keystroke in a model file) re-parses just that statement and puts it in new nodes around the
  old other ones (``_splice_in_body``): a line instead of the whole class. Lines inserted or removed inside a
  statement move the leaves below.
* lines are split without parso's per-line loop when no line can need its merging (``split_lines``).

Checking a fix never touches the document's tree: :meth:`ParsedDocument.fork` builds the fixed text's tree from
fresh parses of the statements the fix changes and the document's other top-level nodes, shared read-only.

If the diff parser fails on some input (parso has had such bugs), the text is parsed from scratch.
"""
from __future__ import annotations

import hashlib
import logging
import threading
from functools import lru_cache

import parso
from parso.python.diff import DiffParser
from parso.python.tree import Module
from parso.tree import Node
from parso.utils import split_lines as _parso_split_lines

from .text import LineIndex, common_ends
from .text import line_opcodes as _matched_lines
from parso.tree import BaseNode

_log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- parso's tree walks, without recursion
# parso's nodes find their positions, first and last leaves and code by recursing into their first or last child
# (``start_pos``, ``end_pos``, ``get_code`` ...): a call per level of the tree, so a valid expression a few hundred
# levels deep (``not not ... dout``, ``-...-x``, ``a if c else a if c else ...``, ``x ** x ** ...``, nested
# lambdas) raised RecursionError wherever a rule or a fix read one, and the finding was lost (issue 25, item 3).
# The same answers, walked in loops (installed once, for every tree: the engine reads no parso node otherwise).
def _first_leaf(node):
    while isinstance(node, BaseNode):
        node = node.children[0]
    return node


def _last_leaf(node):
    while isinstance(node, BaseNode):
        node = node.children[-1]
    return node


def _code_of_children(self, children, include_prefix):
    parts = []
    append = parts.append
    stack = children[::-1]
    pop, extend = stack.pop, stack.extend
    while stack:
        n = pop()
        if isinstance(n, BaseNode):
            extend(n.children[::-1])
        else:
            append(n.prefix)
            append(n.value)
    if not include_prefix and parts:
        parts[0] = ""
    return "".join(parts)


def _leaf_for_position(self, position, include_prefixes=False):
    if not ((1, 0) <= position <= self.children[-1].end_pos):
        raise ValueError('Please provide a position that exists within this node.')
    node = self
    while True:
        children = node.children
        lower, upper = 0, len(children) - 1
        while lower != upper:
            index = (lower + upper) // 2
            if position <= children[index].end_pos:
                upper = index
            else:
                lower = index + 1
        element = children[lower]
        if not include_prefixes and position < element.start_pos:
            return None  # on a prefix
        if not isinstance(element, BaseNode):
            return element
        node = element


# (parso's own, for the tests that compare the two)
_PARSO_WALKS = {name: BaseNode.__dict__[name] for name in (
    "start_pos", "end_pos", "get_start_pos_of_prefix", "get_first_leaf", "get_last_leaf", "_get_code_for_children",
    "get_leaf_for_position")}
def _start_pos(self):
    node = self.children[0]
    while isinstance(node, BaseNode):
        node = node.children[0]
    return node.line, node.column


def _end_pos(self):
    node = self.children[-1]
    while isinstance(node, BaseNode):
        node = node.children[-1]
    if node.type == "newline":
        # (parso's ``Leaf.end_pos`` splits the value by a regex: a newline's is one line break, or none at the end of
        # a file without one)
        value = node.value
        if value in ("\n", "\r\n", "\r"):
            return node.line + 1, 0
        if not value:
            return node.line, node.column
    return node.end_pos


BaseNode.start_pos = property(_start_pos)
BaseNode.end_pos = property(_end_pos)
BaseNode.get_start_pos_of_prefix = lambda self: _first_leaf(self).get_start_pos_of_prefix()
BaseNode.get_first_leaf = _first_leaf
BaseNode.get_last_leaf = _last_leaf
BaseNode._get_code_for_children = _code_of_children
BaseNode.get_leaf_for_position = _leaf_for_position
# The prefix of the keys of statement facts (Program.statement_facts) that hold positions: dropped when lines are
# inserted or removed above their statement; the others hold nodes, which move with their leaves.
POSITIONAL = "pos:"


# The characters ``str.splitlines`` breaks at that Python (and parso) does not: parso merges the lines split there.
_NON_BREAKS_LOW = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85")
_NON_BREAKS_HIGH = ("\u2028", "\u2029")


def split_lines(text: str) -> list[str]:
    """``parso.utils.split_lines(text, keepends=True)``, the same list, without parso's Python loop over every line
    when no line can need merging (none of the characters ``str.splitlines`` alone breaks at is in the text: a few
    C-speed scans; 4 ms -> 1.4 ms on a 10,000-line file)."""
    if any(c in text for c in _NON_BREAKS_LOW) or (not text.isascii() and any(c in text for c in _NON_BREAKS_HIGH)):
        return _parso_split_lines(text, keepends=True)
    lines = text.splitlines(True)
    if not text or text[-1] in "\r\n":
        lines.append("")
    return lines


def patched_lines(old_text: str | None, old_lines: list[str], text: str,
                  index: LineIndex | None = None) -> list[str] | None:
    """``split_lines(text)`` from ``old_lines`` (``split_lines(old_text)``): the lines around where ``text`` differs
    from ``old_text`` split afresh, the others the old line objects (list slices). None when that is not certain to
    equal a fresh split (a carriage return not followed by a line feed anywhere near: parso breaks lines there
    too), then the caller splits the whole text. A keystroke in a 10,000-line file: ~0.2 ms instead of ~1.3, and
    the line diff after it compares the untouched lines by identity. ``index``: ``old_text``'s line starts, which
    say which line the change starts on (see ``_patched``)."""
    patched = _patched(old_text, old_lines, text, index)
    return patched[0] if patched is not None else None


def _patched(old_text: str | None, old_lines: list[str], text: str,
             index: LineIndex | None) -> tuple[list[str], tuple[int, int, int] | None] | None:
    """(``patched_lines``, the characters that changed: (start, end in the old text, end in the new), None when
    none did)."""
    if old_text is None:
        return None
    if old_text is text:
        return old_lines, None
    n_old, n_new = len(old_text), len(text)
    # The common prefix, by bisection: each step compares (and copies) only the part not yet known to match.
    lo, hi = 0, min(n_old, n_new)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if text.startswith(old_text[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    prefix = lo
    if prefix == n_old == n_new:
        return old_lines, None
    # The common suffix, within what the prefix left.
    lo, hi = 0, min(n_old, n_new) - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if text.endswith(old_text[n_old - mid:n_old - lo], 0, n_new - lo):
            lo = mid
        else:
            hi = mid - 1
    suffix = lo
    # Whole lines around the change: from the start of the line holding the first changed character to the end of
    # the line holding the last (a line break in the common suffix ends it; else the text's end).
    start = old_text.rfind("\n", 0, prefix) + 1
    old_end = old_text.find("\n", n_old - suffix)
    old_end = n_old if old_end == -1 else old_end + 1
    new_end = n_new - (n_old - old_end)
    old_part, new_part = old_text[start:old_end], text[start:new_end]
    for t in (old_text, new_part):
        if "\r" in t and t.count("\r") != t.count("\r\n"):
            return None  # a lone ``\r`` breaks a line too: counting ``\n`` would not tell where lines are
    if index is not None and index.text is old_text and "\r" not in old_text:
        # (the line the change starts on from the line starts: counting the line breaks before it, in a text with
        # CJK comments, costs ~0.4 ms a keystroke)
        first = index._lines_up_to(start) - 1
    else:
        first = old_text.count("\n", 0, start)
    replaced = split_lines(new_part)
    if new_end < n_new:
        replaced.pop()  # the empty part after the region's last line break: the next line follows
    end = first + old_part.count("\n") + (1 if old_end == n_old else 0)
    return old_lines[:first] + replaced + old_lines[end:], (prefix, n_old - suffix, n_new - suffix)


@lru_cache(maxsize=1)
def grammar():
    return parso.load_grammar()


_SMALL = 8  # a changed block up to this many lines is re-parsed as one
# More changed blocks than this: parsed from scratch. Each block's copy of the old nodes after it lists every
# top-level node left (parso's ``_copy_nodes``): quadratic in the blocks (a fix-all's second pass over 5,000
# fixes spent most of its time there), where a full parse is linear in the lines.
_DIFF_MAX_CHANGES = 64


def line_opcodes(old: list[str], new: list[str]) -> list[tuple[str, int, int, int, int]]:
    """``SequenceMatcher.get_opcodes()``-shaped opcodes: the common prefix and suffix are found at C speed; a
    changed middle up to ``_SMALL`` lines is one block (re-parsed as one), a larger one (several distant changes:
    an edit plus a fix being checked, a fix-all) is matched by ``text.line_opcodes`` (about linear in the lines,
    where difflib is quadratic to cubic)."""
    n_old, n_new = len(old), len(new)
    prefix, suffix = common_ends(old, new, 0, n_old, 0, n_new)
    ops: list[tuple[str, int, int, int, int]] = []
    if prefix:
        ops.append(("equal", 0, prefix, 0, prefix))
    i2, j2 = n_old - suffix, n_new - suffix
    if i2 - prefix > _SMALL and j2 - prefix > _SMALL:
        for tag, a1, a2, b1, b2 in _matched_lines(old[prefix:i2], new[prefix:j2]):
            ops.append((tag, prefix + a1, prefix + a2, prefix + b1, prefix + b2))
    elif prefix < i2 and prefix < j2:
        ops.append(("replace", prefix, i2, prefix, j2))
    elif prefix < i2:
        ops.append(("delete", prefix, i2, prefix, j2))
    elif prefix < j2:
        ops.append(("insert", prefix, i2, prefix, j2))
    if suffix:
        ops.append(("equal", i2, n_old, j2, n_new))
    return ops


class _PrefixSuffixDiffParser(DiffParser):
    """parso's ``DiffParser.update`` with :func:`line_opcodes` in place of difflib."""

    def update(self, old_lines, new_lines, opcodes=None):
        self._module._used_names = None
        self._parser_lines_new = new_lines
        self._reset()
        line_length = len(new_lines)
        for operation, i1, i2, j1, j2 in (opcodes if opcodes is not None else line_opcodes(old_lines, new_lines)):
            if j2 == line_length and new_lines[-1] == "":
                j2 -= 1  # the empty part after the last newline is not relevant
            if operation == "equal":
                self._copy_from_old_parser(j1 - i1, i1 + 1, i2, j2)
            elif operation in ("replace", "insert"):
                self._parse(until_line=j2)
        self._nodes_tree.close()
        if self._module.end_pos[0] != line_length:
            raise ValueError(f"diff parse ended at line {self._module.end_pos[0]}, expected {line_length}")
        return self._module


def _full_parse(lines: list[str], pause=None) -> Module:
    g = grammar()
    parser = g._parser(g._pgen_grammar, error_recovery=True, start_nonterminal="file_input")
    tokens = g._tokenizer(lines)
    if pause is not None:
        from .preempt import paused_tokens

        tokens = paused_tokens(tokens, pause)
    return parser.parse(tokens=tokens)


_ERROR_TYPES = ("error_node", "error_leaf")


def _statement_at(children: list, i1: int, i2: int) -> tuple[int, int, int] | None:
    """(index, first, end): the top-level child whose lines (its prefix included), 0-based ``[first, end)``,
    hold the changed lines ``[i1, i2)``; None when no single statement does (or it is an error node or the end)."""
    # The first child ending after line i2: children are in line order.
    lo, hi = 0, len(children) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if children[mid].end_pos[0] - 1 < i2 or (children[mid].end_pos[0] - 1 == i2 and children[mid].end_pos[1] > 0):
            lo = mid + 1
        else:
            hi = mid
    index = lo
    child = children[index]
    if child.type in _ERROR_TYPES or child.type == "endmarker" or child.end_pos[1] != 0:
        return None
    start = children[index - 1].end_pos if index else (1, 0)
    if start[1] != 0:
        return None
    first, end = start[0] - 1, child.end_pos[0] - 1
    if not (first <= i1 and i2 <= end):
        return None
    return index, first, end


def _bounded(children: list, index: int) -> bool:
    """Whether top-level child ``index``'s neighbours leave it alone: the statement before it is no error node or
    leaf, and the one after it starts a statement at column 0 (or is the end). Otherwise what the statement's lines
    re-parsed alone give may not be what they give in place: a class header typed above an orphaned indented block
    (``error_leaf`` then a ``def`` at column 4) takes the block as its body in place, and an ``if`` typed above an
    orphaned ``else:`` takes the ``else``; an edit among them is left to the diff parser."""
    if index and children[index - 1].type in _ERROR_TYPES:
        return False
    if index + 1 < len(children):
        after = children[index + 1]
        if after.type in _ERROR_TYPES or (after.type != "endmarker" and after.start_pos[1] != 0):
            return False
        first = after.get_first_leaf()
        if first is not None and first.type == "error_leaf":
            return False
    return True


def _parse_statement(snippet: str, first: int, column: int | None = None):
    """``snippet`` (whole lines) parsed alone as exactly one error-free statement placed at 0-based line ``first``:
    a top-level statement, or (``column``) a statement of a body starting at that column, parsed after a
    ``class _:`` header line (see ``_splice_in_body``); None when it is not one, or something is left after it."""
    parts = grammar().parse(snippet if column is None else _BODY_HEADER + snippet, error_recovery=True).children
    if len(parts) != 2 or parts[1].type != "endmarker" or parts[1].prefix:
        return None
    node = parts[0]
    if column is not None:
        body = node.children[-1] if node.type == "classdef" else None
        if body is None or body.type != "suite" or len(body.children) != 2:
            return None
        node = body.children[1]
        if node.start_pos[1] != column:
            return None
        first -= 1  # the header is the snippet's first line
    leaves = _clean_leaves(node)
    if leaves is None:
        return None
    for leaf in leaves:
        leaf.line += first
    return node


def _splice(module: Module, old: list[str], new: list[str], leaves_of=None,
            clean=None) -> tuple[Module, int, int, str] | None:
    """Re-parse only the top-level statement an edit touched, or only the statement of a body inside it that the
    edit touched (see :func:`_splice_in_body`), in place: (module, index of the first top-level child after it,
    lines added (negative: removed), ``"member"`` or ``"statement"``), the children from that index on having been
    moved by that many lines; None when that is not possible (the edit spans statements, or the statement does not
    parse on its own as one clean statement). ``leaves_of(child)``: the leaves of a top-level child (a cache), for
    moving them; ``clean(child)``: whether a top-level child has no error node or leaf (a cache)."""
    if len(old) < 2 or len(new) < 2:
        return None
    changed = [op for op in line_opcodes(old, new) if op[0] != "equal"]
    if len(changed) != 1:
        return None
    _, i1, i2, j1, j2 = changed[0]
    delta = len(new) - len(old)
    children = module.children
    # Where the changed lines are: lines inserted between two statements (or members) may belong to either, the
    # one below (a blank or comment line, in its prefix) or the one above (a line typed below its last line).
    spans = [(i1, max(i2, i1 + 1))]
    if i1 == i2 and i1 > 0:
        spans.append((i1 - 1, i1))
    wheres = []
    for a, b in spans:
        where = _statement_at(children, a, b)
        if where is not None:
            wheres.append((where, a, b))
    # A statement parsed alone parses so in place only when what follows cannot continue it (see ``_bounded``).
    wheres = [w for w in wheres if _bounded(children, w[0][0])]
    node = None
    for (index, first, end), a, b in wheres:
        node = _splice_in_body(children[index], new, a, b, delta, clean)
        if node is not None:
            how = "member"
            break
    else:
        tried = set()
        for (index, first, end), _, _ in wheres:
            if index in tried:
                continue
            tried.add(index)
            node = _parse_statement("".join(new[first:end + delta]), first)
            if node is not None:
                how = "statement"
                break
    if node is None:
        return None
    node.parent = module
    children[index] = node
    if delta:
        # Positions live in the leaves (parso computes a node's from its first and last leaf): move every leaf
        # after the edit. No parsing, and the nodes keep their identity.
        for child in children[index + 1:]:
            for leaf in (leaves_of(child) if leaves_of is not None else leaves(child)):
                leaf.line += delta
    module._used_names = None
    return module, index + 1, delta, how


def _clean_leaves(node) -> list | None:
    """The leaves under ``node``; None when it holds an error node or leaf."""
    leaves = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in _ERROR_TYPES:
            return None
        kids = getattr(n, "children", None)
        if kids is None:
            leaves.append(n)
        else:
            stack.extend(kids)
    return leaves


_BODY_HEADER = "class _:\n"
# Statements with bodies, which an edit inside one statement of a body leaves as they are but for that statement;
# and the nodes wrapping one (the statement they wrap is their last child).
_WITH_BODIES = ("classdef", "funcdef", "if_stmt", "for_stmt", "while_stmt", "try_stmt", "with_stmt")
_WRAPPERS = ("decorated", "async_funcdef", "async_stmt")


def _splice_in_body(top, new: list[str], i1: int, i2: int, delta: int, clean=None):
    """A new top-level node for ``top``, a class or function statement (decorated or not) whose body holds the
    changed lines ``[i1, i2)`` (old 0-based lines) within one statement of a body, at any depth (a method, a
    statement of a method, of a loop in it …, with the comment and blank lines above it, which parso keeps in its
    first leaf's prefix): the innermost such statement re-parsed alone, every other node reused (their leaves
    below it moved by ``delta`` lines). None when that is not certain to give the tree a fresh parse gives, then
    the caller re-parses the whole statement:

    * ``top`` must hold no error node or leaf (parso's error recovery carries state from one statement to the
      next: dedents it drops): then the parser is in the same state where each statement of a body starts, the
      body at its column, and a statement re-parsed after a ``class _:`` header line parses as it would in place;
    * the statement's lines (from the previous statement's end, with ``new``'s lines) must parse after that header
      into exactly one clean statement, starting at the old statement's column, with nothing left after it (a
      comment typed below a body's last line belongs to the next statement's prefix: the snippet's end-marker
      would hold it). When the innermost statement does not, the one around it is tried, up to the members of
      ``top``'s own body.

    The nodes from ``top`` down to the re-parsed statement are new objects (the class or function, each body on
    the way, the ``decorated`` around them), so a top-level node never changes content under the same identity:
    every cache keyed by a top-level node (``ParsedDocument.statements`` and the statement facts in it, the leaves
    cache ...) sees a new statement. (A keystroke in a 20-line method re-parses one line of it: parso costs some
    12 microseconds a token.)"""
    if top.type not in ("classdef", "funcdef", *_WRAPPERS):
        return None
    if not (clean(top) if clean is not None else _clean_leaves(top) is not None):
        return None
    return _respliced(top, new, i1, i2, delta)


def _respliced(node, new: list[str], i1: int, i2: int, delta: int):
    """``node`` (a statement) renewed with the innermost statement of its bodies holding the changed lines
    re-parsed (see ``_splice_in_body``); None, with nothing changed, when no body of it holds them or no
    statement holding them re-parses cleanly."""
    if node.type in _WRAPPERS:
        inner = _respliced(node.children[-1], new, i1, i2, delta)
        return None if inner is None else _renewed(node, [*node.children[:-1], inner])
    if node.type not in _WITH_BODIES:
        return None
    for at, body in enumerate(node.children):
        # A body's statements start on the line after its header (``suite`` starts with the header's newline).
        if body.type != "suite" or not (body.start_pos[0] <= i1 and i2 <= body.end_pos[0] - 1):
            continue
        statements = body.children
        where = _statement_at(statements, i1, i2)
        if where is None or where[0] == 0:  # statements[0] is the newline ending the header: an edit of the header
            return None
        k, first, end = where
        fresh = _respliced(statements[k], new, i1, i2, delta)
        if fresh is None:
            fresh = _parse_statement("".join(new[first:end + delta]), first, statements[k].start_pos[1])
            if fresh is None:
                return None
        if delta:
            # the statements below it in this body, and the clauses after the body (``else:``, ``except …:``)
            for after in (*statements[k + 1:], *node.children[at + 1:]):
                for leaf in leaves(after):
                    leaf.line += delta
        renewed_body = _renewed(body, [*statements[:k], fresh, *statements[k + 1:]])
        return _renewed(node, [*node.children[:at], renewed_body, *node.children[at + 1:]])
    return None


def _renewed(node, children: list):
    """A new node of ``node``'s class and type with ``children`` (re-parented to it)."""
    fresh = object.__new__(type(node))
    if isinstance(node, Node):
        fresh.type = node.type
    fresh.children = children
    fresh.parent = None
    for child in children:
        child.parent = fresh
    return fresh


def leaves(node) -> list:
    """Every leaf under ``node``, last first, in a loop (user expressions may nest deeper than Python recurses)."""
    leaves = []
    stack = [node]
    pop, extend, append = stack.pop, stack.extend, leaves.append
    while stack:
        n = pop()
        kids = getattr(n, "children", None)
        if kids is None:
            append(n)
        else:
            extend(kids)
    return leaves


def parse_text(text: str) -> Module:
    """A one-off parse of ``text`` (nothing kept)."""
    return grammar().parse(text, error_recovery=True)


class ParsedDocument:
    """One document's parse state between versions: the tree, the lines it was parsed from, the per-statement
    scan cache (keyed by the identity of the tree's top-level nodes, see ``Program``) and the syntax-issue cache.

    Parses are serialised by the document's own lock. The tree returned by :meth:`parse` is updated in place by the
    next parse, so a caller finishes with it before parsing again (the server runs one analysis at a time).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.module: Module | None = None
        self.text: str | None = None
        self.lines: list[str] | None = None
        # Where the lines of ``text`` start, patched keystroke after keystroke (``patched_lines`` reads it).
        self._line_starts: LineIndex | None = None
        # id(top-level node) -> (node, scan results, statement facts): see ``Program._scan``.
        self.statements: dict[int, tuple] = {}
        # id(top-level node) -> (node, its leaves): what moves when lines are inserted or removed above it.
        self._leaves: dict[int, tuple] = {}
        # id(top-level statement) -> (node, whether it holds no error node or leaf): see ``_splice_in_body``.
        self._clean: dict[int, tuple] = {}
        self._issues = _IssueCache()
        # How the last parse went, for tests and benchmarks: "same", "member" (one statement of a body inside a
        # top-level class or function re-parsed),
        # "statement" (one top-level statement), "diff" (parso's diff parser) or "full".
        self.last_parse = None
        # The Cell-scoped rules' drafts per Cell (cell_runs.CellMemo): set by a DocumentSession, whose document is
        # analysed again and again; a one-off analysis has none.
        self.cell_memo = None
        # The whole-file tables of the last analysis of this tree (``program.ProgramTables``): the next program
        # patches them when a keystroke replaced one statement (``program.StatementDelta``).
        self.last_tables = None
        # The mode model's answers of the last analysis (mode_evidence.ModeMemo): set by a DocumentSession.
        self.mode_memo = None
        # (text, Context) of the last analysis that left its bprops for later (``pipeline.last_bprops``); any
        # parse drops it (the tree it reads is changed in place).
        self.last_context = None
        # Called every few thousand tokens of a full parse (``preempt.py``): the workspace scan's pause.
        self.pause = None

    def _leaves_of(self, child) -> list:
        entry = self._leaves.get(id(child))
        if entry is None or entry[0] is not child:
            entry = self._leaves[id(child)] = (child, leaves(child))
        return entry[1]

    def _clean_of(self, child) -> bool:
        entry = self._clean.get(id(child))
        if entry is None or entry[0] is not child:
            entry = self._clean[id(child)] = (child, _clean_leaves(child) is not None)
        return entry[1]

    def parse(self, text: str) -> Module:
        """The tree of ``text``; only what changed since the last parse is parsed again."""
        with self._lock:
            self.last_context = None
            old_module, old_lines = self.module, self.lines
            patched = _patched(self.text, old_lines, text, self._line_starts) if old_lines is not None else None
            if patched is None:
                lines = split_lines(text)
                line_starts = LineIndex(text, lines)
            else:
                lines, region = patched
                start, old_end, new_end = region if region is not None else (0, 0, 0)  # (an equal text)
                line_starts = self._line_starts
                line_starts = line_starts.replaced(start, old_end, text[start:new_end], result=text) \
                    if line_starts is not None and line_starts.text is self.text else LineIndex(text, lines)
            self._line_starts = line_starts
            module = None
            if old_module is not None:
                if old_lines == lines:
                    self.text = text
                    self.last_parse = "same"
                    return old_module
                spliced = _splice(old_module, old_lines, lines, self._leaves_of, self._clean_of)
                if spliced is not None:
                    module, moved_from, delta, self.last_parse = spliced
                    # The statement put in is clean (a spliced statement or member is checked for errors).
                    top = module.children[moved_from - 1]
                    self._clean[id(top)] = (top, True)
                    if max(len(self._leaves), len(self._clean)) > 2 * len(module.children):  # replaced statements'
                        live = {id(c) for c in module.children}
                        self._leaves = {k: v for k, v in self._leaves.items() if k in live}
                        self._clean = {k: v for k, v in self._clean.items() if k in live}
                    if delta:
                        # The moved statements' scan results and facts hold nodes, which moved with their leaves;
                        # facts that hold positions are read again.
                        for child in module.children[moved_from:]:
                            entry = self.statements.get(id(child))
                            if entry is not None and entry[0] is child:
                                facts = entry[2]
                                for key in [k for k in facts if k.startswith(POSITIONAL)]:
                                    del facts[key]
                else:
                    # The diff parser re-links nodes in place: caches keyed by top-level node are void.
                    self.statements.clear()
                    self._leaves.clear()
                    self._clean.clear()
                    try:
                        opcodes = line_opcodes(old_lines, lines)
                        if sum(op[0] != "equal" for op in opcodes) <= _DIFF_MAX_CHANGES:
                            g = grammar()
                            module = _PrefixSuffixDiffParser(g._pgen_grammar, g._tokenizer, old_module).update(
                                old_lines, lines, opcodes)
                            self.last_parse = "diff"
                    except Exception:  # noqa: BLE001 - a diff-parser bug must not cost the user their diagnostics
                        _log.warning("incremental parse failed; parsing from scratch", exc_info=True)
                        module = None
            if module is None:
                self.statements.clear()
                self._leaves.clear()
                self._clean.clear()
                module = _full_parse(lines, self.pause)
                self.last_parse = "full"
            self.module, self.text, self.lines = module, text, lines
            return module

    def parse_clean(self, text: str) -> Module | None:
        """The tree of ``text`` parsed afresh without error recovery (the same tree as :meth:`parse` gives for a
        text without syntax errors), kept as this document's; None, and nothing kept, when parso finds any error
        (``engine/partial.py`` then parses the real text in full)."""
        lines = split_lines(text)
        g = grammar()
        parser = g._parser(g._pgen_grammar, error_recovery=False, start_nonterminal="file_input")
        try:
            module = parser.parse(tokens=g._tokenizer(lines))
        except parso.ParserSyntaxError:
            return None
        with self._lock:
            self.statements.clear()
            self._leaves.clear()
            self._clean.clear()
            self.module, self.text, self.lines = module, text, lines
            self.last_parse = "full"
        return module

    def fork(self, base: str, text: str) -> tuple[Module, list[int], list[str]] | None:
        """A tree for ``text`` (``base``, the document's current text, with some edits, e.g. a fix) that leaves the
        document's tree untouched: the top-level statements the edits changed are parsed afresh, the others are
        the document's nodes, shared read-only (their ``parent`` stays the document's module). None when the
        document's tree is not ``base``'s, the edits change the line count, or a changed statement does not
        parse on its own as one clean statement: then the caller parses ``text`` in full. With the tree, the
        indices of the top-level statements parsed afresh and ``text``'s lines."""
        with self._lock:
            module, old = self.module, self.lines
            if module is None or not (self.text is base or self.text == base):
                return None
            new = split_lines(text)
            if len(new) != len(old):
                return None
            changed = [i for i, (a, b) in enumerate(zip(old, new)) if a is not b and a != b]
            children = list(module.children)
            if not changed:
                return module, [], new
            replaced: dict[int, tuple[int, int]] = {}
            for i in changed:
                where = _statement_at(children, i, i + 1)
                if where is None:
                    return None
                index, first, end = where
                if not _bounded(children, index):
                    return None
                replaced[index] = (first, end)
            for index, (first, end) in replaced.items():
                node = _parse_statement("".join(new[first:end]), first)
                if node is None:
                    return None
                children[index] = node
        fork = Module([])
        fork.children = children
        for index in replaced:
            children[index].parent = fork
        return fork, sorted(replaced), new

    def errors_added(self, fork: Module, lines: list[str], indices: list[int]) -> int | None:
        """How many more syntax errors the statements a fork re-parsed (``indices``; ``lines``: the fork's text's)
        and the statement before each have than the same statements of the document: under the per-statement
        model of syntax errors (see ``syntax_errors``) the difference between the whole trees' counts, without
        checking the unchanged statements. None when errors there depend on more than those statements: then
        the caller compares whole counts."""
        around = sorted({j for i in indices for j in (i - 1, i) if j >= 0})
        after = self._issues.errors(fork, lines, around)
        before = self._issues.errors(self.module, self.lines, around)
        if after is None or before is None:
            return None
        return len(after) - len(before)

    def syntax_errors(self, module: Module, text: str | None = None) -> list:
        """parso's syntax errors of ``module``: the document's tree, or a fork of it (then ``text`` is its text).

        Each top-level statement's errors are cached by its text, so an edit re-checks only the statements it
        touched (parso's error finder walks the whole tree otherwise). Trees whose errors depend on more than one
        statement (error nodes at module level, ``global``, ``nonlocal``, ``__future__`` imports) are checked as
        a whole.
        """
        lines = self.lines if text is None else split_lines(text)
        return self._issues.errors(module, lines)

    def close(self) -> None:
        with self._lock:
            self.module = self.text = self.lines = None
            self.statements.clear()
            self._leaves.clear()
            self._clean.clear()
            self._issues = _IssueCache()
            self.cell_memo = None
            self.last_tables = None
            self.mode_memo = None
            self.last_context = None


def syntax_errors(module: Module) -> list:
    """parso's syntax errors of a one-off tree."""
    return list(grammar().iter_errors(module))


class _Issue:
    """What the engine reads of a parso ``Issue``: positions, code and message."""

    __slots__ = ("start_pos", "end_pos", "code", "message")

    def __init__(self, start_pos, end_pos, code, message):
        self.start_pos, self.end_pos, self.code, self.message = start_pos, end_pos, code, message

    def __repr__(self):
        return f"<Issue {self.code} {self.start_pos}-{self.end_pos}: {self.message}>"


# Statements whose errors depend on what surrounds them at module level.
_CONTEXTUAL = ("error_node", "error_leaf")


def digest(text: str) -> bytes:
    """A 16-byte digest of ``text`` (statement codes, whole texts: what the caches compare)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _declares_scope(node) -> bool:
    """Whether a ``global`` or ``nonlocal`` statement is in ``node`` (their errors depend on the enclosing scopes)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("global_stmt", "nonlocal_stmt"):
            return True
        kids = getattr(n, "children", None)
        if kids:
            stack.extend(kids)
    return False


class _IssueCache:
    """Text of one top-level statement (with its position on its first line) -> its issues, relative to its
    first line. Two generations, so statements unchanged since the last few analyses hit and the cache stays
    bounded."""

    SIZE = 2_000  # entries before a generation turns over (at least four per statement of the document)

    def __init__(self) -> None:
        self.new: dict = {}
        self.old: dict = {}

    def errors(self, module: Module, lines: list[str], only: list[int] | None = None) -> list | None:
        """The module's issues; with ``only``, the issues of those top-level statements alone, or None when they
        depend on other statements (the whole module is then to be checked)."""
        g = grammar()
        if any(c.type in _CONTEXTUAL for c in module.children):
            return list(g.iter_errors(module)) if only is None else None
        keys = []
        children = module.children
        for index in (range(len(children)) if only is None else only):
            if index >= len(children):
                continue
            child = children[index]
            if child.type == "endmarker":
                continue
            (l0, c0), (l1, c1) = child.start_pos, child.end_pos
            text = "".join(lines[l0 - 1:l1])
            if ("nonlocal" in text or "global" in text) and _declares_scope(child):
                return list(g.iter_errors(module)) if only is None else None
            # Some issues sit on the leaf after the statement ("expected an indented block" at the next
            # statement, after blank lines in its prefix): that leaf is part of the key too.
            # (The first leaf of the next top-level child: ``get_next_leaf`` would search the module's children
            # with ``list.index``, quadratic over a file.)
            nxt = children[index + 1].get_first_leaf() if index + 1 < len(children) else None
            after = None if nxt is None else (nxt.type, nxt.start_pos[0] - l0, nxt.start_pos[1], nxt.end_pos[0] - l0,
                                              nxt.end_pos[1], nxt.prefix)
            # A ``from __future__`` import is valid only before other statements: checked every time (parso's
            # check reads the statements before it), never cached by its own text.
            # (The texts are kept as digests: a key per statement version, not a copy of each version's text.)
            key = None if "__future__" in text else (c0, c1, l1 - l0, digest(child.get_first_leaf().prefix),
                                                      digest(text), after[:5] + (digest(after[5]),) if after else None)
            keys.append((child, l0, key))
        issues: list = []
        for child, l0, key in keys:
            rel = None if key is None else self.new.get(key)
            if rel is None:
                rel = None if key is None else self.old.get(key)
                if rel is None:
                    rel = [((i.start_pos[0] - l0, i.start_pos[1]), (i.end_pos[0] - l0, i.end_pos[1]), i.code, i.message)
                           for i in g._get_normalizer_issues(child, g._error_normalizer_config)]
                if key is not None:
                    self.new[key] = rel
            for (sl, sc), (el, ec), code, message in rel:
                issues.append(_Issue((sl + l0, sc), (el + l0, ec), code, message))
        if len(self.new) > max(self.SIZE, 4 * len(children)):
            self.old, self.new = self.new, {}
        # parso keeps the first issue of each line (ErrorFinder.add_issue); two statements can each put one on the
        # same line (an issue placed on the next statement's first leaf), so keep the first here too.
        lines_seen: set = set()
        return [i for i in issues if not (i.start_pos[0] in lines_seen or lines_seen.add(i.start_pos[0]))]
