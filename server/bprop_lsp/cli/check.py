"""``bprop-lsp check``: read files, resolve settings per file, analyse, print, fix."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from ..checker import RULE_NAMES  # (reads the rule registry only when a selector is checked)
from ..engine.settings import (Settings, SettingsResult, find_pyproject, invalid_selectors, merge, selector_message,
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
        self.errors: list[str] = []
        self.warned: set[str] = set()
        self.fixed_config: tuple[Settings, bool] | None = None
        self._check_flags()
        if args.config:
            path = Path(args.config)
            if not path.is_file():
                self.errors.append(f"{args.config}: configuration file not found")
            else:
                self.fixed_config = self._settings(path)

    def _check_flags(self) -> None:
        for flag, value in (("--select", self.args.select), ("--ignore", self.args.ignore)):
            if value:
                items = [v.strip() for v in value.split(",") if v.strip()]
                for bad, suggestions in invalid_selectors(items, RULE_NAMES):
                    self.errors.append(selector_message(bad, suggestions, flag))

    def _settings(self, pyproject: Path | None) -> tuple[Settings, bool]:
        if pyproject is None:
            return self._apply_flags(Settings()), False
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
        return self._apply_flags(result.settings), broken

    def _once(self, message: str, errors: list[str] | None) -> None:
        if message in self.warned:
            return
        self.warned.add(message)
        if errors is not None:
            errors.append(message)
        else:
            print(f"bprop-lsp: warning: {message}", file=sys.stderr)

    def _apply_flags(self, base: Settings) -> Settings:
        raw = {}
        if self.args.mode:
            raw["mode"] = self.args.mode
        if self.args.select:
            raw["select"] = self.args.select
        if self.args.ignore:
            raw["ignore"] = self.args.ignore
        result = merge(base, raw, "command line", rules=RULE_NAMES)  # its selector errors: see _check_flags
        for w in result.warnings:
            self._once(w, None)
        return result.settings

    def resolve(self, path: str | None, is_file: bool = False) -> tuple[Settings, bool]:
        """The settings for ``path`` (None: stdin without a name) and whether its configuration is broken.

        ``is_file``: the path is known not to be a directory (one the walk yielded), so it is not stat'ed."""
        if self.fixed_config is not None:
            return self.fixed_config
        if self.args.isolated or path is None:
            return self._cached(None)
        absolute = os.path.abspath(path if path != "-" else ".")
        folder = absolute if path == "-" or (not is_file and os.path.isdir(absolute)) else os.path.dirname(absolute)
        hit = self.by_folder.get(folder)
        if hit is None:
            hit = self.by_folder[folder] = self._cached(find_pyproject(Path(folder).resolve()))
        return hit

    def _cached(self, pyproject: Path | None) -> tuple[Settings, bool]:
        if pyproject not in self.by_pyproject:
            self.by_pyproject[pyproject] = self._settings(pyproject)
        return self.by_pyproject[pyproject]

    def for_path(self, path: str | None) -> Settings:
        return self.resolve(path)[0]


