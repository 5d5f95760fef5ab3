"""The engine run with bprop-lsp's built-in rules: what the CLI, the server and the tests run.

The engine (``engine/``) imports no rule; every analysis is handed its rules. This module is the one place that
hands it bprop-lsp's own (``rules.ALL_RULES``):

    from bprop_lsp.checker import DocumentSession, analyze, fix_all
    analysis = analyze(text, settings)            # engine.analyze(text, settings, rules=RULES)
    session = DocumentSession(uri)                # engine.DocumentSession(uri, rules=RULES)
    fixed, count = fix_all(text, settings)        # engine.fix_all(text, settings, rules=RULES)
    merge(base, raw, source, rules=RULE_NAMES)    # settings checked against the built-in rules' codes

Importing this module loads neither parso nor the rules (the CLI imports it before it knows whether any file
needs analysis): ``RULES`` and ``DocumentSession`` load on first use (PEP 562), ``RULE_NAMES`` reads the registry
on its first lookup, the functions on their first call.
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping

from . import engine
from .engine.settings import Settings

__all__ = ["RULES", "RULE_NAMES", "DocumentSession", "analyze", "fix_all", "warm_up"]


def _registry():
    """``rules.ALL_RULES``, imported on first use (Python keeps the module: later calls cost a lookup)."""
    from .rules import ALL_RULES

    return ALL_RULES


class _RuleNames(Mapping):
    """Code -> name of every built-in rule (``BP001`` -> ``bprop-missing-params``), read from the registry when
    first looked up: settings are read before anything is analysed, and most name no rule."""

    def __getitem__(self, code: str) -> str:
        for rule in _registry():
            if rule.code == code:
                return rule.name
        raise KeyError(code)

    def __iter__(self) -> Iterator[str]:
        return (rule.code for rule in _registry())

    def __len__(self) -> int:
        return len(_registry())

    def __repr__(self) -> str:
        return f"RULE_NAMES({dict(self)!r})"


RULE_NAMES: Mapping[str, str] = _RuleNames()


def analyze(text: str, settings: Settings = Settings(), **options: Any) -> "engine.Analysis":
    """``engine.analyze`` with the built-in rules (``options``: its keyword arguments but ``rules``)."""
    return engine.analyze(text, settings, rules=_registry(), **options)


def fix_all(text: str, settings: Settings = Settings(), **options: Any) -> tuple[str, int]:
    """``engine.fix_all`` with the built-in rules (``include_unsafe=``, ``doc=``)."""
    return engine.fix_all(text, settings, rules=_registry(), **options)


def warm_up() -> None:
    """Load what the first analysis needs ahead of it: the built-in rules and the engine (parso's grammar)."""
    _registry()
    engine.warm_up()


def _session_class():
    class DocumentSession(engine.DocumentSession):
        """``engine.DocumentSession`` running the built-in rules."""

        def __init__(self, name: str | None = None):
            super().__init__(name, rules=_registry())

    DocumentSession.__module__, DocumentSession.__qualname__ = __name__, "DocumentSession"
    return DocumentSession


def __getattr__(name: str):
    if name == "RULES":
        value = _registry()
    elif name == "DocumentSession":
        value = _session_class()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return __all__
