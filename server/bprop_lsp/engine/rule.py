"""What the engine needs of a rule: the ``Rule`` protocol. The engine imports no rule; every analysis is handed
a sequence of such objects (``bprop_lsp.rules.ALL_RULES`` holds bprop-lsp's own), and each reads the file through
the ``Context`` it is given.
"""
from __future__ import annotations

from typing import Any, Iterable, Protocol

from .context import Context


class Rule(Protocol):
    """What the engine needs of a rule (``bprop_lsp.rules.ALL_RULES`` holds such objects; the engine imports no
    rule, every analysis is handed its rules).

    ``check`` yields drafts: objects with ``span``, ``message``, ``fails_in`` (the modes MindSpore fails in),
    ``fix``, ``related``, ``noqa_line`` and ``subject`` (see ``rules/base.py``'s ``Draft``); the engine turns them
    into ``Finding``s (severity, ``# noqa``, fix checks). A rule whose ``scope`` is ``"cell"`` is run once per Cell
    site (``cell_runs.py``: a document reads a Cell's drafts back while what the run read reads the same); any
    other rule, or one without the attribute, runs once over the whole file."""

    code: str  # e.g. "BP001"
    name: str  # e.g. "bprop-missing-params"

    def url(self) -> str: ...

    def check(self, ctx: Context) -> Iterable[Any]: ...
