"""Every fix re-checked before it is offered: the fixed text re-parsed (as a fork of the document's tree) and
re-analysed; a fix that adds a syntax error or leaves its finding is dropped. Checks give way to keystrokes
(preempt.py)."""
from __future__ import annotations

import bisect
import itertools
import logging
import re
from dataclasses import replace
from typing import Sequence

from .model import Finding, Position
from .parsing import ParsedDocument, parse_text
from .pipeline import Analysis, analyze_module, count_syntax_errors, parse_errors
from .preempt import Abandoned, polled, stop_when
from .rule import Rule
from .settings import Settings
from .text import apply_edits

_log = logging.getLogger(__name__)


# ----------------------------------------------------------------------------- fix checking
def check_all_fixes(analysis: Analysis, text: str, settings: Settings, doc: ParsedDocument | None,
                  rules: Sequence[Rule]) -> None:
    """Keep a fix only if the fixed text re-parses no worse and the finding is gone on re-check."""
    base_errors = len(analysis.syntax_errors) if analysis.syntax_errors is not None else None
    analysis.findings = verified_findings(analysis.findings, text, settings, doc, rules=rules,
                                          base_errors=base_errors, rejected=analysis.rejected_fixes)


def verified_findings(findings: list[Finding], text: str, settings: Settings, doc: ParsedDocument | None = None, *,
                      rules: Sequence[Rule], base_errors: int | None = None, stale=None,
                      rejected: list | None = None) -> list[Finding] | None:
    """``findings`` with every fix that does not pass ``check_fix`` removed (the finding itself stays); ``rules``:
    those the findings came from (each fixed text is checked with them again).

    ``doc``: the parse state whose current text is ``text`` (fixed texts are parsed as forks of its tree).
    ``stale()`` is asked before each check and inside each (between its steps, before each rule and after each
    finding a rule yields: ``preempt.py``): when it turns true the work stops and None is returned (the server
    drops checks of a document version that is no longer current, and gives the worker up to a keystroke).
    Rejected fixes are appended to ``rejected``.
    """
    base_errors = Baseline(text, doc, base_errors)
    poll = stop_when(stale)
    rules = polled(rules, poll)
    # Many fixes in one file: check them all in one re-parse and one re-analysis first (linear in the findings);
    # only those that batch does not clear are checked one by one.
    fixable = [f for f in findings if f.fix is not None]
    cleared: set[int] = set()
    out: list[Finding] = []
    try:
        if len(fixable) >= _BATCH_MIN and not (stale is not None and stale()):
            cleared = _batch_cleared(text, fixable, settings, base_errors, doc, rules, poll)
        for finding in findings:
            if finding.fix is None or id(finding) in cleared:
                out.append(finding)
                continue
            if stale is not None and stale():
                return None
            reason = check_fix(text, finding, settings, base_errors, doc, rules=rules, poll=poll)
            if reason is None:
                out.append(finding)
                continue
            if rejected is not None:
                rejected.append((finding, reason))
            out.append(replace(finding, fix=None))
    except Abandoned:
        return None
    return out


_BATCH_MIN = 4


class Baseline:
    """The document's syntax-error count, counted only if a check needs it: a fix parsed as a fork compares the
    statements it changed with the same statements before (``ParsedDocument.errors_added``), which needs no
    count of the whole file (a whole error-finder pass, most of a one-shot analysis's cost without it)."""

    def __init__(self, text: str, doc: ParsedDocument | None, known: "int | Baseline | None" = None):
        self.text, self.doc = text, doc
        self._count = known._count if isinstance(known, Baseline) else known

    def count(self) -> int:
        if self._count is None:
            self._count = count_syntax_errors(self.text, self.doc)
        return self._count


def fixes_checked_together(findings: list[Finding], text: str, settings: Settings,
                           doc: ParsedDocument | None = None, *, rules: Sequence[Rule],
                           stale=None) -> set[int] | None:
    """ids of the findings whose fix passes when every fix is applied at once (see ``_batch_cleared``); None when
    ``stale()``, asked as ``verified_findings`` asks it, turned true before the check was done."""
    fixable = [f for f in findings if f.fix is not None]
    if len(fixable) < 2:
        return set()
    poll = stop_when(stale)
    try:
        return _batch_cleared(text, fixable, settings, Baseline(text, doc), doc, polled(rules, poll), poll)
    except Abandoned:
        return None


def _parse_fixed(text: str, fixed: str, doc: ParsedDocument | None):
    """The tree of ``fixed`` (``text`` with a fix applied) and, when it is a fork of ``doc``'s tree (the fix's
    statements parsed afresh, the rest shared read-only), the indices of the statements parsed afresh and the
    fixed text's lines; a full parse (and None, None) when that is not possible."""
    if doc is not None:
        forked = doc.fork(text, fixed)
        if forked is not None:
            return forked
    return parse_text(fixed), None, None


