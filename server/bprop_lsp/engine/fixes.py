"""Applying fixes: one at a time (a quick fix) or all safe ones (``--fix``, ``source.fixAll``)."""
from __future__ import annotations

from typing import Sequence

from .analysis import Analysis, analyze_document
from .model import Edit, Finding, Rule
from .parsing import ParsedDocument
from .settings import Settings
from .text import apply_edits

MAX_PASSES = 10


def apply_fix(text: str, finding: Finding) -> str:
    if finding.fix is None:
        return text
    return apply_edits(text, finding.fix.edits)


def _non_overlapping(findings: list[Finding], include_unsafe: bool) -> list[Edit]:
    chosen: list[Edit] = []
    taken: list[tuple] = []
    for f in findings:
        if f.fix is None or not (f.fix.is_safe or include_unsafe):
            continue
        spans = [(e.span.start, e.span.end) for e in f.fix.edits]
        if any(not (b_end < a_start or a_end < b_start) for a_start, a_end in spans for b_start, b_end in taken):
            continue  # overlaps a fix already chosen: the next pass picks it up
        taken.extend(spans)
        chosen.extend(f.fix.edits)
    return chosen


def fix_all(text: str, settings: Settings = Settings(), *, rules: Sequence[Rule], include_unsafe: bool = False,
            doc: ParsedDocument | None = None) -> tuple[str, int]:
    """Apply every (safe) fix of ``rules``' findings, re-analysing between passes until nothing changes.

    Returns the new text and the number of fixes applied. Each fix was re-parsed and re-checked
    before it is used here. ``doc``: parse state to re-parse each pass's text incrementally (a scratch one
    when not given; a document session passes its own).
    """
    doc = doc if doc is not None else ParsedDocument()
    applied = 0
    for _ in range(MAX_PASSES):
        analysis: Analysis = analyze_document(doc, text, settings, rules=rules)
        edits = _non_overlapping(analysis.findings, include_unsafe)
        if not edits:
            break
        text = apply_edits(text, edits)
        applied += sum(1 for f in analysis.findings if f.fix and any(e in edits for e in f.fix.edits))
    return text, applied
