"""Run every enabled rule over one file and turn the rules' drafts into findings.

The rules are handed in (``rules=``, a sequence of ``rule.Rule``): the engine imports none
(``bprop_lsp.checker`` runs it with bprop-lsp's own). The engine, not the rules, decides severity (from the modes
MindSpore fails in and the mode the file runs in), applies ``# noqa``, and re-checks every fix before offering it.
"""
from __future__ import annotations

import bisect
import itertools
import logging
import re
from dataclasses import dataclass, field, replace
from typing import Sequence

from .cell_runs import cell_drafts
from .context import Context, Signature
from .modes import ModeModel, Modes, exactly
from .model import Finding, Position, Related, Severity, Span
from .parsing import POSITIONAL, ParsedDocument, parse_text, syntax_errors
from .preempt import Abandoned, polled, stop_when
from .program import Program
from .rule import Rule
from .settings import Settings
from .text import apply_edits
from .zeros_like import zeros_like_spelling

_log = logging.getLogger(__name__)
# A noqa comment naming one of our codes (or a look-alike): the files where the review of noqa comments may report.
_REVIEWED_NOQA = re.compile(r"noqa\s*:[^\n]*\b[Bb][Pp]", re.IGNORECASE)
MODE_LABEL = {"graph": "GRAPH_MODE", "pynative": "PYNATIVE_MODE"}


@dataclass(frozen=True)
class BpropInfo:
    """A custom bprop the engine recognised, for hover: what MindSpore will pass to each parameter."""

    owner: str  # Cell class or "ops.Custom"
    kind: str  # "cell" | "custom-op"
    name_span: Span  # the bprop's name (``def bprop`` / the attribute / the ``bprop=`` keyword)
    expected: tuple[str, ...] | None  # e.g. ("self", "x", "y", "out", "dout"); None when unknown
    roles: tuple[tuple[str, str], ...]  # (parameter, what MindSpore passes to it)
    construct_span: Span | None = None
    # Inlay hints: after each parameter what MindSpore passes (``← x``), after each returned gradient the input
    # it belongs to (``→ x``).
    hints: tuple["Hint", ...] = ()


@dataclass(frozen=True)
class Hint:
    """A short label shown after ``position`` (an LSP inlay hint; the CLI has no use for it)."""

    position: Position
    label: str
    tooltip: str = ""


@dataclass(frozen=True)
class Skeleton:
    """A Cell with a readable ``construct`` and no custom bprop: where the "Add a custom bprop" action writes one."""

    owner: str
    construct_span: Span  # the construct's name: where the action is offered
    insert_at: Position  # start of the line after construct's body
    indent: str  # construct's ``def`` indentation
    body_indent: str  # one level deeper
    newline: str
    inputs: tuple[str, ...]
    zeros_like: str  # how this file spells zeros_like (``ops.zeros_like``)
    out_name: str = "out"
    dout_name: str = "dout"

    def text(self, snippet: bool = False) -> str:
        """The bprop to insert; with ``snippet`` an LSP snippet with tab stops on the gradients."""
        nl, ind, body = self.newline, self.indent, self.body_indent
        params = ", ".join(("self", *self.inputs, self.out_name, self.dout_name))
        grads = []
        for i, name in enumerate(self.inputs, start=1):
            grad = f"{self.zeros_like}({name})"
            grads.append("${%d:%s}" % (i, _escape_snippet(grad)) if snippet else grad)
        if not grads:
            ret = "()"
        elif len(grads) == 1:
            ret = f"({grads[0]},)"
        else:
            ret = ", ".join(grads)
        text = f"{nl}{ind}def bprop({params}):{nl}{body}return {ret}{nl}"
        return text


def _escape_snippet(text: str) -> str:
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


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


