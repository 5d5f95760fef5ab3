"""The Cell-scoped rules (``scope = "cell"``) run one Cell at a time, and a document keeps each Cell's drafts for
as long as everything the run read reads the same.

Every analysis runs such a rule once per Cell site, through a view of the Context whose ``cell_sites`` is that
one site and whose ``__dict__`` is its own (``SiteView``): a fresh ``analyze``, a fix's re-check and a
``DocumentSession`` take the same path, so what a rule derives from ``ctx.cell_sites`` is the same in all of
them. Where one run over every site could differ from the runs over each — two sites sharing a bprop function
(rules report a function once), an ``ops.Custom`` site (its rules and the Cells' look at each other) — the rules
run once over the whole Context instead, in every analysis alike.

In a document (``CellMemo``) each site's run is recorded (``query.recording``: the site it was given and every
read it made through the view, ``tracked.py``); on the next analysis a site's drafts are read back when its
record still holds on the new revision (``query.Replay``): the same site at the same place, every table entry,
call and node it read the same. Nothing here knows what a rule reads.
"""
from __future__ import annotations

import bisect
from dataclasses import replace
from typing import Callable

from . import query
from .context import CellSite, Context
from .model import Position, Span
from .tracked import Fingerprints, Revision, tracked_program, _wrap

_SITE = object()  # a kept draft's subject that was its site (read back as the site of the analysis reading it)
_FAILED = object()  # the rule raised for this site: the file gets none of its drafts, as in one run


class SiteView:
    """``ctx`` as a run over one site sees it: ``cell_sites`` is that site, ``custom_op_sites`` empty, its
    ``__dict__`` its own; everything else is read from the Context (through ``tracked.py``'s views in a
    document, where the reads are recorded)."""

    def __init__(self, ctx: Context, site: CellSite, program=None, prints=None):
        d = self.__dict__
        d["_ctx"] = ctx
        d["_prints"] = prints
        d["program"] = program if program is not None else ctx.program
        d["settings"] = ctx.settings
        d["want_fixes"] = ctx.want_fixes
        d["failures"] = ctx.failures
        d["cell_sites"] = [site]
        d["custom_op_sites"] = []

    def fix_failed(self, code: str, exc: BaseException) -> None:
        self._ctx.fix_failed(code, exc)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._ctx, name)
        if self._prints is None:
            return value
        return _wrap(value, ("context", ("attr", name)), self._prints)


def runs_per_site(ctx: Context) -> bool:
    """Whether the runs over each site add up to one run over every site (module docstring)."""
    if ctx.custom_op_sites:
        return False
    functions = [id(s.function.node) for s in ctx.cell_sites if s.function is not None]
    return len(set(functions)) == len(functions)


def cell_drafts(ctx: Context, rules: list, run: Callable, memo: "CellMemo | None" = None,
                settings_key: str = "") -> dict | None:
    """code -> the drafts of each Cell-scoped rule over every site, in site order (what one ``rule.check(ctx)``
    yields before the engine's deduplication); None when the rules must run over the whole Context
    (``runs_per_site``). ``run(rule, view)`` gives a rule's drafts, or None when it raised. With ``memo`` (a
    document's), a site whose record holds is read back."""
    if not rules or not runs_per_site(ctx):
        return None
    if memo is not None:
        return memo.drafts(ctx, rules, run, settings_key)
    per_site = [_run_site(SiteView(ctx, site), rules, run) for site in ctx.cell_sites]
    return _joined(per_site, rules)


def foreign_site_drafts(ctx: Context, rules: list, run: Callable) -> dict:
    """code -> the drafts of each Cell-scoped rule over the sites whose bprop is a def of another module of the
    project (``context.ForeignBprop``), each draft told of its site (``pipeline._shown_here`` shows it on the
    site's binding in this file, without a fix for another file's def): run one site at a time, never read back
    (a session re-runs them; they are few). Those sites leave ``ctx.cell_sites``: the other runs, kept or not,
    are over the file's own sites only."""
    sites = ctx.cell_sites
    foreign = [site for site in sites if site.foreign is not None]
    if not foreign:
        return {}
    ctx.__dict__["cell_sites"] = [site for site in sites if site.foreign is None]
    out: dict = {}
    for site in foreign:
        view = SiteView(ctx, site)
        for code, found in _run_site(view, rules, run).items():
            if found is not _FAILED:
                out.setdefault(code, []).extend(replace(d, subject=site) for d in found)
    return out


