"""One document's analysis state, kept between versions: the only thing the server and the CLI hold.

    session = DocumentSession()
    analysis = session.analyse(text, settings)        # findings at once; their fixes not yet checked
    checked = session.verify(analysis, stale=lambda: False)   # fixes re-parsed and re-checked (None: stale)
    fixed, count = session.fix_all(text, settings)    # every safe fix applied, re-checked between passes
    session.close()

``analyze()`` (analysis.py) is the one-shot form: a fresh session, analyse, verify, close.
"""
from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Callable

from .analysis import Analysis, analyze, verified_findings
from .fixes import fix_all as _fix_all
from .parsing import forget
from .settings import Settings

_session_ids = itertools.count(1)


class DocumentSession:
    """Everything one document's analysis keeps between versions (parse state, facts, the last result)."""

    def __init__(self, name: str | None = None):
        # A private key into the parse cache; never a file path, never shared with another session.
        self._key = f"session:{next(_session_ids)}:{name or ''}"
        self._closed = False

    def analyse(self, text: str, settings: Settings = Settings()) -> Analysis:
        """Findings for ``text``; ``Analysis.fixes_verified`` is False until ``verify`` has run."""
        analysis = analyze(text, settings, cache_key=self._key, verify_fixes=False, with_syntax_errors=False,
                           with_skeletons=True)
        analysis.text = text
        analysis.settings = settings
        analysis.fixes_verified = not any(f.fix is not None for f in analysis.findings)
        return analysis

    def verify(self, analysis: Analysis, *, stale: Callable[[], bool] | None = None) -> Analysis | None:
        """``analysis`` with every fix that does not re-parse and re-check removed; None once ``stale()``."""
        if analysis.fixes_verified:
            return analysis
        findings = verified_findings(analysis.findings, analysis.text, analysis.settings, self._key, stale=stale)
        if findings is None:
            return None
        return replace(analysis, findings=findings, fixes_verified=True)

    def fix_all(self, text: str, settings: Settings = Settings(), *, include_unsafe: bool = False) -> tuple[str, int]:
        """``text`` with every (safe) fix applied, and how many were applied."""
        return _fix_all(text, settings, include_unsafe=include_unsafe)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            forget(self._key)

    def __enter__(self) -> "DocumentSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
