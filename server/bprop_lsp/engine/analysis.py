"""The engine's entry points: ``analyze`` (one text, once: the CLI) and ``analyze_document`` (the current text of a
document whose parse state is kept: a ``DocumentSession``). The rules are handed in (``rules=``, a sequence of
``rule.Rule``): the engine imports none (``bprop_lsp.checker`` runs it with bprop-lsp's own).

What one analysis does is in pipeline.py (rules -> findings: severity from mode_evidence.py, ``# noqa`` from
noqa.py, what an editor shows beside them from hints.py); every fix is re-checked in fix_checks.py before it is
offered.
"""
from __future__ import annotations

import re
from typing import Sequence

from .fix_checks import check_all_fixes
from .parsing import ParsedDocument
from .pipeline import Analysis, analyze_module
from .rule import Rule
from .scope import CURRENT
from .settings import Settings

# A noqa comment naming one of our codes (or a look-alike): the files where the review of noqa comments may report.
_REVIEWED_NOQA = re.compile(r"noqa\s*:[^\n]*\b[Bb][Pp]", re.IGNORECASE)


def analyze(text: str, settings: Settings = Settings(), *, rules: Sequence[Rule], verify_fixes: bool = True,
            with_syntax_errors: bool = True, with_skeletons: bool = False, compiles: bool = False,
            pause=None, workspace=None, path: str | None = None, with_bprops: bool = True) -> Analysis:
    """Analyse ``text`` with ``rules`` once (the CLI; an editor keeps a ``DocumentSession`` per document instead).

    ``with_syntax_errors=False`` skips parso's error finder (a third of a keystroke's cost in a large file);
    ``Analysis.syntax_errors`` is then None and ``count_syntax_errors`` gives the number when a fix is checked.
    ``compiles=True`` (the caller knows CPython parses ``text``; the CLI checks) with neither syntax errors nor
    skeletons asked: only the statements that can affect a finding are parsed, when that can be told for certain
    (``engine/partial.py``); the findings are the same as a full parse's. ``pause()`` is called every few
    thousand tokens of the parse (background work giving way: ``preempt.py``; wrap the rules in
    ``preempt.polled`` for the rules' part). ``workspace`` (a ``Workspace``) and ``path``: ``text`` is that module
    of the project (a base imported from another module is read there: ``workspace.py``). ``with_bprops=False``:
    ``Analysis.bprops`` (hover, inlay hints) is left empty (a report needs none of it).
    """
    if workspace is not None:
        with workspace.scope(path):
            return analyze(text, settings, rules=rules, verify_fixes=verify_fixes,
                           with_syntax_errors=with_syntax_errors, with_skeletons=with_skeletons, compiles=compiles,
                           pause=pause, with_bprops=with_bprops)
    if pause is not None:
        doc = ParsedDocument()
        doc.pause = pause
        return analyze_document(doc, text, settings, rules=rules, verify_fixes=verify_fixes,
                                with_syntax_errors=with_syntax_errors, with_skeletons=with_skeletons,
                                with_bprops=with_bprops)
    if compiles and not with_syntax_errors and not with_skeletons and "bprop" in text and not _REVIEWED_NOQA.search(text) \
            and not _inherits_bprop(text):
        # (A ``# noqa: BPxxx`` is reviewed wherever it stands, which the partial parse would not read.)
        analysis = analyze_relevant(text, settings, rules=rules, verify_fixes=verify_fixes, with_bprops=with_bprops)
        if analysis is not None:
            return analysis
    return analyze_document(ParsedDocument(), text, settings, rules=rules, verify_fixes=verify_fixes,
                            with_syntax_errors=with_syntax_errors, with_skeletons=with_skeletons,
                            with_bprops=with_bprops)


def _inherits_bprop(text: str) -> bool:
    """Whether, in a workspace, a class of ``text`` with its own ``construct`` may inherit a bprop from another
    module of the project (``Workspace.may_inherit_bprop``): the file is then read whole, "bprop" in it or not."""
    scope = CURRENT.get()
    return scope is not None and "construct" in text and scope[0].may_inherit_bprop(text, scope[1])


def analyze_relevant(text: str, settings, *, rules, verify_fixes: bool, with_bprops: bool = True):
    """``analyze`` of ``text`` with ``rules`` (no syntax errors asked, no skeletons) from a parse of its
    relevant statements only; None when that cannot be done with certainty (then the caller parses ``text`` in
    full)."""
    from .partial import kept_lines, masked_text  # (only the CLI's one-shot analyses need it)

    masked = masked_text(text)
    if masked is None:
        return None
    doc = ParsedDocument()
    module = doc.parse_clean(masked)
    if module is None:
        return None  # not clean: the masking may be why; a full parse decides
    analysis = analyze_module(module, masked, settings, False, doc=doc, rules=rules, with_bprops=with_bprops)
    if any(f.fix is not None for f in analysis.findings):
        kept = kept_lines(text, masked)
        for f in analysis.findings:
            if f.fix is None:
                continue
            for edit in f.fix.edits:
                if kept is None or edit.span.start.line not in kept or edit.span.end.line not in kept:
                    return None
        if verify_fixes:
            check_all_fixes(analysis, masked, settings, doc, rules)
    return analysis


def analyze_document(doc: ParsedDocument, text: str, settings: Settings = Settings(), *, rules: Sequence[Rule],
                     verify_fixes: bool = True, with_syntax_errors: bool = True,
                     with_skeletons: bool = False, with_bprops: bool = True) -> Analysis:
    """Analyse ``text`` with ``rules``, the current text of the document whose parse state is ``doc`` (re-parsed
    incrementally)."""
    if "bprop" not in text and not (with_skeletons and "construct" in text) and not _inherits_bprop(text):
        # Every rule is about a custom bprop, bprop_getters or bprop_debug: nothing to find.
        doc.last_context = None
        return Analysis()
    module = doc.parse(text)
    # (Checking fixes needs no syntax errors of the whole file: see Baseline.)
    analysis = analyze_module(module, text, settings, with_syntax_errors, with_skeletons=with_skeletons, doc=doc,
                               rules=rules, with_bprops=with_bprops)
    if verify_fixes:
        check_all_fixes(analysis, text, settings, doc, rules)
    return analysis