def analyze(text: str, settings: Settings = Settings(), *, rules: Sequence[Rule], verify_fixes: bool = True,
            with_syntax_errors: bool = True, with_skeletons: bool = False, compiles: bool = False,
            pause=None) -> Analysis:
    """Analyse ``text`` with ``rules`` once (the CLI; an editor keeps a ``DocumentSession`` per document instead).

    ``with_syntax_errors=False`` skips parso's error finder (a third of a keystroke's cost in a large file);
    ``Analysis.syntax_errors`` is then None and ``count_syntax_errors`` gives the number when a fix is checked.
    ``compiles=True`` (the caller knows CPython parses ``text``; the CLI checks) with neither syntax errors nor
    skeletons asked: only the statements that can affect a finding are parsed, when that can be told for certain
    (``engine/partial.py``); the findings are the same as a full parse's. ``pause()`` is called every few
    thousand tokens of the parse (background work giving way: ``preempt.py``; wrap the rules in
    ``preempt.polled`` for the rules' part).
    """
    if pause is not None:
        doc = ParsedDocument()
        doc.pause = pause
        return analyze_document(doc, text, settings, rules=rules, verify_fixes=verify_fixes,
                                with_syntax_errors=with_syntax_errors, with_skeletons=with_skeletons)
    if compiles and not with_syntax_errors and not with_skeletons and "bprop" in text and not _REVIEWED_NOQA.search(text):
        # (A ``# noqa: BPxxx`` is reviewed wherever it stands, which the partial parse would not read.)
        analysis = analyze_relevant(text, settings, rules=rules, verify_fixes=verify_fixes)
        if analysis is not None:
            return analysis
    return analyze_document(ParsedDocument(), text, settings, rules=rules, verify_fixes=verify_fixes,
                            with_syntax_errors=with_syntax_errors, with_skeletons=with_skeletons)


def analyze_relevant(text: str, settings, *, rules, verify_fixes: bool):
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
    analysis = _analyze_module(module, masked, settings, False, doc=doc, rules=rules)
    if any(f.fix is not None for f in analysis.findings):
        kept = kept_lines(text, masked)
        for f in analysis.findings:
            if f.fix is None:
                continue
            for edit in f.fix.edits:
                if kept is None or edit.span.start.line not in kept or edit.span.end.line not in kept:
                    return None
        if verify_fixes:
            _verify_fixes(analysis, masked, settings, doc, rules)
    return analysis


def analyze_document(doc: ParsedDocument, text: str, settings: Settings = Settings(), *, rules: Sequence[Rule],
                     verify_fixes: bool = True, with_syntax_errors: bool = True,
                     with_skeletons: bool = False) -> Analysis:
    """Analyse ``text`` with ``rules``, the current text of the document whose parse state is ``doc`` (re-parsed
    incrementally)."""
    if "bprop" not in text and not (with_skeletons and "construct" in text):
        # Every rule is about a custom bprop, bprop_getters or bprop_debug: nothing to find.
        return Analysis()
    module = doc.parse(text)
    # (Checking fixes needs no syntax errors of the whole file: see _Baseline.)
    analysis = _analyze_module(module, text, settings, with_syntax_errors, with_skeletons=with_skeletons, doc=doc,
                               rules=rules)
    if verify_fixes:
        _verify_fixes(analysis, text, settings, doc, rules)
    return analysis


def count_syntax_errors(text: str, doc: ParsedDocument | None = None) -> int:
    """How many syntax errors parso finds in ``text`` (the baseline a fix must not make worse); with ``doc``,
    ``text`` is that document's current text and its parse state is used."""
    if doc is None:
        return len(_syntax_errors(parse_text(text)))
    return len(_syntax_errors(doc.parse(text), doc))


