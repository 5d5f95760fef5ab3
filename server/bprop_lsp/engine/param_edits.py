"""Text edits inside a ``def``'s parameter list that keep the user's layout.

Edits never leave the parentheses of the parameter list: single-line lists get ``, name``
inserted after a parameter; lists written one parameter per line get new lines with the same
indentation (tabs stay tabs, CRLF stays CRLF), comments and annotations untouched.
"""
from __future__ import annotations

from .definitions import Function, ParamInfo
from .model import Edit, Position, Span
from .text import LineIndex
from .trees import iter_own_nodes

DOUT_NAMES = {"dout", "d_out", "grad", "grads", "grad_out", "grad_output", "grad_outputs", "gradient", "dy", "gy",
              "g", "delta", "dz", "sens", "upstream", "grad_y", "dout_", "doutput", "d_output"}
OUT_NAMES = {"out", "output", "outputs", "outs", "out_", "fwd_out", "forward_out", "result", "res", "y_out"}


def is_dout_like(name: str) -> bool:
    return name in DOUT_NAMES or name.startswith("grad") or name.startswith("dout")


def is_out_like(name: str) -> bool:
    return name in OUT_NAMES or name.startswith("out")


def used_names(fn: Function, program=None):
    """Names a new parameter must not take: the function's parameters, every name it binds itself, and
    every name it reads that the module binds (a parameter would shadow it). A name the body reads but
    nothing binds — the seed's ``return 2 * dout, dout`` with ``dout`` missing — is exactly the name to add.

    With ``program``, what :func:`fresh` needs: a collection answering ``in`` and ``add``, asking the module only
    about the names a caller tries (each such question is a count over the file)."""
    if program is None:
        taken, read = _own_names(fn)
        return taken | read
    facts = program.statement_facts(fn.node).setdefault("own_names", {})
    entry = facts.get(id(fn.node))
    if entry is None or entry[0] is not fn.node:  # read once per def, kept with its top-level statement
        entry = facts[id(fn.node)] = (fn.node, _own_names(fn))
    taken, read = entry[1]
    return _TakenNames(set(taken), read, program, fn.node)


def _own_names(fn: Function) -> tuple[set[str], set[str]]:
    """(names the function binds, names it reads)."""
    taken = {p.name for p in fn.params}
    read: set[str] = set()
    definers: dict = {}
    for node in iter_own_nodes(fn.node):
        if node.type == "name":
            if _is_definition(node, definers):
                taken.add(node.value)
            else:
                read.add(node.value)
        elif node.type in ("funcdef", "classdef"):
            taken.add(node.name.value)
    return taken, read


# What parso's ``Name.get_definition`` looks for above a name (parso.python.tree._GET_DEFINITION_TYPES).
_DEFINERS = frozenset(("expr_stmt", "sync_comp_for", "with_stmt", "for_stmt", "import_name", "import_from", "param",
                       "del_stmt", "namedexpr_test"))


def _is_definition(name, definers: dict) -> bool:
    """``name.is_definition()``, with the statement parso's walk up from a name stops at kept for every node on the
    way (``definers``: one function's): parso walks from each name up to its statement, so the names of an
    expression thousands of levels deep (``f(f(f(...)))``) cost the square of its depth."""
    parent = name.parent
    if parent.type in ("funcdef", "classdef", "except_clause"):
        return name.is_definition()
    node, path, found = parent, [], False
    while node is not None:
        known = definers.get(id(node))
        if known is not None:
            found = known
            break
        path.append(node)
        if node.type == "suite" or node.type in _DEFINERS:
            found = node
            break
        node = node.parent
    for on_the_way in path:
        definers[id(on_the_way)] = found
    if found is False or found.type == "suite":
        return False
    names = definers.get(("names", id(found)))
    if names is None:
        names = definers[("names", id(found))] = found.get_defined_names(False)
    return name in names


class _TakenNames:
    """``used_names`` with a program: bound names, plus each read name the module binds, asked on first use."""

    def __init__(self, taken: set, read: set, program, inside):
        self._taken = taken
        self._read = read
        self._program = program
        self._inside = inside
        self._asked: dict = {}

    def __contains__(self, name: str) -> bool:
        if name in self._taken:
            return True
        if name not in self._read:
            return False
        if name not in self._asked:
            self._asked[name] = self._program.binds(name, self._inside)
        return self._asked[name]

    def add(self, name: str) -> None:
        self._taken.add(name)


def fresh(name: str, taken: set[str]) -> str:
    candidate = name
    i = 1
    while candidate in taken:
        candidate = f"{name}_{i}" if not name.endswith("_") else f"{name}{i}"
        i += 1
    taken.add(candidate)
    return candidate


def _pos(parso_pos) -> Position:
    return Position(parso_pos[0] - 1, parso_pos[1])


