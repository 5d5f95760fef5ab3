"""The modes a finding's Cell runs in, read along the file's code paths (modes.py's model): the settings' mode, a
``set_context`` where the network runs, a gradient taken inside a ``@jit`` function, a test function's own class."""
from __future__ import annotations

import bisect
import logging
import os

from .context import Context
from .modes import _NOTHING, UNKNOWN, ModeModel, Modes, exactly, top_level_name
from .settings import Settings
from .trees import statement_code, statement_words

_log = logging.getLogger(__name__)


def file_modes(ctx: Context, settings: Settings) -> Modes | None:
    """The modes every finding of the file is judged by when the settings name one (else None: per finding)."""
    if settings.mode in ("graph", "pynative"):
        return exactly(settings.mode)
    return None


def modes_at(ctx: Context, settings: Settings, span, file_evidence: Modes | None,
             memo: "ModeMemo | None" = None) -> Modes | None:
    """The modes a finding's cell runs in (None: the file does not tell). The mode in effect is the one where the
    network runs, read along the file's code paths (engine/modes.py; bprop-rules.md, further behaviours 30, 31,
    43): a ``set_context`` inside the function that uses the cell beats the module's, a test function's own
    ``class Net`` is governed by that function's mode, and a gradient taken inside a ``@jit`` function that
    reaches the cell follows GRAPH's rules. With ``memo`` (a document's), an answer of the last analysis is read
    back while the edit since touched nothing it was read from (``ModeMemo``). Where the file tells nothing and
    sets no mode it cannot read, the modules of the workspace that import the cell tell (``entry_modes``)."""
    if settings.mode in ("graph", "pynative"):
        return file_evidence
    model = ctx.__dict__.get("_mode_model", False)
    if model is False:
        model = None
        p = ctx.program
        jit = jit_gradient_functions(ctx)
        setting = p.text_contains("set_context")
        if jit or setting:
            model = ModeModel(p, jit)
        ctx.__dict__["_mode_model"] = model
        if memo is not None:
            memo.begin(p, (setting, tuple(_located(p, node) for node in jit)))
    found = None
    if model is not None:
        found = _own_modes(ctx, model, span, memo)
    if (found is None or found == UNKNOWN) and ctx.program.workspace is not None and ctx.program.path:
        try:
            if model is None or not model.sets_an_unknown_mode():
                outside = entry_modes(ctx, settings, span)
                if outside is not None:
                    return outside
        except (Exception, RecursionError):  # noqa: BLE001 - as above: a bug here costs the mode only
            _log.debug("reading the mode from the importing modules failed; it stays unknown", exc_info=True)
    return found


def _own_modes(ctx: Context, model: ModeModel, span, memo) -> Modes | None:
    where = (span.start.line, span.start.column)
    if memo is not None:
        found = memo.answer(where)
        if found is not _MISSING:
            return found
    try:
        leaf = ctx.program.module.get_leaf_for_position((span.start.line + 1, span.start.column))
        found = model.of_finding(leaf) if leaf is not None else None
    except (Exception, RecursionError):  # noqa: BLE001 - a bug of ours here must cost the mode, not the findings
        _log.debug("reading the mode along the code paths failed; the mode stays unknown", exc_info=True)
        found = None
    if memo is not None:
        memo.keep(where, found, model.words)
    return found


_MAX_IMPORT_DEPTH = 4  # modules between the cell's and the one that sets the mode (layers -> model -> train)


def entry_modes(ctx: Context, settings: Settings, span) -> Modes | None:
    """The modes a finding's cell runs in as the workspace's modules that import it tell (the entry script that
    imports the network and calls ``set_context``), for a cell whose own file tells nothing: the union of the
    modes at its uses in each importing module (``ModeModel.uses_of_import``), read along that module's paths; a
    use whose mode that module does not tell either, inside one of its top-level classes or functions, is asked
    of that one's importers in turn (``layers.py``'s cell used in ``model.py``'s ``Net``, which ``train.py``
    runs), up to ``_MAX_IMPORT_DEPTH`` modules; a module that sets a mode it does not spell is not followed.
    None: no module tells. The files read are the analysed module's dependencies (``Workspace.importers``); the
    ``set_context`` calls that told are kept for the finding's related notes (``entry_notes``)."""
    program = ctx.program
    leaf = program.module.get_leaf_for_position((span.start.line + 1, span.start.column))
    name = top_level_name(leaf) if leaf is not None else None
    if name is None:
        return None
    notes = ctx.__dict__.setdefault("_entry_notes", {})
    key = (span.start.line, span.start.column)
    found_notes: dict = {}
    result = _Outside(ctx, settings, found_notes).modes(program, name, 0)
    notes[key] = (name, found_notes)
    if not result.possible or result == UNKNOWN:
        return None
    return result


