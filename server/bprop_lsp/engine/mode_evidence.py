"""The modes a finding's Cell runs in, read along the file's code paths (modes.py's model): the settings' mode, a
``set_context`` where the network runs, a gradient taken inside a ``@jit`` function, a test function's own class."""
from __future__ import annotations

import logging

from .context import Context
from .modes import ModeModel, Modes, exactly
from .settings import Settings

_log = logging.getLogger(__name__)


def file_modes(ctx: Context, settings: Settings) -> Modes | None:
    """The modes every finding of the file is judged by when the settings name one (else None: per finding)."""
    if settings.mode in ("graph", "pynative"):
        return exactly(settings.mode)
    return None


def modes_at(ctx: Context, settings: Settings, span, file_evidence: Modes | None) -> Modes | None:
    """The modes a finding's cell runs in (None: the file does not tell). The mode in effect is the one where the
    network runs, read along the file's code paths (engine/modes.py; bprop-rules.md, further behaviours 30, 31,
    43): a ``set_context`` inside the function that uses the cell beats the module's, a test function's own
    ``class Net`` is governed by that function's mode, and a gradient taken inside a ``@jit`` function that
    reaches the cell follows GRAPH's rules."""
    if settings.mode in ("graph", "pynative"):
        return file_evidence
    model = ctx.__dict__.get("_mode_model", False)
    if model is False:
        model = None
        p = ctx.program
        jit = jit_gradient_functions(ctx)
        if jit or p.text_contains("set_context"):
            model = ModeModel(p, jit)
        ctx.__dict__["_mode_model"] = model
    if model is None:
        return None
    try:
        leaf = ctx.program.module.get_leaf_for_position((span.start.line + 1, span.start.column))
        return model.of_finding(leaf) if leaf is not None else None
    except (Exception, RecursionError):  # noqa: BLE001 - a bug of ours here must cost the mode, not the findings
        _log.debug("reading the mode along the code paths failed; the mode stays unknown", exc_info=True)
        return None


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