def _run_site(view, rules: list, run: Callable) -> dict:
    results = {}
    for rule in rules:
        found = run(rule, view)
        if found is None:
            results[rule.code] = _FAILED
        elif found:
            results[rule.code] = tuple(found)
    return results


def _joined(per_site: list, rules: list) -> dict:
    """Each rule's drafts in site order (a site's results hold only the rules with drafts or that raised)."""
    out: dict = {rule.code: [] for rule in rules}
    failed = set()
    for results in per_site:
        for code, found in results.items():
            if found is _FAILED:
                failed.add(code)
            elif code in out:
                out[code] += found
    for code in failed:
        out[code] = None
    return out


class CellMemo:
    """A document's record of each Cell site's run (module docstring): site place -> (reads, results)."""

    def __init__(self):
        self._entries: dict = {}
        self._rules: dict = {}
        # What the last analysis did, for tests and benchmarks: sites run, sites read back, paths re-read, and the
        # sites run (their class names).
        self.ran = self.reused = self.replayed = self.moved = 0
        self.ran_sites: list[str] = []
        self._layout = None  # (start line, digest) of each top-level statement, at the last analysis

    def clear(self) -> None:
        self._entries.clear()

    def drafts(self, ctx: Context, rules: list, run: Callable, settings_key: str) -> dict:
        if any(self._rules.setdefault(rule.code, rule) is not rule for rule in rules):
            self.clear()  # another rule set's drafts: none may be read back for these rules
            self._rules = {rule.code: rule for rule in rules}
        revision = Revision(ctx)
        codes = tuple(rule.code for rule in rules)
        old, new = self._entries, {}
        self.ran = self.reused = self.moved = 0
        # (Only when every rule says its findings do not depend on where the code stands.)
        free = all(getattr(rule, "position_free", False) for rule in rules)
        moved = layout = None
        self.ran_sites = []
        per_site = []
        located = revision.sites()  # (each site located once: its key here, its path in the replay)
        for site in ctx.cell_sites:
            place = located.get(id(site))
            where = (settings_key, ctx.want_fixes, codes, place) if place is not None else None
            entry = old.get(where) if where is not None else None
            if entry is not None and revision.replay.holds(entry[0]):
                self.reused += 1
                new[where] = entry
                per_site.append(_for_site(entry[1], site))
                continue
            if entry is None and where is not None and free:
                # A site whose statements only moved (lines added or removed above): its record, moved with them,
                # read again.
                if moved is None:
                    layout = _layout(ctx.program, revision.prints)
                    moved = _Moves(self._layout, layout, old)
                entry = moved.entry(where)
                if entry is not None and revision.replay.holds(entry[0]):
                    self.moved += 1
                    new[where] = entry
                    per_site.append(_for_site(entry[1], site))
                    continue
            self.ran += 1
            self.ran_sites.append(site.cls.name)
            with query.recording() as reads:
                try:
                    query.record(("site", where[3]) if where is not None else ("site",), revision.prints(site))
                except query.Untracked:
                    reads.volatile = True  # (a class body read against the program: the site runs every time)
                view = SiteView(ctx, site, tracked_program(ctx.program), revision.prints)
                results = _run_site(view, rules, run)
            if where is not None and not reads.volatile:
                new[where] = (reads, {code: found if found is _FAILED else tuple(
                    replace(d, subject=_SITE) if d.subject is site else d for d in found)
                    for code, found in results.items()})
            per_site.append(results)
        self.replayed = revision.replay.reads
        self._entries = new
        if free and new and layout is None:
            layout = _layout(ctx.program, revision.prints)
        self._layout = layout if free and new else None
        return _joined(per_site, rules)


def _for_site(results: dict, site: CellSite) -> dict:
    """Drafts read back, told of the site object of this analysis (the engine reads its modes)."""
    return {code: found if found is _FAILED else tuple(replace(d, subject=site) if d.subject is _SITE else d
                                                     for d in found)
            for code, found in results.items()}


def _layout(program, prints: Fingerprints) -> list[tuple[int, bytes]]:
    """(line where its code starts, digest) of each top-level statement (the digests kept with the statements)."""
    return program.statement_layout()


class _Gone(Exception):
    """A position in a statement that is no longer there (or changed)."""


