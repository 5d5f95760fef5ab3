"""``bprop-lsp check``: read files, resolve settings per file, analyse, print, fix."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ..checker import RULE_NAMES  # (reads the rule registry only when a selector is checked)
from ..engine.settings import (Settings, SettingsResult, invalid_selectors, merge, selector_message,
                               settings_from_pyproject)
from ..sources import WalkStats, iter_paths
from .jobs import FileResult, Job, Options, Progress, default_workers, run_jobs
from .output import Reported, render, terminal_safe


EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class SettingsResolver:
    """Settings per file: the nearest ``pyproject.toml`` (or ``--config``), then command-line flags.

    A rule selector that matches no rule (in a flag or a file) is an error, as is a file that cannot be read:
    files under a broken configuration are not checked (their results would mislead), and the run exits 2.
    """

    def __init__(self, args):
        self.args = args
        self.by_pyproject: dict[Path | None, tuple[Settings, bool]] = {}
        self.by_folder: dict[str, tuple[Settings, bool]] = {}
        self.real_folders: dict[str, str] = {}  # absolute folder -> os.path.realpath of it
        self.nearest: dict[str, Path | None] = {}  # resolved folder -> its nearest pyproject.toml
        self.origins: dict[Path | None, dict[str, str]] = {}
        self.errors: list[str] = []
        self.warned: set[str] = set()
        self.fixed_config: tuple[Settings, bool] | None = None
        self.fixed_path: Path | None = None
        self.flags = self._flag_table()
        self._check_flags()
        if args.config:
            path = Path(args.config)
            if not path.is_file():
                self.errors.append(f"{args.config}: configuration file not found")
            else:
                self.fixed_path = path.resolve()
                self.fixed_config = self._settings(self.fixed_path)

    def _flag_table(self) -> dict:
        """The setting flags given, as a settings table (``engine/options.py``: one flag per setting)."""
        from ..engine.options import OPTIONS

        raw: dict = {}
        for o in OPTIONS:
            if not o.flag:
                continue
            value = getattr(self.args, o.attr, None)
            if value is None:
                continue
            if o.kind == "selectors":
                value = ",".join(value)
            elif o.kind == "globs":
                value = [g for group in value for g in group]
            elif o.kind == "per-file-ignores":
                table: dict[str, list[str]] = {}
                for item in value:
                    pattern, sep, codes = item.rpartition(":")
                    if not sep or not pattern.strip():
                        self.errors.append(f"{o.flag} expects GLOB:CODES, e.g. 'tests/*:BP050'; got {item!r}")
                        continue
                    table.setdefault(pattern, []).extend(c.strip() for c in codes.split(","))
                value = table
            raw[o.key] = value
        return raw

    def _check_flags(self) -> None:
        from ..engine.options import OPTIONS

        for o in OPTIONS:
            value = self.flags.get(o.key)
            if value is None:
                continue
            if o.kind == "selectors":
                items = [v.strip() for v in value.split(",") if v.strip()]
                if not items:
                    self.errors.append(f"{o.flag} {value!r} names no rule (an empty selector); "
                                       f"`bprop-lsp rule` lists the rules")
                for bad, suggestions in invalid_selectors(items, RULE_NAMES):
                    self.errors.append(selector_message(bad, suggestions, o.flag))
            elif o.kind == "per-file-ignores":
                result = merge(Settings(), {o.key: value}, o.flag, rules=RULE_NAMES)
                self.errors.extend(result.errors)

    def _settings(self, pyproject: Path | None) -> tuple[Settings, bool]:
        if pyproject is None:
            settings, origins = self._apply_flags(Settings(), {})
            self.origins[pyproject] = origins
            return settings, False
        result: SettingsResult = settings_from_pyproject(pyproject, rules=RULE_NAMES)
        broken = bool(result.errors)
        for w in result.warnings:
            if "invalid TOML" in w or "cannot read" in w or "must be a table" in w:
                broken = True
                self._once(w, self.errors)
            else:
                self._once(w, None)
        for e in result.errors:
            self._once(e, self.errors)
        settings, origins = self._apply_flags(result.settings, result.origins)
        self.origins[pyproject] = origins
        return settings, broken

    def _once(self, message: str, errors: list[str] | None) -> None:
        if message in self.warned:
            return
        self.warned.add(message)
        if errors is not None:
            errors.append(message)
        else:
            print(f"bprop-lsp: warning: {message}", file=sys.stderr)

    def _apply_flags(self, base: Settings, origins: dict) -> tuple[Settings, dict]:
        result = merge(base, self.flags, "command line", rules=RULE_NAMES, origins=origins)
        # (its selector errors: see _check_flags)
        for w in result.warnings:
            self._once(w, None)
        return result.settings, result.origins

    def resolve(self, path: str | None, is_file: bool = False) -> tuple[Settings, bool]:
        """The settings for ``path`` (None: stdin without a name) and whether its configuration is broken.

        ``is_file``: the path is known not to be a directory (one the walk yielded), so it is not stat'ed."""
        if self.fixed_config is not None:
            return self.fixed_config
        if self.args.isolated or path is None:
            return self._cached(None)
        return self._cached(self.pyproject_for(path, is_file))

    def pyproject_for(self, path: str | None, is_file: bool = False) -> Path | None:
        if self.fixed_config is not None:
            return self.fixed_path
        if self.args.isolated or path is None:
            return None
        absolute = os.path.abspath(path if path != "-" else ".")
        folder = absolute if path == "-" or (not is_file and os.path.isdir(absolute)) else os.path.dirname(absolute)
        hit = self.by_folder.get(folder)
        if hit is None:
            hit = self.by_folder[folder] = (self._nearest(self._real(folder)),)  # type: ignore[assignment]
        return hit[0]  # type: ignore[return-value]

    def _real(self, folder: str) -> str:
        """``os.path.realpath(folder)`` (``folder`` absolute), one ``lstat`` per folder not met before: a walk's
        folders share their parents. (A loop, not recursion: trees may be thousands of folders deep.)"""
        todo = []
        here = folder
        while here not in self.real_folders:
            parent = os.path.dirname(here)
            if parent == here or os.path.islink(here):
                self.real_folders[here] = os.path.realpath(here)
                break
            todo.append(here)
            here = parent
        for here in reversed(todo):
            self.real_folders[here] = os.path.join(self.real_folders[os.path.dirname(here)], os.path.basename(here))
        return self.real_folders[folder]

    def _nearest(self, real: str) -> Path | None:
        """``find_pyproject`` of a resolved folder, each folder above it asked once per run."""
        todo = []
        here = real
        found: Path | None = None
        while here not in self.nearest:
            candidate = os.path.join(here, "pyproject.toml")
            if os.path.isfile(candidate):
                found = self.nearest[here] = Path(candidate)
                break
            todo.append(here)
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
        else:
            found = self.nearest[here]
        for folder in todo:
            self.nearest[folder] = found
        return found

    def _cached(self, pyproject: Path | None) -> tuple[Settings, bool]:
        if pyproject not in self.by_pyproject:
            self.by_pyproject[pyproject] = self._settings(pyproject)
        return self.by_pyproject[pyproject]

    def for_path(self, path: str | None) -> Settings:
        return self.resolve(path)[0]


