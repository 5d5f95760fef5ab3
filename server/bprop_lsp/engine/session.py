"""One document's analysis state, kept between versions: the only thing the server holds per document.

    session = DocumentSession(rules=rules)             # the rules it runs, for its whole life
    analysis = session.analyse(text, settings)        # findings at once; their fixes not yet checked
    checked = session.verify(analysis, stale=lambda: False)   # fixes re-parsed and re-checked (None: stale)
    fixed, count = session.fix_all(text, settings)    # every safe fix applied, re-checked between passes
    plan = session.plan_skeletons(text, lines=(10, 12))   # where "Add a custom bprop" writes
    session.close()

``analyze()`` (analysis.py) is the one-shot form for the CLI: a scratch parse state, analyse, verify.
The engine imports no rule: ``rules`` is a sequence of ``rule.Rule`` (``bprop_lsp.checker.DocumentSession`` is a
session with bprop-lsp's own, ``rules.ALL_RULES``).

The session owns the document's ``ParsedDocument`` (tree, lines, per-statement facts, syntax-issue cache, the
Cell-scoped rules' drafts per Cell); no engine module keeps parse state of its own. One analysis at a time per
session: the tree one call returns is updated in place by the next parse.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from typing import Callable, Sequence

from .analysis import analyze_document
from .fix_checks import fixes_checked_together, verified_findings
from .cell_runs import CellMemo
from .mode_evidence import ModeMemo
from .fixes import fix_all as _fix_all
from .model import Finding
from .pipeline import Analysis, last_bprops
from .parsing import ParsedDocument
from .rule import Rule
from .settings import Settings

_log = logging.getLogger(__name__)


class DocumentSession:
    """Everything one document's analysis keeps between versions (parse state, facts)."""

    def __init__(self, name: str | None = None, *, rules: Sequence[Rule]):
        self.name = name  # for logs only
        self.rules = tuple(rules)  # what every analysis, fix check and fix-all of this document runs
        self._doc = ParsedDocument()
        self._doc.cell_memo = CellMemo()
        self._doc.mode_memo = ModeMemo()
        self._failures_logged: set[str] = set()

    def parse(self, text: str) -> None:
        """Parse ``text`` now (``analyse`` then finds the tree ready): lets an editor treat the tree, which lives as
        long as the document, apart from the analysis's temporaries (e.g. freeze it out of the collector's way)."""
        if "bprop" in text or "construct" in text:
            self._doc.parse(text)

    def analyse(self, text: str, settings: Settings = Settings(), *, with_syntax_errors: bool = False,
                with_skeletons: bool = False, with_bprops: bool = True, workspace=None,
                path: str | None = None) -> Analysis:
        """Findings for ``text``; ``Analysis.fixes_verified`` is False until ``verify`` has run.

        Syntax errors are left out unless asked for (parso's error finder is a third of a keystroke's cost in a
        large file; the fix checks count them when they need to); so are the skeletons of every Cell without a
        bprop (an editor asks ``plan_skeletons`` for the ones around the cursor instead). ``workspace`` (a
        ``Workspace``) and ``path``: the document is that module of the project (bases read across modules).
        ``with_bprops`` off: ``Analysis.bprops`` (hover, inlay hints) is left empty, and ``bprops(text)`` gives it
        once the findings are out (a keystroke's diagnostics need not wait for them); the session then keeps that
        analysis's Context, its Program with it, until the next parse."""
        if workspace is not None:
            with workspace.scope(path):
                return self.analyse(text, settings, with_syntax_errors=with_syntax_errors,
                                    with_skeletons=with_skeletons, with_bprops=with_bprops)
        analysis = analyze_document(self._doc, text, settings, rules=self.rules, verify_fixes=False,
                                    with_syntax_errors=with_syntax_errors, with_skeletons=with_skeletons,
                                    with_bprops=with_bprops)
        analysis.text = text
        analysis.settings = settings
        for message in analysis.failures:  # (once per document: not once per keystroke)
            if message not in self._failures_logged:
                self._failures_logged.add(message)
                _log.warning("%s: %s", self.name or "document", message)
        analysis.fixes_verified = not any(f.fix is not None for f in analysis.findings)
        return analysis

    def bprops(self, text: str) -> list | None:
        """The ``bprops`` of the last analysis, of ``text`` with ``with_bprops`` off; None when the document has
        been parsed since (or that analysis computed them itself, or was of another text)."""
        return last_bprops(self._doc, text)

    def verify(self, analysis: Analysis, *, stale: Callable[[], bool] | None = None) -> Analysis | None:
        """``analysis`` with every fix that does not re-parse and re-check removed; None once ``stale()``."""
        if analysis.fixes_verified:
            return analysis
        findings = self.check_fixes(analysis.findings, analysis.text, analysis.settings, stale=stale)
        if findings is None:
            return None
        return replace(analysis, findings=findings, fixes_verified=True)

    def check_fixes(self, findings: list[Finding], text: str, settings: Settings, *,
                    stale: Callable[[], bool] | None = None, rejected: list | None = None) -> list[Finding] | None:
        """``findings`` (of ``text``, the last text analysed) with every unsound fix removed; None once ``stale()``.
        Each fixed text is parsed as a fork of the document's tree (the statements the fix changes, parsed
        afresh): the document's own tree is never changed by a check."""
        return verified_findings(findings, text, settings, self._doc, rules=self.rules, stale=stale, rejected=rejected)

    def cleared_together(self, findings: list[Finding], text: str, settings: Settings, *,
                         stale: Callable[[], bool] | None = None) -> set[int] | None:
        """ids of the findings whose fixes pass when all of them are applied at once to ``text`` (one re-parse and
        one re-check); the others need a check of their own (``check_fixes``). None once ``stale()``."""
        return fixes_checked_together(findings, text, settings, self._doc, rules=self.rules, stale=stale)

    def fix_all(self, text: str, settings: Settings = Settings(), *, include_unsafe: bool = False) -> tuple[str, int]:
        """``text`` with every (safe) fix applied, and how many were applied (on a scratch parse state: the
        document keeps the tree of its own text)."""
        return _fix_all(text, settings, rules=self.rules, include_unsafe=include_unsafe)

    def plan_skeletons(self, text: str, *, lines: tuple[int, int] | None = None):
        """Where "Add a custom bprop" writes (skeletons.py), from the document's tree."""
        from .skeletons import plan_skeletons

        return plan_skeletons(text, doc=self._doc, lines=lines)

    def close(self) -> None:
        self._doc.close()

    def __enter__(self) -> "DocumentSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
