"""The pure analysis core: text in, findings (with exact spans and fixes) out. No LSP types.

    from bprop_lsp.engine import analyze, Settings
    result = analyze(source_text, Settings(mode="auto"))
    result.findings   # list[Finding], sorted by position
    result.bprops     # list[BpropInfo], every custom bprop the engine recognised (hover, inlay hints)
    result.skeletons  # list[Skeleton], Cells that could take a custom bprop (a code action)

    session = DocumentSession()   # what an editor keeps per open document (see session.py)

Names are imported on first use (PEP 562): ``from bprop_lsp.engine import Settings`` loads the settings model
alone, not parso and the rules (the CLI reads every file of a tree before it knows whether any needs the engine).
"""
from __future__ import annotations

import importlib

# public name -> the engine module that defines it
_EXPORTS = {
    "Analysis": "analysis", "BpropInfo": "analysis", "Hint": "analysis", "Skeleton": "analysis",
    "analyze": "analysis",
    "apply_fix": "fixes", "fix_all": "fixes",
    "Applicability": "model", "Edit": "model", "Finding": "model", "Fix": "model", "Position": "model",
    "Related": "model", "Severity": "model", "Span": "model",
    "DocumentSession": "session",
    "Settings": "settings",
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
    """Load what the first analysis needs (the rules, parso's grammar) ahead of it."""
    from ..rules import ALL_RULES  # noqa: F401
    from .parsing import grammar

    grammar()