class _Outside:
    def __init__(self, ctx: Context, settings: Settings, notes: dict):
        self.ctx, self.settings, self.notes = ctx, settings, notes
        self.asking = ctx.program.path
        self.seen: set = set()
        self.models = ctx.__dict__.setdefault("_importer_models", {})

    def model(self, program) -> ModeModel:
        found = self.models.get(id(program))
        if found is None or found[0] is not program:
            view = Context(program, self.settings)
            found = self.models[id(program)] = (program, ModeModel(program, jit_gradient_functions(view)))
        return found[1]

    def modes(self, program, name: str, depth: int) -> Modes:
        key = (program.path, name)
        if depth > _MAX_IMPORT_DEPTH or key in self.seen:
            return _NOTHING
        self.seen.add(key)
        result = _NOTHING
        own = self.model(program)
        for use in own.top_level_uses(name):  # ``self.scale = ScaleCell()`` in the module's own ``Net``
            user = top_level_name(use)
            if user is not None and user != name:
                result = result | self.modes(program, user, depth + 1)
        importers = program.workspace.importers(program.path, name, self.asking)
        if importers is None:
            return UNKNOWN  # (the project's files not indexed yet: the server asks again once they are)
        for importer, bound, scope, attributes in importers:
            model = self.model(importer)
            for use in model.uses_of_import(bound, scope, attributes):
                found = model.use_modes(use)
                if found == UNKNOWN and not model.sets_an_unknown_mode():
                    user = top_level_name(use)
                    deeper = self.modes(importer, user, depth + 1) if user is not None else _NOTHING
                    if deeper.possible:
                        found = deeper
                elif found.known:
                    self._note(importer, model, use, found.known)
                result = result | found
        return result

    def _note(self, program, model: ModeModel, use, known) -> None:
        """Where ``program`` (another module) sets a mode in ``known``: its ``set_context`` call, else the use."""
        for mode in known:
            if mode in self.notes:
                continue
            calls = [call for events in model.events.values() for call, m in events if m == mode]
            calls.sort(key=lambda c: c.start_pos)
            before = [c for c in calls if c.start_pos < use.start_pos]
            node = (before or calls or [use])[-1 if before else 0]
            self.notes[mode] = (program, node, bool(calls))


def entry_notes(ctx: Context, span, modes) -> list:
    """``(path, span, message)`` for each mode of ``modes`` that another module's ``set_context`` (or use of the
    cell) told ``entry_modes`` for the finding at ``span``: the related notes that name that file."""
    found = ctx.__dict__.get("_entry_notes", {}).get((span.start.line, span.start.column))
    if not found:
        return []
    name, notes = found
    result = []
    for mode in sorted(modes):
        entry = notes.get(mode)
        if entry is None:
            continue
        program, node, is_call = entry
        label = _MODE_LABELS[mode]
        where = os.path.basename(program.path)
        message = f"{name} runs in {label}: {where} sets it here" if is_call else f"{name} runs in {label} here"
        result.append((program.path, program.span(node), message))
    return result


_MODE_LABELS = {"graph": "GRAPH_MODE", "pynative": "PYNATIVE_MODE"}


_MISSING = object()


def _located(program, node) -> tuple:
    """A funcdef's place within its top-level statement, and the digest of that statement."""
    top = node
    while top.parent is not None and top.parent.type != "file_input":
        top = top.parent
    line, column = node.start_pos
    return line - top.start_pos[0], column, program.statement_digest(program.statement_facts(top), top)


