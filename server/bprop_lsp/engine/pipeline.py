"""One analysis of one file: every enabled rule run over it (the Cell-scoped ones per Cell: cell_runs.py), the
rules' drafts turned into findings -- severity from the modes MindSpore fails in and the mode the code runs in
(mode_evidence.py), ``# noqa`` applied (noqa.py), one finding per mistake -- and what an editor shows beside them
(hints.py). The rules are handed in: the engine imports none."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Sequence

from .cell_runs import cell_drafts, foreign_site_drafts
from .context import Context
from .hints import BpropInfo, Skeleton, bprop_infos, skeletons_of
from .mode_evidence import entry_notes, file_modes, in_a_local_class, modes_at
from .model import Finding, Position, Related, Severity, Span
from .modes import Modes
from .noqa import noqa_directives, noqa_lines
from .parsing import ParsedDocument, parse_text, syntax_errors
from .program import Program
from .rule import Rule
from .settings import Settings

_log = logging.getLogger(__name__)


MODE_LABEL = {"graph": "GRAPH_MODE", "pynative": "PYNATIVE_MODE"}


@dataclass
class Analysis:
    findings: list[Finding] = field(default_factory=list)
    bprops: list[BpropInfo] = field(default_factory=list)
    # parso's syntax errors as (span, message): findings are still produced where the structure reads.
    # None when the caller did not ask for them (the server's keystroke path; see ``analyze``).
    syntax_errors: list[tuple[Span, str]] | None = field(default_factory=list)
    # Fixes dropped because the fixed text did not re-parse or re-check (kept for diagnostics/tests).
    rejected_fixes: list[tuple[Finding, str]] = field(default_factory=list)
    # Cells that could take a custom bprop ("Add a custom bprop" code action).
    skeletons: list[Skeleton] = field(default_factory=list)
    # What the findings were computed from (set by DocumentSession).
    text: str | None = None
    settings: Settings | None = None
    # Whether every fix in ``findings`` has been re-parsed and re-checked.
    fixes_verified: bool = True
    # What could not be done for this file, for the user (a rule that raised on this input: its findings are
    # dropped; a fix that could not be built: its finding is reported without it). The CLI prints each with the
    # file's name; a DocumentSession logs each once with the document's.
    failures: list[str] = field(default_factory=list)


def _local(draft, program, rule=None):
    """``draft`` as this file can show it when its Cell's ``construct`` is another module's (``workspace.py``):
    dropped when it stands outside the Cell's class statement (a span in the other file), its fix dropped when an
    edit does (a quick fix never edits another file). Any other draft as it is."""
    site = draft.subject
    foreign = getattr(site, "foreign", None)
    if foreign is not None:
        return _shown_here(draft, program, foreign, rule)
    construct = getattr(site, "construct", None)
    owner = getattr(construct, "owner", None)
    cls = getattr(site, "cls", None)
    if owner is None or cls is None or owner.program is cls.program:
        return draft
    home = program.span(cls.node)
    if not home.contains(draft.span):
        return None
    if draft.fix is not None and not all(home.contains(e.span) for e in draft.fix.edits):
        return replace(draft, fix=None)
    return draft


def _shown_here(draft, program, foreign, rule):
    """A draft of a site whose bprop is a def of another module (``context.ForeignBprop``). A span inside that def
    (its nodes are the other module's: the span is in that file's lines) is shown on the site's ``anchor`` in this
    file (the ``bprop = ...`` binding, the class, the ``bprop=`` argument) with a note at the def naming the other
    file, and without its fix (a quick fix never edits another file); when that module may check the def itself,
    only what depends on this site's inputs is shown here (the rest is its own to report, once). A span this file's
    site holds stays as it is; one that could be either (the same lines and columns in both files), or neither,
    is dropped."""
    home = foreign.function.node
    start = home.parent if home.parent is not None and home.parent.type == "decorated" else home
    theirs = Span(Position(start.start_pos[0] - 1, start.start_pos[1]),
                  Position(home.end_pos[0] - 1, home.end_pos[1]))
    site = draft.subject
    cls = getattr(site, "cls", None)
    ours = program.span(cls.node) if cls is not None else program.span(getattr(site, "call", foreign.anchor))
    where = _Sides(program.module, ours, home.get_root_node(), theirs)
    side = where.of(draft.span)
    if side is None:
        return None
    if side == "here":
        if draft.fix is not None and not all(where.of(e.span) == "here" for e in draft.fix.edits):
            draft = replace(draft, fix=None)
        return replace(draft, related=_related_here(draft.related, where, foreign))
    if foreign.shared and not getattr(rule, "depends_on_inputs", False):
        return None
    name = foreign.function.name_node if foreign.function.name_node is not None else home
    note = Related(Span(Position(name.start_pos[0] - 1, name.start_pos[1]),
                        Position(name.end_pos[0] - 1, name.end_pos[1])),
                   f"{_qualified(foreign.function)} is defined here", path=foreign.path)
    anchor = program.span(foreign.anchor)
    return replace(draft, span=anchor, fix=None, noqa_line=anchor.start.line,
                   related=(note, *_related_here(draft.related, where, foreign)))


def _qualified(fn) -> str:
    return f"{fn.owner.name}.{fn.name}" if fn.owner is not None else fn.name


class _Sides:
    """Which file a span of a ``_shown_here`` draft is in: "here" when it lies in this file's site and starts and
    ends where leaves of this file's tree do, "there" when it does so in the other module's def, None when it
    could be either or is neither (a span holds lines and columns only)."""

    def __init__(self, module, ours: Span, root, theirs: Span):
        self.module, self.ours, self.root, self.theirs = module, ours, root, theirs

    def of(self, span: Span) -> str | None:
        here = self.ours.contains(span) and _aligned(self.module, span)
        there = self.theirs.contains(span) and _aligned(self.root, span)
        if here == there:
            return None
        return "here" if here else "there"


def _aligned(module, span: Span) -> bool:
    """Whether ``span`` starts where a leaf of ``module`` starts and ends where one ends (an empty span: where one
    starts)."""
    start = (span.start.line + 1, span.start.column)
    end = (span.end.line + 1, span.end.column)
    try:
        leaf = module.get_leaf_for_position(start)
    except ValueError:
        return False
    if leaf is None or leaf.start_pos != start:
        return False
    if end == start:
        return True
    for _ in range(10_000):
        if leaf is None or leaf.end_pos > end:
            return False
        if leaf.end_pos == end:
            return True
        leaf = leaf.get_next_leaf()
    return False


def _related_here(related, where: _Sides, foreign) -> tuple:
    """The notes of a draft of ``_shown_here``: one in the other module's def names that file, one this file's site
    holds stays, one that could be either is dropped."""
    kept = []
    for r in related:
        if r.path is not None:
            kept.append(r)
            continue
        side = where.of(r.span)
        if side is not None:
            kept.append(r if side == "here" else replace(r, path=foreign.path))
    return tuple(kept)


def count_syntax_errors(text: str, doc: ParsedDocument | None = None) -> int:
    """How many syntax errors parso finds in ``text`` (the baseline a fix must not make worse); with ``doc``,
    ``text`` is that document's current text and its parse state is used."""
    if doc is None:
        return len(parse_errors(parse_text(text)))
    return len(parse_errors(doc.parse(text), doc))


