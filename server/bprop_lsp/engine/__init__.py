"""The pure analysis core: text and rules in, findings (with exact spans and fixes) out. No LSP types.

The engine imports no rule: every analysis is handed its rules (a sequence of ``Rule``, the protocol in rule.py),
as Fixit's engine is. ``bprop_lsp.checker`` is the engine with bprop-lsp's own rules (what the CLI, the server and
the tests run: ``checker.analyze(text, settings)``, ``checker.DocumentSession()``).

    from bprop_lsp.engine import analyze, Settings
    result = analyze(source_text, Settings(mode="auto"), rules=rules)
    result.findings   # list[Finding], sorted by position
    result.bprops     # list[BpropInfo], every custom bprop the engine recognised (hover, inlay hints)
    result.skeletons  # list[Skeleton], Cells that could take a custom bprop (a code action)

    session = DocumentSession(rules=rules)   # what an editor keeps per open document (see session.py)
    fixed, count = fix_all(source_text, settings, rules=rules)

Settings name rules by code: ``settings.merge(base, raw, source, rules=names)`` and ``settings_from_pyproject``
check ``select``/``ignore`` against ``names`` (code -> rule name).

Names are imported on first use (PEP 562): ``from bprop_lsp.engine import Settings`` loads the settings model
alone, not parso (the CLI reads every file of a tree before it knows whether any needs the engine).
"""
from __future__ import annotations

import importlib

# public name -> the engine module that defines it
_EXPORTS = {
    "Analysis": "pipeline", "BpropInfo": "hints", "Hint": "hints", "Skeleton": "hints",
    "analyze": "analysis",
    "apply_fix": "fixes", "fix_all": "fixes",
    "Applicability": "model", "Edit": "model", "Finding": "model", "Fix": "model", "Position": "model",
    "Related": "model", "Severity": "model", "Span": "model",
    "Rule": "rule",
    "DocumentSession": "session",
    "Abandoned": "preempt", "polled": "preempt",
    "Settings": "settings",
    "Workspace": "workspace", "import_words": "import_lines", "files_importing": "workspace", "project_root": "roots",
    "LineIndex": "text", "apply_edits": "text",
}

__all__ = sorted([*_EXPORTS, "warm_up"])


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__


def warm_up() -> None:
    """Load what the engine's first analysis needs (parso's grammar) ahead of it; the rules are the caller's to
    load (``bprop_lsp.checker.warm_up``)."""
    from .parsing import grammar

    grammar()
