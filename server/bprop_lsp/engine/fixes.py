"""Applying fixes: one at a time (a quick fix) or all safe ones (``--fix``, ``source.fixAll``)."""
from __future__ import annotations

import gc
from bisect import bisect_left, bisect_right
from typing import Sequence

from .analysis import analyze_document
from .pipeline import Analysis
from .model import Edit, Finding
from .parsing import ParsedDocument
from .rule import Rule
from .settings import Settings
from .text import apply_edits

MAX_PASSES = 10


def apply_fix(text: str, finding: Finding) -> str:
    if finding.fix is None:
        return text
    return apply_edits(text, finding.fix.edits)


def _non_overlapping(findings: list[Finding], include_unsafe: bool) -> tuple[list[Edit], int]:
    """The edits of the (safe) fixes that overlap no fix chosen before them (in finding order), and the count of
    findings fixed. A span touching a chosen one counts as overlapping (an insertion at the end of a replaced span
    would be ambiguous). The chosen spans are kept sorted and never touch one another, so one bisection finds the
    only one a new span can meet: O(n log n) instead of comparing every pair (5,000 fixes: 12.5 M comparisons,
    and as many ``Edit`` equality tests to count them)."""
    chosen: list[Edit] = []
    starts: list = []  # chosen spans' starts, sorted
    ends: list = []  # their ends, in the same order
    for f in findings:
        if f.fix is None or not (f.fix.is_safe or include_unsafe):
            continue
        covered = [f.fix.repairs] if f.fix.repairs is not None else [e.span for e in f.fix.edits]
        spans = _union(sorted(((s.start.line, s.start.column), (s.end.line, s.end.column)) for s in covered))
        if any(_touches_chosen(starts, ends, a_start, a_end) for a_start, a_end in spans):
            continue  # overlaps a fix already chosen: the next pass picks it up
        for a_start, a_end in spans:
            at = bisect_left(starts, a_start)
            starts.insert(at, a_start)
            ends.insert(at, a_end)
        chosen.extend(f.fix.edits)
    # Counted as before: every finding one of whose edits is applied (two findings with the same fix: both).
    taken = set(chosen)
    count = sum(1 for f in findings if f.fix and any(e in taken for e in f.fix.edits))
    return chosen, count


def _union(spans: list) -> list:
    """Sorted (start, end) pairs with the touching ones joined (one fix's own edits may touch)."""
    out: list = []
    for start, end in spans:
        if out and not out[-1][1] < start:
            if out[-1][1] < end:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _touches_chosen(starts: list, ends: list, a_start, a_end) -> bool:
    """Whether ``[a_start, a_end]`` meets a chosen span ``[b_start, b_end]`` (``not (b_end < a_start or a_end <
    b_start)``). Chosen spans are disjoint and sorted, so their ends are sorted too: only the last one starting at
    or before ``a_end`` can reach ``a_start``."""
    at = bisect_right(starts, a_end)  # the spans from ``at`` on start after a_end
    return at > 0 and not ends[at - 1] < a_start


def fix_all(text: str, settings: Settings = Settings(), *, rules: Sequence[Rule], include_unsafe: bool = False,
            doc: ParsedDocument | None = None) -> tuple[str, int]:
    """Apply every (safe) fix of ``rules``' findings, re-analysing between passes until nothing changes.

    Returns the new text and the number of fixes applied. Each fix was re-parsed and re-checked
    before it is used here. ``doc``: parse state to re-parse each pass's text incrementally (a scratch one
    when not given; a document session passes its own).
    """
    doc = doc if doc is not None else ParsedDocument()
    applied = 0
    # The collector's automatic runs are off for the passes, and each pass's garbage (the last pass's tree, the
    # fixed texts' trees) goes in one collection per pass: left on, collections walk
    # the trees again and again as they grow (5,000 findings: about half of the time, growing faster than the
    # file). A caller that had it off (the server holds it off while a keystroke is analysed) keeps it off.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(MAX_PASSES):
            analysis: Analysis = analyze_document(doc, text, settings, rules=rules)
            edits, count = _non_overlapping(analysis.findings, include_unsafe)
            del analysis
            if was_enabled:
                gc.collect()
            if not edits:
                break
            text = apply_edits(text, edits)
            applied += count
    finally:
        if was_enabled:
            gc.enable()
    return text, applied