def analyze_module(module, text: str, settings: Settings, with_syntax_errors: bool = True,
                    want_fixes: bool = True, with_skeletons: bool = False, *, doc: ParsedDocument | None = None,
                    fork: bool = False, lines: list[str] | None = None, rules: Sequence[Rule],
                    with_bprops: bool = True) -> Analysis:
    """The findings of ``rules`` in ``module``: a one-off tree, ``doc``'s tree, or (``fork``) a fix's tree forked
    from it (``lines``: its text's lines, when at hand). ``with_bprops`` off (``doc``'s own tree): ``bprops``
    left empty, for ``last_bprops`` to give once the findings are out."""
    own = doc is not None and not fork  # the document's own tree (not a fix's fork)
    program = Program(module, text, doc.statements if doc is not None else None, update_statements=not fork,
                      lines=lines if lines is not None else doc.lines if own else None,
                      previous=doc.last_tables if own else None)
    ctx = Context(program, settings)
    ctx.want_fixes = want_fixes
    evidence = file_modes(ctx, settings)
    noqa = noqa_lines(program)
    findings: list[Finding] = []
    seen: set[tuple] = set()
    used: dict[int, set[str]] = {}  # noqa line -> the codes it suppressed
    enabled = [rule for rule in rules if settings.enabled(rule.code)]
    mode_memo = doc.mode_memo if own else None
    cell_rules = [rule for rule in enabled if getattr(rule, "scope", "module") == "cell"]
    # (the sites whose bprop is another module's def: run apart, and shown on their binding here: ``_shown_here``)
    foreign = foreign_site_drafts(ctx, cell_rules, _drafts_or_none) if program.workspace is not None else {}
    memoised = cell_drafts(ctx, cell_rules, _drafts_or_none,
                           doc.cell_memo if doc is not None and not fork else None, repr(settings))
    for rule in enabled:
        drafts = memoised.get(rule.code) if memoised is not None else None
        if drafts is None:
            drafts = drafts_of(rule, ctx)
        if rule.code in foreign:
            drafts = [*drafts, *foreign[rule.code]]
        for draft in drafts:
            if program.workspace is not None:
                draft = _local(draft, program, rule)
                if draft is None:
                    continue
            fails_in = draft.fails_in
            modes = getattr(draft.subject, "modes", None)
            if modes and fails_in:
                # A bprop MindSpore calls in one mode only (``self.bprop = self.m``: GRAPH) fails only there.
                fails_in = fails_in & modes
                if not fails_in:
                    continue
            key = (rule.code, draft.span)
            if key in seen:
                continue
            seen.add(key)
            noqa_line = draft.noqa_line if draft.noqa_line is not None else draft.span.start.line
            # A noqa works on the statement's line (noqa_line) and on the line the finding is printed on.
            silenced = next((line for line in dict.fromkeys((noqa_line, draft.span.start.line))
                             if (codes := noqa.get(line)) is not None and (not codes or rule.code in codes)), None)
            if silenced is not None:
                used.setdefault(silenced, set()).add(rule.code)
                continue
            # (Only a finding MindSpore raises in one mode needs to know where its cell runs.)
            where = modes_at(ctx, settings, draft.span, evidence, mode_memo) if len(fails_in) == 1 else None
            severity, message = _severity(fails_in, where, draft.message)
            if severity is Severity.INFO and in_a_local_class(ctx, draft.span):
                continue  # a class defined in a function runs only where that function runs: known not to fail
            related = draft.related
            if where is not None and severity is not Severity.WARNING and program.workspace is not None:
                # (the mode that decided it, where another module sets it: that file's ``set_context``)
                told = fails_in if severity is Severity.ERROR else where.known
                related = related + tuple(Related(span, note, path=path)
                                          for path, span, note in entry_notes(ctx, draft.span, told))
            findings.append(
                Finding(
                    code=rule.code,
                    name=rule.name,
                    message=message,
                    severity=severity,
                    span=draft.span,
                    url=rule.url(),
                    fix=draft.fix,
                    related=related,
                    noqa_line=noqa_line,
                )
            )
    findings = _one_per_mistake(findings, enabled)
    reviewers = [rule for rule in enabled if getattr(rule, "reviews_noqa", False)]
    if reviewers and noqa:
        directives = noqa_directives(program, used)
        known, on = {r.code for r in rules}, {r.code for r in enabled}
        for rule in reviewers:
            try:
                drafts = list(rule.review_noqa(ctx, directives, known, on))
            except Exception as exc:  # noqa: BLE001 - as drafts_of: one rule's bug costs its findings only
                _log.warning("rule %s failed on this input (%s: %s)", rule.code, type(exc).__name__, exc)
                continue
            for draft in drafts:
                codes = noqa.get(draft.span.start.line)
                if codes and rule.code in codes:
                    continue  # a noqa naming the reviewing rule on the line silences the review itself
                findings.append(Finding(code=rule.code, name=rule.name, message=draft.message,
                                        severity=Severity.WARNING, span=draft.span, url=rule.url(), fix=draft.fix,
                                        noqa_line=draft.span.start.line))
    findings.sort(key=Finding.sort_key)
    errors = None
    if with_syntax_errors:
        errors = [(program.span(err.start_pos, err.end_pos), err.message)
                  for err in parse_errors(module, doc, None if not fork else text)]
    later = own and not with_bprops
    analysis = Analysis(findings=findings, bprops=bprop_infos(ctx) if want_fixes and not later else [],
                        syntax_errors=errors, skeletons=skeletons_of(ctx) if with_skeletons else [],
                        failures=list(ctx.failures))
    if own:
        # What ``last_bprops`` reads: this analysis's Context, valid until the tree is parsed again.
        doc.last_context = (text, ctx) if later and want_fixes else None
        doc.last_tables = program.tables()
        if mode_memo is not None:
            mode_memo.advance(program, doc.last_tables)
    return analysis