class ModeMemo:
    """A document's answers of ``modes_at`` (the mode model's, per finding place), kept from one analysis to the next
    while every top-level statement of the text whose code spells one of the words the answers were read from
    (``ModeModel.words``: every statement the model reads it found by one of them, and walks no further than that
    statement) is still there, the same code in the same order (moved, when lines were added or removed above it),
    every statement that went, came or changed spells none of them and holds no ``set_context``, and the ``@jit``
    gradient functions are the same. An answer moves with its statement; one in a statement that went or changed
    is asked again."""

    def __init__(self):
        self._answers: dict = {}
        self._words: set[str] = set()
        self._gate = None
        # What the analysis the answers are of hands on (None until it is done: one that stops half-way hands
        # nothing on): its ``ProgramTables`` (the program a delta is from) and its statements' layout.
        self._tables = None
        self._layout = None
        self._begun = None  # the program of the analysis asking now
        self.reused = self.asked = 0  # (for tests and benchmarks)

    def begin(self, program, gate) -> None:
        if gate != self._gate or not self._holds(program):
            self._answers, self._words = {}, set()
        self._gate = gate
        self._begun = program
        self._tables = self._layout = None
        self.reused = self.asked = 0

    def answer(self, where):
        self.asked += 1
        found = self._answers.get(where, _MISSING)
        if found is not _MISSING:
            self.reused += 1
        return found

    def keep(self, where, modes, words) -> None:
        self._answers[where] = modes
        self._words |= words

    def advance(self, program, tables) -> None:
        """The analysis of ``program`` is done (``tables``: what it hands to the next)."""
        if self._begun is not program and not self._holds(program):
            self._answers, self._words = {}, set()
        self._tables = tables
        self._layout = program.statement_layout(full=True) if self._answers else None
        self._begun = None

    def _holds(self, program) -> bool:
        if not self._answers:
            return True
        delta = program.delta
        if delta is not None and self._tables is not None and delta.previous is self._tables:
            return self._holds_replaced(delta)
        return self._holds_moved(program)

    def _untouched(self, facts: dict) -> bool:
        """Whether a statement that went, came or changed leaves the answers as they were."""
        code = facts.get("code")
        if code is None or "set_context" in code:
            return False
        return self._words.isdisjoint(statement_words(facts, None))

    def _holds_replaced(self, delta) -> bool:
        (_old, _, old_facts), (new, _, new_facts) = delta.old, delta.new
        statement_code(new_facts, new)
        if not self._untouched(old_facts) or not self._untouched(new_facts):
            return False
        first, last = new.start_pos[0] - 1, new.end_pos[0] - 1  # (span lines count from 0)
        for where in [w for w in self._answers if first <= w[0] <= last]:
            del self._answers[where]
        return True

    def _holds_moved(self, program) -> bool:
        before = self._layout
        if before is None:
            return False
        after = program.statement_layout(full=True)
        # The k-th statement of a digest then is the k-th of that digest now; the others went or came.
        now: dict[bytes, list[int]] = {}
        for j, entry in enumerate(after):
            now.setdefault(entry[1], []).append(j)
        seen: dict[bytes, int] = {}
        to: list = []
        last = -1
        for _line, digest_, facts in before:
            k = seen.get(digest_, 0)
            seen[digest_] = k + 1
            found = now.get(digest_)
            j = found[k] if found is not None and k < len(found) else None
            if j is not None:
                if j < last:
                    return False  # (statements in another order)
                last = j
            elif not self._untouched(facts):
                return False
            to.append(j)
        kept = {j for j in to if j is not None}
        if any(j not in kept and not self._untouched(entry[2]) for j, entry in enumerate(after)):
            return False
        starts = [entry[0] for entry in before]
        answers = {}
        for (line, column), modes in self._answers.items():
            i = bisect.bisect_right(starts, line + 1) - 1
            if i < 0 or to[i] is None:
                continue  # (in a statement that went or changed)
            shift = after[to[i]][0] - before[i][0]
            if i + 1 < len(before) and (to[i + 1] is None or after[to[i + 1]][0] - before[i + 1][0] != shift):
                continue  # (the lines between it and the next, that next statement's prefix, may have changed)
            answers[(line + shift, column)] = modes
        self._answers = answers
        return True


def jit_gradient_functions(ctx: Context) -> list:
    """``@jit`` functions that take a gradient (bprop-rules.md, further behaviours 31)."""
    cached = ctx.__dict__.get("jit_gradient_functions")
    if cached is None:
        from .mindspore_api import JIT_NAMES, is_mindspore

        cached = []
        p = ctx.program
        if p.text_contains("jit") or p.text_contains("ms_function"):
            for facts, fns in p.functions_by_statement():
                # The decorated functions that take a gradient, kept with their statement (asked first, it spares
                # most ``@jit`` constructs of a model file resolving their decorators on every keystroke)
                candidates = facts.get("decorated_gradient_functions")
                if candidates is None:
                    candidates = facts["decorated_gradient_functions"] = [
                        fn for fn in fns if fn.name != "bprop" and fn.decorators and _function_takes_gradient(fn)]
                for fn in candidates:
                    if any(n and is_mindspore(p.resolve_dotted(n), JIT_NAMES, bare=("jit", "ms.jit", "ms_function"))
                           for n in fn.decorator_names):
                        cached.append(fn.node)
        ctx.__dict__["jit_gradient_functions"] = cached
    return cached


def _function_takes_gradient(fn) -> bool:
    """``_takes_gradient`` of the function's code, read once per Function (they are kept with their statement)."""
    found = fn.__dict__.get("_takes_gradient")
    if found is None:
        found = fn.__dict__["_takes_gradient"] = _takes_gradient(fn.node.get_code())
    return found


def _takes_gradient(code: str) -> bool:
    return any(word in code for word in ("grad", "Grad", "vjp", "jvp", "TrainOneStep"))


def in_a_local_class(ctx: Context, span) -> bool:
    """Whether the span lies in a class statement inside a function (a test function's own ``class Net``): such a
    class is used only where that function runs, so a mode known there is the only one it ever runs in."""
    leaf = ctx.program.module.get_leaf_for_position((span.start.line + 1, span.start.column))
    node = leaf
    while node is not None and node.type != "classdef":
        node = node.parent
    while node is not None and node.type != "file_input":
        node = node.parent
        if node is not None and node.type in ("funcdef", "lambdef"):
            return True
    return False