def _analyze_module(module, text: str, settings: Settings, with_syntax_errors: bool = True,
                    want_fixes: bool = True, with_skeletons: bool = False, *, doc: ParsedDocument | None = None,
                    fork: bool = False, lines: list[str] | None = None, rules: Sequence[Rule]) -> Analysis:
    """The findings of ``rules`` in ``module``: a one-off tree, ``doc``'s tree, or (``fork``) a fix's tree forked
    from it (``lines``: its text's lines, when at hand)."""
    own = doc is not None and not fork  # the document's own tree (not a fix's fork)
    program = Program(module, text, doc.statements if doc is not None else None, update_statements=not fork,
                      lines=lines if lines is not None else doc.lines if own else None,
                      previous=doc.last_tables if own else None)
    ctx = Context(program, settings)
    ctx.want_fixes = want_fixes
    evidence = _mode_evidence(ctx, settings)
    noqa = _noqa_lines(program)
    findings: list[Finding] = []
    seen: set[tuple] = set()
    used: dict[int, set[str]] = {}  # noqa line -> the codes it suppressed
    enabled = [rule for rule in rules if settings.enabled(rule.code)]
    memoised = cell_drafts(ctx, [rule for rule in enabled if getattr(rule, "scope", "module") == "cell"], _drafts_or_none,
                           doc.cell_memo if doc is not None and not fork else None, repr(settings))
    for rule in enabled:
        drafts = memoised.get(rule.code) if memoised is not None else None
        if drafts is None:
            drafts = _drafts_of(rule, ctx)
        for draft in drafts:
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
            codes = noqa.get(noqa_line)
            if codes is not None and (not codes or rule.code in codes):
                used.setdefault(noqa_line, set()).add(rule.code)
                continue
            # (Only a finding MindSpore raises in one mode needs to know where its cell runs.)
            where = _evidence_at(ctx, settings, draft.span, evidence) if len(fails_in) == 1 else None
            severity, message = _severity(fails_in, where, draft.message)
            if severity is Severity.INFO and _in_a_local_class(ctx, draft.span):
                continue  # a class defined in a function runs only where that function runs: known not to fail
            findings.append(
                Finding(
                    code=rule.code,
                    name=rule.name,
                    message=message,
                    severity=severity,
                    span=draft.span,
                    url=rule.url(),
                    fix=draft.fix,
                    related=draft.related,
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
            except Exception as exc:  # noqa: BLE001 - as _drafts_of: one rule's bug costs its findings only
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
                  for err in _syntax_errors(module, doc, None if not fork else text)]
    analysis = Analysis(findings=findings, bprops=_bprop_infos(ctx) if want_fixes else [], syntax_errors=errors,
                        skeletons=_skeletons(ctx) if with_skeletons else [], failures=list(ctx.failures))
    if own:
        doc.last_tables = program.tables()
    return analysis


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
    """``_drafts_of``, with None when the rule raised (the file then gets none of its drafts)."""
    failed: list = []
    drafts = _drafts_of(rule, ctx, failed)
    return None if failed else drafts


def _drafts_of(rule, ctx: Context, failed: list | None = None) -> list:
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




def _syntax_errors(module, doc: ParsedDocument | None = None, text: str | None = None) -> list:
    """parso's syntax errors (through ``doc``'s per-statement cache when the tree is the document's, or forked from
    it with ``text``); none when parso's error finder itself fails (a form feed in a comment before an
    unexpected indent crashes its prefix splitter), so that the findings are still reported."""
    try:
        return syntax_errors(module) if doc is None else doc.syntax_errors(module, text)
    except Exception:  # noqa: BLE001 - a parso bug must not cost the user their diagnostics
        _log.debug("parso's error finder failed; reporting no syntax errors", exc_info=True)
        return []


def _mode_evidence(ctx: Context, settings: Settings) -> Modes | None:
    """The modes every finding of the file is judged by when the settings name one (else None: per finding)."""
    if settings.mode in ("graph", "pynative"):
        return exactly(settings.mode)
    return None


def _evidence_at(ctx: Context, settings: Settings, span, file_evidence: Modes | None) -> Modes | None:
    """The modes a finding's cell runs in (None: the file does not tell). The mode in effect is the one where the
    network runs, read along the file's code paths (engine/modes.py; bprop-rules.md, further behaviours 30, 31,
    43): a ``set_context`` inside the function that uses the cell beats the module's, a test function's own
    ``class Net`` is governed by that function's mode, and a gradient taken inside a ``@jit`` function that
    reaches the cell follows GRAPH's rules."""
    if settings.mode in ("graph", "pynative"):
        return file_evidence
    model = ctx.__dict__.get("_mode_model", False)
    if model is False:
        model = None
        p = ctx.program
        jit = _jit_gradient_functions(ctx)
        if jit or p.text_contains("set_context"):
            model = ModeModel(p, jit)
        ctx.__dict__["_mode_model"] = model
    if model is None:
        return None
    try:
        leaf = ctx.program.module.get_leaf_for_position((span.start.line + 1, span.start.column))
        return model.of_finding(leaf) if leaf is not None else None
    except (Exception, RecursionError):  # noqa: BLE001 - a bug of ours here must cost the mode, not the findings
        _log.debug("reading the mode along the code paths failed; the mode stays unknown", exc_info=True)
        return None


def _jit_gradient_functions(ctx: Context) -> list:
    """``@jit`` functions that take a gradient (bprop-rules.md, further behaviours 31)."""
    cached = ctx.__dict__.get("_jit_gradient_functions")
    if cached is None:
        from .mindspore_api import JIT_NAMES, is_mindspore

        cached = []
        p = ctx.program
        if p.text_contains("jit") or p.text_contains("ms_function"):
            for facts, fns in p.functions_by_statement():
                # The decorated functions that take a gradient, kept with their statement (asked first, it spares
                # most ``@jit`` constructs of a model file resolving their decorators on every keystroke)
                candidates = facts.get("decorated_gradient_functions")
                if candidates is None:
                    candidates = facts["decorated_gradient_functions"] = [
                        fn for fn in fns if fn.name != "bprop" and fn.decorators and _function_takes_gradient(fn)]
                for fn in candidates:
                    if any(n and is_mindspore(p.resolve_dotted(n), JIT_NAMES, bare=("jit", "ms.jit", "ms_function"))
                           for n in fn.decorator_names):
                        cached.append(fn.node)
        ctx.__dict__["_jit_gradient_functions"] = cached
    return cached


def _function_takes_gradient(fn) -> bool:
    """``_takes_gradient`` of the function's code, read once per Function (they are kept with their statement)."""
    found = fn.__dict__.get("_takes_gradient")
    if found is None:
        found = fn.__dict__["_takes_gradient"] = _takes_gradient(fn.node.get_code())
    return found


def _takes_gradient(code: str) -> bool:
    return any(word in code for word in ("grad", "Grad", "vjp", "jvp", "TrainOneStep"))


def _in_a_local_class(ctx: Context, span) -> bool:
    """Whether the span lies in a class statement inside a function (a test function's own ``class Net``): such a
    class is used only where that function runs, so a mode known there is the only one it ever runs in."""
    leaf = ctx.program.module.get_leaf_for_position((span.start.line + 1, span.start.column))
    node = leaf
    while node is not None and node.type != "classdef":
        node = node.parent
    while node is not None and node.type != "file_input":
        node = node.parent
        if node is not None and node.type in ("funcdef", "lambdef"):
            return True
    return False


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


def _noqa_lines(program: Program) -> dict[int, set[str]]:
    """0-based line -> codes named by a ``# noqa`` comment there (empty set: bare noqa, all codes)."""
    result: dict[int, set[str]] = {}
    for start, codes in program.noqa_matches():
        pos = program.index.position(start)
        # Only real comments count, not "# noqa" inside a string.
        position = (pos.line + 1, pos.column)
        leaf = program.module.get_leaf_for_position(position, include_prefixes=True)
        if leaf is None or leaf.start_pos <= position:
            continue  # inside a string or other token, not in the comment prefix before a token
        result[pos.line] = {c.upper() for c in re.split(r"[\s,]+", codes) if c} if codes else set()
    return result


@dataclass(frozen=True)
class NoqaCode:
    """One entry of a ``# noqa: ...`` list: as written, where, and where removing it (with its comma) starts."""

    code: str
    span: Span
    removal: Span


@dataclass(frozen=True)
class NoqaDirective:
    """A ``# noqa: CODES`` comment (what a rule with ``reviews_noqa`` is handed, with what it suppressed)."""

    line: int  # 0-based
    span: Span  # from the space before ``#`` to the end of the list (removing it removes the directive)
    codes: tuple[NoqaCode, ...]  # every entry (BP codes and other tools' alike)
    used: frozenset[str]  # the codes of findings it suppressed


_NOQA_LIST = re.compile(r"#\s*noqa\s*:\s*(?P<list>[^#\r\n]*)", re.IGNORECASE)
_NOQA_ENTRY = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def noqa_directives(program: Program, used: dict[int, set[str]]) -> list[NoqaDirective]:
    """The ``# noqa: ...`` comments with a code list (bare ``# noqa`` is not one), real comments only."""
    out = []
    text, index = program.text, program.index
    for start, codes in program.noqa_matches():
        if codes is None:
            continue
        m = _NOQA_LIST.match(text, start)
        if m is None:
            continue
        pos = index.position(start)
        leaf = program.module.get_leaf_for_position((pos.line + 1, pos.column), include_prefixes=True)
        if leaf is None or leaf.start_pos <= (pos.line + 1, pos.column):
            continue  # inside a string
        lst = m.group("list").rstrip()
        lst_start = m.start("list")
        entries = [(e.start() + lst_start, e.group()) for e in _NOQA_ENTRY.finditer(lst)]
        if not entries:
            continue
        found = []
        for i, (at, code) in enumerate(entries):
            # Removing an entry takes the separator before it (or, for the first, the one after it).
            if i > 0:
                prev_end = entries[i - 1][0] + len(entries[i - 1][1])
                removal = (prev_end, at + len(code))
            elif len(entries) > 1:
                removal = (at, entries[1][0])
            else:
                removal = (at, at + len(code))
            found.append(NoqaCode(code, Span(index.position(at), index.position(at + len(code))),
                                  Span(index.position(removal[0]), index.position(removal[1]))))
        begin = start
        while begin > 0 and text[begin - 1] in " \t":
            begin -= 1
        end = lst_start + len(lst)
        out.append(NoqaDirective(pos.line, Span(index.position(begin), index.position(end)), tuple(found),
                                 frozenset(used.get(pos.line, ()))))
    return out


def _bprop_infos(ctx: Context) -> list[BpropInfo]:
    infos = []
    p = ctx.program
    for site in ctx.cell_sites:
        fn = site.function
        if fn is None:
            continue
        construct = site.construct
        if fn.name_node is not None and (construct is None or p.statement_facts(construct.node) is p.statement_facts(fn.node)):
            # Read from the bprop's statement alone given the label and the inputs: kept with that statement. (The
            # inputs are told by what they are read from, construct, the layer base and the calls' counts: a site
            # is a new object on every keystroke, and reading its inputs again costs more than the rest.)
            memo = p.node_fact(fn.node, POSITIONAL + "bprop_infos", lambda node: {})  # (spans)
            key = (site.owner_label, site.external_construct, site.call_counts,
                   None if construct is None else id(construct.node))
            entry = memo.get(key)
            if entry is None or entry[0] is not (None if construct is None else construct.node):
                entry = memo[key] = (None if construct is None else construct.node, _cell_bprop_info(p, site, fn))
            infos.append(entry[1])
            continue
        infos.append(_cell_bprop_info(p, site, fn))
    for op in ctx.custom_op_sites:
        fn = op.function
        if fn is None or fn.name_node is None:
            continue
        sig = Signature(fn, skip_self=op.bound)
        roles = []
        expected = None
        if op.inputs is not None:
            expected = tuple([f"input{i}" for i in range(op.inputs)] + ["out", "dout"])
            targets = [f"op input {i}" for i in range(op.inputs)] + ["`out`: the op's output", "`dout`: the gradient flowing into out"]
            for i, param in enumerate(sig.positional):
                roles.append((param.name, targets[i] if i < len(targets) else "nothing: MindSpore passes no value here"))
        hints = _kept_hints(p, fn, op.bound, [f"input{i}" for i in range(op.inputs)]) if op.inputs is not None else ()
        infos.append(BpropInfo("ops.Custom", "custom-op", p.span(fn.name_node), expected, tuple(roles), None, hints))
    return infos


def _cell_bprop_info(p: Program, site, fn) -> BpropInfo:
    """What hover and inlay hints show for one Cell bprop."""
    name_span = p.span(fn.name_node) if fn.name_node is not None else p.span(site.bprop.node.children[0])
    inputs = site.inputs
    expected = None
    roles: list[tuple[str, str]] = []
    if inputs is not None:
        expected = ("self", *inputs, "out", "dout")
        sig = Signature(fn, skip_self=_has_self(fn))
        pos = sig.positional
        targets = [f"forward input `{n}` of construct" for n in inputs] + [
            "`out`: the forward output of construct", "`dout`: the gradient flowing into out"]
        for i, param in enumerate(pos):
            roles.append((param.name, targets[i] if i < len(targets) else "nothing: MindSpore passes no value here"))
    construct_span = p.span(site.construct.name_node) if site.construct is not None and site.construct.name_node else None
    hints = _kept_hints(p, fn, _has_self(fn), inputs) if inputs is not None else ()
    return BpropInfo(site.owner_label, "cell", name_span, expected, tuple(roles), construct_span, hints)


def _kept_hints(p: Program, fn, skip_self: bool, inputs) -> tuple[Hint, ...]:
    """``_hints`` for the function's positional parameters (after self when ``skip_self``): read from the function
    alone given the inputs' names, so kept with its statement by (skip_self, inputs)."""
    memo = p.node_fact(fn.node, POSITIONAL + "hints", lambda node: {})  # (positions)
    key = (skip_self, tuple(inputs))
    hints = memo.get(key)
    if hints is None:
        hints = memo[key] = _hints(p, fn, Signature(fn, skip_self=skip_self).positional, inputs)
    return hints


def _hints(p: Program, fn, positional, inputs) -> tuple[Hint, ...]:
    """``← x`` after each parameter, ``→ x`` after each entry of a returned tuple display."""
    from .trees import iter_own_nodes

    names = [*inputs, "out", "dout"]
    hints = []
    for i, param in enumerate(positional):
        what = names[i] if i < len(names) else "nothing"
        end = param.node.name.end_pos
        hints.append(Hint(Position(end[0] - 1, end[1]), f"← {what}",
                          f"MindSpore passes {'the forward input ' + what if i < len(inputs) else what} here"))
    if len(positional) != len(names) or fn.node.type != "funcdef":
        return tuple(hints)
    for node in iter_own_nodes(fn.node):
        if node.type != "return_stmt" or len(node.children) < 2:
            continue
        value = node.children[1]
        if value.type == "atom" and value.children[0] == "(" and len(value.children) == 3:
            value = value.children[1]
            if value.type != "testlist_comp":
                continue
        if value.type not in ("testlist_star_expr", "testlist", "testlist_comp"):
            continue
        items = [c for c in value.children if c != ","]
        if any(c.type in ("comp_for", "sync_comp_for") for c in items) or len(items) > len(inputs):
            continue
        for item, name in zip(items, inputs):
            end = item.end_pos
            hints.append(Hint(Position(end[0] - 1, end[1]), f"→ {name}", f"the gradient of forward input {name}"))
    return tuple(hints)


def _skeletons(ctx: Context, classes=None) -> list[Skeleton]:
    """Cells whose construct has a fixed number of inputs and no custom bprop anywhere in their MRO (among
    ``classes``, default all of the file's)."""
    p = ctx.program
    out = []
    if not p.text_contains("construct"):
        return out
    newline = p.index.newline()
    for cls in (p.classes if classes is None else classes):
        if cls.node.type != "classdef":
            continue  # a class built by type() has no body to add a bprop to
        parts = _skeleton_parts(p, cls)  # (what the class alone tells, first)
        if parts is None or not p.is_cell(cls) or p.lookup(cls, "bprop") is not None or p.bound_late(cls):
            continue
        construct_span, end_line, indent, body_indent, inputs, out_name, dout_name = parts
        if end_line >= p.index.line_count:
            continue  # construct ends the file without a line break: nowhere clean to insert
        # (Spelled with a module-level import no parameter of the bprop hides; plan_skeletons adds the import
        # when there is none.)
        zeros = zeros_like_spelling(p, {*inputs, out_name, dout_name})
        out.append(Skeleton(cls.name, construct_span, Position(end_line, 0), indent, body_indent, newline,
                            inputs, zeros, out_name, dout_name))
    return out


def _skeleton_parts(p: Program, cls) -> tuple | None:
    """What a skeleton reads from the class's own construct (its span, where the bprop goes, the indentation, the
    inputs and the out/dout names), or None when construct has no fixed inputs: read once per class while its
    members stay the same (they are kept with the class statement)."""
    members = cls.members
    memo = cls.__dict__.get("_skeleton_parts")
    # (The parts hold positions: the class must also be where it was, lines inserted above it move it.)
    where = cls.node.start_pos
    if memo is not None and memo[0] is members and memo[2] == where:
        return memo[1]
    parts = None
    member = members.get("construct")
    fn = member.function if member is not None else None
    if fn is not None and fn.node.type == "funcdef":
        sig = Signature(fn, skip_self=True)
        if not (sig.vararg is not None or sig.varkw is not None or sig.kwonly or not fn.params
                or fn.params[0].name != "self"):
            def_line = p.index.line_text(fn.def_line)
            indent = def_line[:len(def_line) - len(def_line.lstrip())]
            body = fn.body
            first_body = body.children[1] if body.type == "suite" and len(body.children) > 1 else None
            if first_body is not None:
                line = p.index.line_text(first_body.start_pos[0] - 1)
                body_indent = line[:len(line) - len(line.lstrip())]
            else:
                body_indent = indent + "    "
            end_line = fn.node.end_pos[0] - 1 if fn.node.end_pos[1] == 0 else fn.node.end_pos[0]
            taken = {q.name for q in sig.positional}
            parts = (p.span(fn.name_node), end_line, indent, body_indent, tuple(q.name for q in sig.positional),
                     "out" if "out" not in taken else "out_", "dout" if "dout" not in taken else "dout_")
    cls.__dict__["_skeleton_parts"] = (members, parts, where)
    return parts


def _has_self(fn) -> bool:
    decorators = fn.decorator_names
    if "staticmethod" in decorators:
        return False
    return bool(fn.params) and fn.params[0].name == "self"


# ----------------------------------------------------------------------------- fix checking
def _verify_fixes(analysis: Analysis, text: str, settings: Settings, doc: ParsedDocument | None,
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
    base_errors = _Baseline(text, doc, base_errors)
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


class _Baseline:
    """The document's syntax-error count, counted only if a check needs it: a fix parsed as a fork compares the
    statements it changed with the same statements before (``ParsedDocument.errors_added``), which needs no
    count of the whole file (a whole error-finder pass, most of a one-shot analysis's cost without it)."""

    def __init__(self, text: str, doc: ParsedDocument | None, known: "int | _Baseline | None" = None):
        self.text, self.doc = text, doc
        self._count = known._count if isinstance(known, _Baseline) else known

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
        return _batch_cleared(text, fixable, settings, _Baseline(text, doc), doc, polled(rules, poll), poll)
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


def _batch_cleared(text: str, fixable: list[Finding], settings: Settings, base_errors: "_Baseline",
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


def _recheck(text: str, fixed: str, settings: Settings, codes: tuple[str, ...], base_errors: "_Baseline",
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
    elif len(_syntax_errors(module, doc if forked else None, fixed)) > base_errors.count():
        return None
    # Re-check with the findings' own rules only, and without building fixes: that is what "the finding is
    # gone" needs, and it keeps checking many fixes in one file from costing a full analysis each.
    only = replace(settings, select=codes, ignore=())
    return _analyze_module(module, fixed, only, with_syntax_errors=False, want_fixes=False,
                           doc=doc if forked else None, fork=forked, lines=lines, rules=rules)


def check_fix(text: str, finding: Finding, settings: Settings, base_errors: "int | _Baseline",
              doc: ParsedDocument | None = None, *, rules: Sequence[Rule], poll=None) -> str | None:
    """None if ``finding.fix`` is sound, else why not (``poll``: see ``_recheck``)."""
    fix = finding.fix
    assert fix is not None
    base_errors = base_errors if isinstance(base_errors, _Baseline) else _Baseline(text, doc, base_errors)
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