def last_bprops(doc: ParsedDocument, text: str) -> list[BpropInfo] | None:
    """The ``bprops`` of ``doc``'s last analysis, when it analysed ``text`` without them (``with_bprops`` off)
    and the tree has not been parsed since; None otherwise."""
    last = getattr(doc, "last_context", None)
    if last is None or last[0] is not text and last[0] != text:
        return None
    return bprop_infos(last[1])


_SEVERITY_RANK = {Severity.ERROR: 2, Severity.WARNING: 1, Severity.INFO: 0}


def _one_per_mistake(findings: list[Finding], rules: Sequence[Rule]) -> list[Finding]:
    """One finding per mistake: where rules that declare the same mistake (``same_mistake``) both report on one
    ``def``, the finding of the highest severity stays (at equal severity, the one MindSpore raises for) and the
    others become its related notes."""
    declared = {rule.code: frozenset(getattr(rule, "same_mistake", ())) for rule in rules}
    if not any(declared.values()):
        return findings
    by_def: dict = {}
    for f in findings:
        if declared.get(f.code) and f.noqa_line is not None:
            by_def.setdefault(f.noqa_line, []).append(f)
    dropped: set[int] = set()
    replaced: dict[int, Finding] = {}
    for group in by_def.values():
        if len(group) < 2:
            continue
        group = sorted(group, key=lambda f: (-_SEVERITY_RANK[f.severity], "[fails in" not in f.message, f.code))
        primary = group[0]
        absorbed = [f for f in group[1:] if f.code in declared[primary.code]]
        if not absorbed:
            continue
        notes = list(primary.related)
        for f in absorbed:
            dropped.add(id(f))
            notes.append(Related(f.span, f"also {f.code} ({f.name}): {f.message}"))
            notes.extend(f.related)
        replaced[id(primary)] = replace(primary, related=tuple(notes))
    if not dropped:
        return findings
    return [replaced.get(id(f), f) for f in findings if id(f) not in dropped]