def _verbose(args, message: str) -> None:
    if getattr(args, "verbose", False):
        print(f"bprop-lsp: debug: {message}", file=sys.stderr)


def _workers(args) -> int | None:
    """``-j`` checked (at least 1) and capped at the CPUs this process may use; None after an error message."""
    from .jobs import cpu_count

    if args.jobs is None:
        return default_workers()
    if args.jobs < 1:
        print(f"bprop-lsp: error: -j/--jobs must be at least 1 (got {args.jobs}); leave it out for one process "
              f"per idle CPU", file=sys.stderr)
        return None
    cpus = cpu_count()
    if args.jobs > cpus:
        _verbose(args, f"-j {args.jobs} capped at {cpus}: this process may use {cpus} CPU{'s' if cpus != 1 else ''}")
        return cpus
    return args.jobs


def run_check(args) -> int:
    if args.no_fix:
        args.fix = args.fix_only = False
    if args.fix_only:
        args.fix = True
    workers = _workers(args)
    if workers is None:
        return EXIT_ERROR
    if args.add_noqa and (args.fix or args.diff):
        print("bprop-lsp: error: --add-noqa cannot be combined with --fix or --diff", file=sys.stderr)
        return EXIT_ERROR
    if args.watch:
        if "-" in (args.paths or []):
            print("bprop-lsp: error: --watch cannot read stdin", file=sys.stderr)
            return EXIT_ERROR
        clash = [flag for flag, on in (("--statistics", args.statistics), ("--show-settings", args.show_settings),
                                       ("--show-files", args.show_files), ("--add-noqa", args.add_noqa)) if on]
        if clash:
            print(f"bprop-lsp: error: --watch cannot be used with {clash[0]}", file=sys.stderr)
            return EXIT_ERROR
        from .watch import watch

        return watch(args, lambda: _run_once(args, workers))
    return _run_once(args, workers)