def run_check(args) -> int:
    resolver = SettingsResolver(args)
    if resolver.errors:
        for e in resolver.errors:
            print(f"bprop-lsp: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    paths = args.paths or ["."]
    if paths.count("-") > 1:
        print("bprop-lsp: error: '-' (stdin) may be given once", file=sys.stderr)
        return EXIT_ERROR
    fmt = args.output_format or "full"
    color = fmt == "full" and not args.no_color and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    had_error = False
    errors = 0

    def skipped(path: str, reason: str, is_error: bool) -> None:
        nonlocal had_error, errors
        print(terminal_safe(f"bprop-lsp: {'error' if is_error else 'warning'}: {path}: {reason}"), file=sys.stderr)
        if is_error:
            had_error, errors = True, errors + 1

    options = Options(fix=bool(args.fix), diff=bool(args.diff), unsafe_fixes=bool(args.unsafe_fixes),
                      shows_fixes=fmt != "github")
    jobs: list[Job] = []
    walked = WalkStats()
    for path in sorted(_walk(paths, resolver, skipped, walked), key=_path_order):
        display = args.stdin_filename if path == "-" and args.stdin_filename else None
        # (The walk yields no directories: a directory given is walked, a stdin name may be anything.)
        settings, broken = resolver.resolve(display if display else (None if path == "-" else path),
                                            is_file=not display and path != "-")
        if resolver.errors:
            for e in resolver.errors:
                print(f"bprop-lsp: error: {e}", file=sys.stderr)
            errors += len(resolver.errors)
            resolver.errors.clear()
            had_error = True
        if broken:
            continue  # its configuration is broken: checking it with other settings would mislead
        jobs.append(Job(path, settings, options, display))

    progress = Progress(len(jobs), sys.stderr, Progress.wanted(sys.stderr, args.quiet))

    def collected(_: int, result: FileResult) -> None:
        if result.messages:
            progress.clear()
            for line in result.messages:
                print(terminal_safe(line, keep_newlines=True), file=sys.stderr)
        progress.advance()

    workers = args.jobs if args.jobs and args.jobs > 0 else default_workers()
    cache = _open_cache(args, jobs)
    try:
        results = run_jobs(jobs, workers, collected, cache)
    finally:
        progress.clear()

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

    if args.diff:
        diffs = [r.diff for r in sorted(results, key=lambda r: _path_order(r.path)) if r.diff]
        sys.stdout.write("".join(diffs))
        if not args.quiet:
            print(f"Would fix {_plural(fixes_applied, 'finding')} in {_plural(changed_files, 'file')}.", file=sys.stderr)
        if had_error:
            return EXIT_ERROR
        return EXIT_FINDINGS if diffs and not args.exit_zero else EXIT_CLEAN

    # With --fix on stdin the fixed source goes to stdout, so findings go to stderr.
    out = sys.stderr if (args.fix and "-" in paths) else sys.stdout
    out.write(render(fmt, reported, color=color))
    if not args.quiet and fmt in ("full", "concise"):
        _summary(reported, fixes_applied, changed_files, errors, args, out)
    if had_error:
        return EXIT_ERROR
    if reported and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _open_cache(args, jobs: list[Job]):
    """The result cache for this run (cli/cache.py), or None with ``--no-cache`` or when only stdin is checked."""
    if getattr(args, "no_cache", False) or all(job.path == "-" for job in jobs):
        return None
    from .cache import ResultCache, default_directory

    directory = Path(args.cache_dir) if getattr(args, "cache_dir", None) else default_directory()
    return ResultCache(directory)


def _walk(paths, resolver, on_skip, stats):
    excludes = resolver.for_path(".").exclude
    return iter_paths(paths, excludes, respect_gitignore=resolver.args.respect_gitignore, on_skip=on_skip,
                      stats=stats)


def _ignored_note(walked: WalkStats) -> str:
    if not (walked.ignored_files or walked.ignored_dirs):
        return ""
    what = [_plural(n, word) for n, word in ((walked.ignored_files, "Python file"), (walked.ignored_dirs, "folder"))
            if n]
    return (f" ({' and '.join(what)} ignored by .gitignore, .ignore, git's excludes or `exclude`; "
            "--no-respect-gitignore checks what the ignore files ignore)")


def _path_order(path: str) -> tuple[str, ...]:
    # Folder by folder, so that "pkg/z.py" sorts with "pkg/a.py" and before "pkg-x/a.py".
    return tuple(path.split(os.sep))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _summary(reported, fixes_applied, changed_files, errors, args, out) -> None:
    lines = []
    if fixes_applied:
        lines.append(f"Fixed {_plural(fixes_applied, 'finding')} in {_plural(changed_files, 'file')}.")
    if reported:
        fixable = sum(1 for r in reported if r.finding.fix is not None and r.finding.fix.is_safe)
        files = len({r.filename for r in reported})
        line = f"Found {_plural(len(reported), 'finding')} in {_plural(files, 'file')}"
        lines.append(line + (f" ({fixable} fixable)." if fixable else "."))
        if fixable and not args.fix:
            lines.append("Apply the fixable ones with `bprop-lsp check --fix`.")
    elif errors:
        lines.append(f"No findings; {_plural(errors, 'error')} (see above).")
    else:
        lines.append("All checks passed!")
    out.write("\n".join(lines) + "\n")