def _one_per_line(fn: Function, anchor: ParamInfo, index: LineIndex) -> bool:
    """True when ``anchor`` stands alone on its line and the closing parenthesis is on a later line."""
    params_node = fn.params_node
    close = params_node.children[-1]
    line = anchor.start[0]
    if close.start_pos[0] <= anchor.node.end_pos[0]:
        return False
    others = [p for p in fn.params if p is not anchor and (p.start[0] == line or p.node.end_pos[0] == line)]
    opening = params_node.children[0]
    return not others and opening.start_pos[0] != line


def parameters_span(fn: Function) -> Span | None:
    """The span of the def's parameter list, parentheses included (a lambda's: from its first parameter to its
    ``:``): what a fix that adds or renames parameters repairs (``Fix.repairs``)."""
    node = fn.node
    if fn.params_node is not None:
        return Span(_pos(fn.params_node.start_pos), _pos(fn.params_node.end_pos))
    if node.type == "lambdef":
        colon = next((c for c in node.children if c == ":"), None)
        if colon is None:
            return None
        return Span(_pos(node.children[0].end_pos), _pos(colon.start_pos))
    return None


def insert_after(fn: Function, anchor: ParamInfo | None, names: list[str], index: LineIndex) -> list[Edit]:
    """Edits inserting parameters ``names`` after ``anchor`` (None: first in the list)."""
    if not names:
        return []
    params_node = fn.params_node
    if params_node is None:  # a lambda: its parameters always sit on one logical line
        if anchor is None:
            return []
        end = _pos(anchor.content_end)
        return [Edit(Span(end, end), "".join(f", {n}" for n in names))]
    if anchor is None:
        # Before the first parameter, or into an empty list.
        first = next((p for p in fn.params), None)
        if first is None:
            at = _pos(params_node.children[0].end_pos)
            return [Edit(Span(at, at), ", ".join(names))]
        at = _pos(first.start)
        return [Edit(Span(at, at), ", ".join(names) + ", ")]
    end = _pos(anchor.content_end)
    if not _one_per_line(fn, anchor, index):
        return [Edit(Span(end, end), "".join(f", {n}" for n in names))]
    nl = index.newline()
    line_text = index.line_text(anchor.start[0] - 1)
    indent = line_text[: len(line_text) - len(line_text.lstrip())]
    has_comma = anchor.node.children[-1].type == "operator" and anchor.node.children[-1].value == ","
    edits = []
    if has_comma:
        new_lines = "".join(f"{indent}{n},{nl}" for n in names)
    else:
        edits.append(Edit(Span(end, end), ","))
        new_lines = "".join(f"{indent}{n},{nl}" for n in names[:-1]) + f"{indent}{names[-1]}{nl}"
    next_line = Position(anchor.node.end_pos[0], 0)  # 0-based index of the line after the anchor's line
    edits.append(Edit(Span(next_line, next_line), new_lines))
    return edits


def remove_params(fn: Function, remove: list[ParamInfo], index: LineIndex) -> list[Edit] | None:
    """Edits deleting ``remove`` from the list; None where the layout is too unusual to edit safely."""
    params = fn.params
    keep = [p for p in params if p not in remove]
    edits = []
    for p in remove:
        i = params.index(p)
        start = _pos(p.start)
        if p.node.children[-1].type == "operator" and p.node.children[-1].value == ",":
            # "x, " : delete the param with its comma up to the next parameter.
            nxt = params[i + 1] if i + 1 < len(params) else None
            end = _pos(nxt.start) if nxt is not None else _pos(p.node.end_pos)
            if nxt is not None and nxt in remove:
                end = _pos(p.node.end_pos)
        else:
            # The last parameter without a trailing comma: delete from the previous kept param's end.
            prev = next((q for q in reversed(params[:i]) if q not in remove), None)
            if prev is None:
                end = _pos(p.node.end_pos)
            else:
                start = _pos(prev.content_end)
                end = _pos(p.node.end_pos)
        edits.append(Edit(Span(start, end), ""))
    # Merge adjacent edits into one so that they never overlap.
    edits.sort(key=lambda e: (e.span.start, e.span.end))
    merged: list[Edit] = []
    for e in edits:
        if merged and merged[-1].span.end >= e.span.start:
            last = merged.pop()
            merged.append(Edit(Span(last.span.start, max(last.span.end, e.span.end)), ""))
        else:
            merged.append(e)
    if not keep and any("#" in index.text[index.offset(e.span.start): index.offset(e.span.end)] for e in merged):
        return None
    for e in merged:
        removed = index.text[index.offset(e.span.start): index.offset(e.span.end)]
        if "#" in removed:
            return None  # would delete a comment: leave it to the user
    return merged