def _run_once(args, workers: int, summary_prefix: str = "") -> int:
    started = time.monotonic()
    resolver = SettingsResolver(args)
    if resolver.errors:
        for e in resolver.errors:
            print(f"bprop-lsp: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    paths = args.paths or ["."]
    if paths.count("-") > 1:
        print("bprop-lsp: error: '-' (stdin) may be given once", file=sys.stderr)
        return EXIT_ERROR
    if args.show_settings:
        return _show_settings(args, paths, resolver)
    fmt = args.output_format or "full"
    out_file = None
    if args.output_file:
        try:
            out_file = open(args.output_file, "w", encoding="utf-8", newline="")
        except OSError as exc:
            print(f"bprop-lsp: error: cannot write {args.output_file}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_ERROR
    try:
        return _check(args, paths, resolver, fmt, workers, out_file, started)
    finally:
        if out_file is not None:
            out_file.close()


def workspace_roots(paths: list[str]) -> tuple[str, ...]:
    """The folders the run's workspace names modules from (the same model for every file of the run): the project
    folder of each path given (the nearest folder with a ``pyproject.toml`` or ``.git``, whose
    ``[tool.bprop-lsp] src`` or ``src/`` layout ``engine.Workspace`` reads) and each folder given itself (a
    file's own folder)."""
    from ..engine import project_root

    roots: list[str] = []
    for path in paths:
        if path == "-":
            continue
        project = project_root(path)
        given = os.path.abspath(path) if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        for root in (str(project) if project is not None else None, given):
            if root is not None and root not in roots:
                roots.append(root)
    return tuple(roots)


def _roots_of(path: str, roots: tuple[str, ...], projects: dict[str, str]) -> tuple[str, ...] | None:
    """A file's workspace roots: its own project folder (the nearest ``pyproject.toml`` or ``.git`` above it),
    then the run's (``workspace_roots``)."""
    if path == "-":
        return None
    from ..engine import project_root

    folder = os.path.dirname(os.path.abspath(path))
    own = projects.get(folder)
    if own is None:
        found = project_root(folder)
        own = projects[folder] = str(found) if found is not None else ""
    return roots if not own or own in roots else (own, *roots)


def _check(args, paths, resolver, fmt, workers, out_file, started) -> int:
    stdout = out_file if out_file is not None else sys.stdout
    color = (fmt == "full" and out_file is None and not args.no_color and sys.stdout.isatty()
             and not os.environ.get("NO_COLOR"))
    had_error = False
    errors = 0

    def skipped(path: str, reason: str, is_error: bool) -> None:
        nonlocal had_error, errors
        print(terminal_safe(f"bprop-lsp: {'error' if is_error else 'warning'}: {path}: {reason}"), file=sys.stderr)
        if is_error:
            had_error, errors = True, errors + 1

    options = Options(fix=bool(args.fix), diff=bool(args.diff), unsafe_fixes=bool(args.unsafe_fixes),
                      shows_fixes=fmt != "github" or args.statistics, add_noqa=bool(args.add_noqa))
    jobs: list[Job] = []
    roots = workspace_roots(paths)
    projects: dict[str, str] = {}  # folder -> its project folder
    walked = WalkStats()
    cache = _open_cache(args, paths)  # (before the walk: folders it knows are not listed again)
    for path in sorted(_walk(paths, resolver, skipped, walked, cache), key=_path_order):
        display = args.stdin_filename if path == "-" and args.stdin_filename else None
        # (The walk yields no directories: a directory given is walked, a stdin name may be anything.)
        named = display if display else (None if path == "-" else path)
        settings, broken = resolver.resolve(named, is_file=not display and path != "-")
        if resolver.errors:
            for e in resolver.errors:
                print(f"bprop-lsp: error: {e}", file=sys.stderr)
            errors += len(resolver.errors)
            resolver.errors.clear()
            had_error = True
        if broken:
            continue  # its configuration is broken: checking it with other settings would mislead
        jobs.append(Job(path, settings.for_file(named), options, display, _roots_of(path, roots, projects)))
    if args.show_files:
        for job in jobs:
            stdout.write((os.path.abspath(job.path) if job.path != "-" else (job.display or "-")) + "\n")
        return EXIT_ERROR if had_error else EXIT_CLEAN
    for pyproject in resolver.origins:
        _verbose(args, f"settings: {pyproject or 'defaults (no pyproject.toml)'}")
    _verbose(args, f"checking {len(jobs)} file{'s' if len(jobs) != 1 else ''} with {workers} "
                   f"worker{'s' if workers != 1 else ''}")

    progress = Progress(len(jobs), sys.stderr, Progress.wanted(sys.stderr, args.quiet))

    def collected(_: int, result: FileResult) -> None:
        if result.messages:
            progress.clear()
            for line in result.messages:
                print(terminal_safe(line, keep_newlines=True), file=sys.stderr)
        progress.advance()

    try:
        results = run_jobs(jobs, workers, collected, cache)
    finally:
        progress.clear()
    if cache is not None:
        _verbose(args, f"cache {cache.directory}: {cache.unread} file{'s' if cache.unread != 1 else ''} known by "
                       f"stat alone (not read), {cache.hits} result{'s' if cache.hits != 1 else ''} replayed, "
                       f"{cache.misses} checked")

    reported: list[Reported] = []
    for result in sorted(results, key=lambda r: _path_order(r.path)):
        if result.error:
            had_error, errors = True, errors + 1
        if result.stdout is not None:
            sys.stdout.write(result.stdout)
        if result.findings:
            from ..engine import LineIndex

            index = LineIndex(result.text)
            reported.extend(Reported(result.path, f, index) for f in result.findings)
    fixes_applied = sum(r.fixes for r in results)
    changed_files = sum(1 for r in results if r.changed)
    if not jobs and not had_error:
        print(f"bprop-lsp: warning: no Python files found under the given paths{_ignored_note(walked)}", file=sys.stderr)
    _verbose(args, f"done in {time.monotonic() - started:.2f} s")
    hidden = 0 if args.unsafe_fixes else sum(1 for r in reported if r.finding.fix is not None and not r.finding.fix.is_safe)

    if args.add_noqa:
        added = sum(r.noqa_added for r in results)
        if not args.quiet:
            print(f"Added {_plural(added, 'noqa directive')}.", file=sys.stderr)
        return EXIT_ERROR if had_error else EXIT_CLEAN

    if args.diff:
        diffs = [r.diff for r in sorted(results, key=lambda r: _path_order(r.path)) if r.diff]
        stdout.write("".join(diffs))
        if not args.quiet:
            print(f"Would fix {_plural(fixes_applied, 'finding')} in {_plural(changed_files, 'file')}"
                  f"{_hidden_hint(hidden, ' (', ')')}.", file=sys.stderr)
        if had_error:
            return EXIT_ERROR
        return EXIT_FINDINGS if diffs and not args.exit_zero else EXIT_CLEAN

    # With --fix on stdin the fixed source goes to stdout, so findings go to stderr.
    out = sys.stderr if (args.fix and "-" in paths) else stdout
    if args.fix_only:
        if not args.quiet:
            if args.show_fixes:
                out.write(_fixed_listing(results))
            out.write(f"Fixed {_plural(fixes_applied, 'finding')} in {_plural(changed_files, 'file')}"
                      f"{_hidden_hint(hidden, ' (', ')')}.\n" if fixes_applied else
                      f"No findings fixed{_hidden_hint(hidden, ' (', ')')}.\n")
        return EXIT_ERROR if had_error else EXIT_CLEAN
    watching = getattr(args, "watch_stamp", None)
    if watching is not None:
        # (--watch: ruff's order, the count first, then the findings, no summary after them)
        files = len({r.filename for r in reported})
        found = f"Found {_plural(len(reported), 'finding')}" + (f" in {_plural(files, 'file')}" if reported else "")
        out.write(f"{watching()} {found}. Watching for file changes.\n\n")
        args._watch_reported = True
        out.write(render(fmt, reported, color=color, show_fixes=bool(args.show_fixes and not args.fix)))
        return EXIT_ERROR if had_error else EXIT_FINDINGS if reported else EXIT_CLEAN
    if args.statistics:
        from .output import render_statistics

        out.write(render_statistics(reported, fmt, unsafe_fixes=bool(args.unsafe_fixes)))
    else:
        out.write(render(fmt, reported, color=color, show_fixes=bool(args.show_fixes and not args.fix)))
    if args.show_fixes and args.fix and not args.quiet and fmt in ("full", "concise"):
        out.write(_fixed_listing(results))
    if not args.quiet and (fmt in ("full", "concise") or (args.statistics and fmt != "json")):
        _summary(reported, fixes_applied, changed_files, errors, args, out, hidden)
    if had_error:
        return EXIT_ERROR
    if reported and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _hidden_hint(hidden: int, before: str = "", after: str = "") -> str:
    if not hidden:
        return ""
    return (f"{before}{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` "
            f"option{after}")


def _fixed_listing(results) -> str:
    """``--fix --show-fixes``: what was fixed, per file and rule (ruff's listing)."""
    fixed = [(r.path, r.fixed_codes) for r in sorted(results, key=lambda r: _path_order(r.path)) if r.fixed_codes]
    if not fixed:
        return ""
    from ..checker import RULE_NAMES

    total = sum(n for _, codes in fixed for n in codes.values())
    lines = ["", f"Fixed {_plural(total, 'finding')}:"]
    for path, codes in fixed:
        lines.append(f"- {path}:")
        for code, n in sorted(codes.items()):
            lines.append(f"    {n} × {code} ({RULE_NAMES.get(code, '')})")
    return "\n".join(lines) + "\n\n"


def _show_settings(args, paths, resolver) -> int:
    """``--show-settings``: for each PATH, the settings it resolves to and where each value came from."""
    from ..engine.options import OPTIONS

    for path in paths:
        named = args.stdin_filename if path == "-" else path
        settings, broken = resolver.resolve(named)
        pyproject = resolver.pyproject_for(named)
        for e in resolver.errors:
            print(f"bprop-lsp: error: {e}", file=sys.stderr)
        origins = resolver.origins.get(pyproject, {})
        print(f'Resolved settings for: "{os.path.abspath(named) if named else "-"}"')
        print(f'Settings path: "{pyproject}"' if pyproject else "Settings path: none (defaults)")
        print()
        rows = []
        for o in OPTIONS:
            if not o.engine:
                continue
            value = getattr(settings, o.attr)
            rows.append((o.key, _shown(value, o.key), origins.get(o.attr, "default")))
        width = max(len(f"{k} = {v}") for k, v, _ in rows)
        for key, value, origin in rows:
            print(f"{key} = {value}".ljust(width) + f"  # {origin}")
        if named:
            file_ignores = settings.file_ignores(named)
            if file_ignores:
                print(f"{'per-file ignores for this file = ' + _shown(file_ignores, '')}")
        enabled = [code for code in RULE_NAMES if settings.for_file(named).enabled(code)]
        print(f"\nenabled rules ({len(enabled)}) = [{', '.join(enabled)}]")
        print()
        if resolver.errors or broken:
            return EXIT_ERROR
    return EXIT_CLEAN


def _shown(value, key: str) -> str:
    import json

    from ..engine.options import FilePattern

    if value is None:
        return "unset (every rule)" if key == "select" else "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if key == "per-file-ignores":
        return "{" + ", ".join(f"{json.dumps(p.pattern)} = [{', '.join(json.dumps(c) for c in codes)}]"
                               for p, codes in value) + "}"
    return "[" + ", ".join(json.dumps(v.pattern if isinstance(v, FilePattern) else v) for v in value) + "]"


def _open_cache(args, paths: list[str]):
    """The result cache for this run (cli/cache.py), or None with ``--no-cache`` or when only stdin is checked."""
    # (--add-noqa rewrites what it finds: a cached result would add nothing, and its empty one must not be kept)
    if getattr(args, "no_cache", False) or args.add_noqa or all(path == "-" for path in paths):
        return None
    from .cache import ResultCache, default_directory

    directory = Path(args.cache_dir) if getattr(args, "cache_dir", None) else default_directory()
    return ResultCache(directory)


def _ignored_note(walked: WalkStats) -> str:
    if not (walked.ignored_files or walked.ignored_dirs):
        return ""
    what = [_plural(n, word) for n, word in ((walked.ignored_files, "Python file"), (walked.ignored_dirs, "folder"))
            if n]
    return (f" ({' and '.join(what)} ignored by .gitignore, .ignore, git's excludes or `exclude`; "
            "--no-respect-gitignore checks what the ignore files ignore)")


def _walk(paths, resolver, on_skip, stats, listings=None):
    """The files under ``paths``; with ``force-exclude`` a named file or folder the excludes match is left out."""
    given = []
    for path in paths:
        if path != "-":
            settings = resolver.for_path(path)
            if settings.force_exclude and settings.is_excluded(path):
                _verbose(resolver.args, f"{path}: excluded (force-exclude)")
                continue
        given.append(path)
    # Each PATH brings the excludes of its own settings (its nearest pyproject.toml's, anchored there): one walk with
    # all of them (it yields a file reached twice once).
    excludes = tuple(dict.fromkeys(p for path in given if path != "-" for p in resolver.for_path(path).excludes))
    return iter_paths(given, excludes, respect_gitignore=resolver.args.respect_gitignore, on_skip=on_skip,
                      stats=stats, listings=listings)


def _path_order(path: str) -> tuple[str, ...]:
    # Folder by folder, so that "pkg/z.py" sorts with "pkg/a.py" and before "pkg-x/a.py".
    return tuple(path.split(os.sep))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _summary(reported, fixes_applied, changed_files, errors, args, out, hidden: int = 0) -> None:
    lines = []
    if fixes_applied:
        lines.append(f"Fixed {_plural(fixes_applied, 'finding')} in {_plural(changed_files, 'file')}.")
    if reported:
        fixable = sum(1 for r in reported if r.finding.fix is not None and (r.finding.fix.is_safe or args.unsafe_fixes))
        files = len({r.filename for r in reported})
        line = f"Found {_plural(len(reported), 'finding')} in {_plural(files, 'file')}"
        lines.append(line + (f" ({fixable} fixable)." if fixable else "."))
        if fixable and not args.fix:
            lines.append("Apply the fixable ones with `bprop-lsp check --fix"
                         + (" --unsafe-fixes`." if args.unsafe_fixes else "`."))
        if hidden:
            lines.append(_hidden_hint(hidden) + ".")
    elif errors:
        lines.append(f"No findings; {_plural(errors, 'error')} (see above).")
    else:
        lines.append("All checks passed!")
    out.write("\n".join(lines) + "\n")