class _Moves:
    """Where each statement of the last analysis stands now, when its code is the same: the last analysis's records
    of sites, their drafts included, moved with their statements (``entry``)."""

    def __init__(self, before: list | None, after: list, entries: dict):
        self._starts = [line for line, _ in before] if before else []
        self._before = before or []
        now: dict[bytes, list[int]] = {}
        for line, digest in after:
            now.setdefault(digest, []).append(line)
        # The k-th statement of a digest then is the k-th of that digest now (the order of copies is kept).
        seen: dict[bytes, int] = {}
        self._to: dict[tuple[int, bytes], int] = {}
        for line, digest in self._before:
            k = seen.get(digest, 0)
            seen[digest] = k + 1
            lines = now.get(digest)
            if lines is not None and k < len(lines):
                self._to[(line, digest)] = lines[k]
        self._entries: dict | None = None
        self._old = entries
        self._done: dict[tuple, tuple] = {}

    def entry(self, where):
        """(reads, results) of the last analysis's record of the site now at ``where``, moved with its statements,
        or None (no such record, or a position it holds is in a statement that changed)."""
        if self._entries is None:
            self._entries = {}
            if any(old != new for (old, _), new in self._to.items()):
                for key, (reads, results) in self._old.items():
                    try:
                        moved = self._moved(key)
                    except _Gone:
                        continue
                    if moved != key:
                        self._entries[moved] = (key, reads, results)
        found = self._entries.get(where)
        if found is None:
            return None
        key, reads, results = found
        try:
            moved = query.Reads([(self._moved(path), self._moved(print_)) for path, print_ in reads.items],
                                volatile=reads.volatile)
            # Drafts move with their statements: a position-free rule's drafts (messages included) are what a run
            # at the new place would give, every position in them moved by the lines its statement moved.
            drafts = {code: found if found is _FAILED else tuple([self._draft(d) for d in found])
                      for code, found in results.items()}
        except _Gone:
            return None
        return moved, drafts

    def _draft(self, draft):
        fix = draft.fix
        if fix is not None:
            fix = replace(fix, edits=tuple([replace(e, span=self._span(e.span)) for e in fix.edits]),
                          repairs=None if fix.repairs is None else self._span(fix.repairs))
        related = tuple([r if r.path is not None else replace(r, span=self._span(r.span)) for r in draft.related])
        noqa_line = None if draft.noqa_line is None else self._line(draft.noqa_line + 1) - 1
        return replace(draft, span=self._span(draft.span), fix=fix, related=related, noqa_line=noqa_line)

    def _span(self, span: Span) -> Span:
        """``span`` (0-based lines) where its statement stands now."""
        start, end = self._line(span.start.line + 1) - 1, self._line(span.end.line + 1) - 1
        if start == span.start.line and end == span.end.line:
            return span
        return Span(Position(start, span.start.column), Position(end, span.end.column))

    def _line(self, line: int) -> int:
        """Where line ``line`` of the last analysis's text stands now (it lies in a statement that only moved)."""
        i = bisect.bisect_right(self._starts, line) - 1
        if i < 0:
            raise _Gone
        start, digest = self._before[i]
        now = self._to.get((start, digest))
        if now is None:
            raise _Gone
        return line + now - start

    def _moved(self, value):
        kind = type(value)
        if kind is tuple:
            # (Records read the same paths, and prints share their parts: each value is moved once, by value, and
            # one holding no position is itself.)
            found = self._done.get(value)
            if found is None:
                found = self._done[value] = self._moved_tuple(value)
            return found
        if kind is frozenset:
            moved = frozenset([self._moved(v) for v in value])
            return value if moved == value else moved
        return value

    def _moved_tuple(self, value: tuple):
        n = len(value)
        if n == 5 and value[0] == "n" and type(value[3]) is tuple:  # a node's print
            _, kind, (line, column), (top, top_column), digest = value
            now = self._to.get((top, digest))
            if now is None:
                raise _Gone
            return value if now == top else ("n", kind, (line + now - top, column), (now, top_column), digest)
        if n == 4 and value[0] == "node" and type(value[2]) is tuple:  # a node's locator
            _, kind, (line, column), height = value
            now = self._line(line)
            return value if now == line else ("node", kind, (now, column), height)
        items = None
        for i, v in enumerate(value):
            kind = type(v)
            if kind is tuple or kind is frozenset:
                moved = self._moved(v)
                if moved is not v:
                    if items is None:
                        items = list(value)
                    items[i] = moved
        return value if items is None else tuple(items)