def _drafts_or_none(rule, ctx: Context) -> list | None:
    """``drafts_of``, with None when the rule raised (the file then gets none of its drafts)."""
    failed: list = []
    drafts = drafts_of(rule, ctx, failed)
    return None if failed else drafts


def drafts_of(rule, ctx: Context, failed: list | None = None) -> list:
    """The rule's drafts for this file; when the rule raises (a bug of ours on some input), its drafts without
    fixes (run again with ``want_fixes`` off: a fix that cannot be built must cost the fix, not the finding), else
    none (the rule's findings for this file, never the other rules' nor the run). Either way the file's
    ``Analysis.failures`` says so; logged at debug level with the traceback."""
    try:
        return list(rule.check(ctx))
    except (Exception, RecursionError) as exc:  # noqa: BLE001 - isolate one rule's failure
        _log.debug("rule %s failed on this input", rule.code, exc_info=True)
        if ctx.want_fixes:
            bare = object.__new__(type(ctx))
            bare.__dict__.update(ctx.__dict__)
            bare.want_fixes = False
            try:
                drafts = list(rule.check(bare))
            except (Exception, RecursionError):  # noqa: BLE001
                pass
            else:
                _share_caches(ctx, bare)
                ctx.fix_failed(rule.code, exc)
                if failed is not None:
                    failed.append(exc)
                return [replace(d, fix=None) for d in drafts]
        message = f"rule {rule.code} failed on this input ({type(exc).__name__}); its findings are dropped"
        if message not in ctx.failures:
            ctx.failures.append(message)
        if failed is not None:
            failed.append(exc)
        return []


def _share_caches(ctx: Context, view: Context) -> None:
    """The caches a view of ``ctx`` filled, handed back to it."""
    for name, value in view.__dict__.items():
        if name not in ctx.__dict__:
            ctx.__dict__[name] = value


def parse_errors(module, doc: ParsedDocument | None = None, text: str | None = None) -> list:
    """parso's syntax errors (through ``doc``'s per-statement cache when the tree is the document's, or forked from
    it with ``text``); none when parso's error finder itself fails (a form feed in a comment before an
    unexpected indent crashes its prefix splitter), so that the findings are still reported."""
    try:
        return syntax_errors(module) if doc is None else doc.syntax_errors(module, text)
    except Exception:  # noqa: BLE001 - a parso bug must not cost the user their diagnostics
        _log.debug("parso's error finder failed; reporting no syntax errors", exc_info=True)
        return []


def _severity(fails_in: frozenset, evidence: Modes | None, message: str) -> tuple[Severity, str]:
    """An error where MindSpore fails in every mode, or where the one mode it fails in is known to run the cell;
    info where the cell is known to run only in the other mode; a warning where that is not known."""
    if not fails_in:
        return Severity.WARNING, message
    if len(fails_in) == 2:
        return Severity.ERROR, message
    (mode,) = fails_in
    label = MODE_LABEL[mode]
    suffix = f" [fails in {label}]"
    if evidence is None:
        return Severity.WARNING, message + suffix
    if mode in evidence.known:
        return Severity.ERROR, message + suffix
    if None not in evidence.possible and mode not in evidence.possible:
        return Severity.INFO, message + suffix
    return Severity.WARNING, message + suffix