def _batch_cleared(text: str, fixable: list[Finding], settings: Settings, base_errors: "Baseline",
                   doc: ParsedDocument | None, rules: Sequence[Rule], poll=None) -> set[int]:
    """ids of the findings whose fix is sound when every fix is applied at once: the text with all of them parses
    no worse, and each finding is gone at its (shifted) place. Empty when the fixes overlap or the combined text
    does not parse (then each is checked on its own)."""
    edits = sorted((e for f in fixable for e in f.fix.edits), key=lambda e: (e.span.start, e.span.end))
    for a, b in zip(edits, edits[1:]):
        if b.span.start < a.span.end or (b.span.start == a.span.start and a.span.start == a.span.end
                                           and b.span.start == b.span.end):
            return set()  # overlapping (or competing insertions at one point): check one by one
    try:
        fixed = apply_edits(text, edits)
    except ValueError:
        return set()
    try:
        after = _recheck(text, fixed, settings, tuple(sorted({f.code for f in fixable})), base_errors, doc, rules,
                         poll)
    except Exception:  # noqa: BLE001 - the batch is an optimisation: on any trouble, check one by one
        _log.debug("batch fix check failed; checking one by one", exc_info=True)
        return set()
    if after is None:
        return set()
    moved = _LineShift(edits)
    still = {(f.code, f.span.start.line) for f in after.findings}
    return {id(f) for f in fixable if (f.code, moved.line_of(f.span.start)) not in still}


class _LineShift:
    """Where a position's line is after non-overlapping edits: lines shift by the line breaks the edits before it
    add or remove (a prefix sum over the sorted edits); an edit replacing the position's start moves it to where
    the edit starts (e.g. its line deleted)."""

    _LINE_BREAKS = re.compile(r"\r\n|\r|\n")

    def __init__(self, edits) -> None:
        self.edits = sorted(edits, key=lambda e: (e.span.start, e.span.end))
        self.ends = [e.span.end for e in self.edits]
        self.deltas = list(itertools.accumulate(
            len(self._LINE_BREAKS.findall(e.new_text)) - (e.span.end.line - e.span.start.line) for e in self.edits))

    def line_of(self, start: Position) -> int:
        before = bisect.bisect_right(self.ends, start)  # edits ending at or before ``start``
        line = start.line + (self.deltas[before - 1] if before else 0)
        if before < len(self.edits) and self.edits[before].span.start <= start:
            line += self.edits[before].span.start.line - start.line
        return line


def _recheck(text: str, fixed: str, settings: Settings, codes: tuple[str, ...], base_errors: "Baseline",
             doc: ParsedDocument | None, rules: Sequence[Rule], poll=None) -> Analysis | None:
    """The findings of ``codes`` in ``fixed``, without fixes; None when ``fixed`` has more syntax errors than
    ``text``. ``poll()`` (may raise ``preempt.Abandoned``) is asked between the steps; ``rules`` ask it as they
    run (``preempt.polled``)."""
    module, indices, lines = _parse_fixed(text, fixed, doc)
    if poll is not None:
        poll()
    forked = indices is not None
    added = None
    if forked:
        try:
            added = doc.errors_added(module, lines, indices)
        except Exception:  # noqa: BLE001 - parso's error finder failing: count the whole trees below
            added = None
        if poll is not None:
            poll()
    if added is not None:
        if added > 0:
            return None
    elif len(parse_errors(module, doc if forked else None, fixed)) > base_errors.count():
        return None
    # Re-check with the findings' own rules only, and without building fixes: that is what "the finding is
    # gone" needs, and it keeps checking many fixes in one file from costing a full analysis each.
    only = replace(settings, select=codes, ignore=())
    return analyze_module(module, fixed, only, with_syntax_errors=False, want_fixes=False,
                           doc=doc if forked else None, fork=forked, lines=lines, rules=rules)


def check_fix(text: str, finding: Finding, settings: Settings, base_errors: "int | Baseline",
              doc: ParsedDocument | None = None, *, rules: Sequence[Rule], poll=None) -> str | None:
    """None if ``finding.fix`` is sound, else why not (``poll``: see ``_recheck``)."""
    fix = finding.fix
    assert fix is not None
    base_errors = base_errors if isinstance(base_errors, Baseline) else Baseline(text, doc, base_errors)
    try:
        fixed = apply_edits(text, fix.edits)
    except ValueError as exc:
        return f"edits overlap: {exc}"
    after = _recheck(text, fixed, settings, (finding.code,), base_errors, doc, rules, poll)
    if after is None:
        return "the fixed text does not parse"
    # The finding's line may have moved if the fix inserted lines above it.
    line = _LineShift(fix.edits).line_of(finding.span.start)
    if any(f.code == finding.code and f.span.start.line == line for f in after.findings):
        return "the finding is still reported after the fix"
    return None
