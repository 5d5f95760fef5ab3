"""``bprop-lsp check``: read files, resolve settings per file, analyse, print, fix."""
from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

from ..engine import Settings, analyze, fix_all
from ..engine.settings import SettingsResult, find_pyproject, merge, settings_from_pyproject
from ..engine.text import LineIndex
from ..sources import SourceError, iter_paths, read_source, write_source
from .output import Reported, render

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class SettingsResolver:
    """Settings per file: the nearest ``pyproject.toml`` (or ``--config``), then command-line flags."""

    def __init__(self, args):
        self.args = args
        self.cache: dict[Path | None, Settings] = {}
        self.errors: list[str] = []
        self.warned: set[str] = set()
        self.fixed_config: Settings | None = None
        if args.config:
            path = Path(args.config)
            if not path.is_file():
                self.errors.append(f"{args.config}: configuration file not found")
            else:
                self.fixed_config = self._apply_flags(self._load(path))

    def _load(self, path: Path) -> Settings:
        result: SettingsResult = settings_from_pyproject(path)
        for w in result.warnings:
            if w not in self.warned:
                self.warned.add(w)
                if "invalid TOML" in w or "cannot read" in w or "must be a table" in w:
                    self.errors.append(w)
                else:
                    print(f"bprop-lsp: warning: {w}", file=sys.stderr)
        return result.settings

    def _apply_flags(self, base: Settings) -> Settings:
        raw = {}
        if self.args.mode:
            raw["mode"] = self.args.mode
        if self.args.select:
            raw["select"] = self.args.select
        if self.args.ignore:
            raw["ignore"] = self.args.ignore
        result = merge(base, raw, "command line")
        for w in result.warnings:
            if w not in self.warned:
                self.warned.add(w)
                print(f"bprop-lsp: warning: {w}", file=sys.stderr)
        return result.settings

    def for_path(self, path: str | None) -> Settings:
        if self.fixed_config is not None:
            return self.fixed_config
        if self.args.isolated or path is None:
            key = None
        else:
            key = find_pyproject(Path(path).resolve() if path != "-" else Path.cwd())
        if key not in self.cache:
            self.cache[key] = self._apply_flags(self._load(key) if key else Settings())
        return self.cache[key]


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
    reported: list[Reported] = []
    had_error = False
    changed_files = 0
    fixes_applied = 0
    files_checked = 0
    diffs: list[str] = []

    for path in _walk(paths, resolver):
        display = args.stdin_filename if path == "-" and args.stdin_filename else path
        settings = resolver.for_path(display if path == "-" and args.stdin_filename else (None if path == "-" else path))
        if resolver.errors:
            for e in resolver.errors:
                print(f"bprop-lsp: error: {e}", file=sys.stderr)
            resolver.errors.clear()
            had_error = True
            continue
        try:
            source = read_source(path, display=display if path == "-" else None)
        except SourceError as exc:
            print(f"bprop-lsp: error: {exc}", file=sys.stderr)
            had_error = True
            continue
        files_checked += 1
        text = source.text
        analysis = analyze(text, settings)
        if analysis.syntax_errors:
            span, message = analysis.syntax_errors[0]
            print(f"bprop-lsp: warning: {source.path}:{span.start.line + 1}:{span.start.column + 1}: "
                  f"syntax error ({message}); findings may be incomplete", file=sys.stderr)
        if args.fix or args.diff:
            new_text, count = fix_all(text, settings, include_unsafe=args.unsafe_fixes)
            if new_text != text:
                if args.diff:
                    diffs.append(_unified(source.path, text, new_text))
                elif path == "-":
                    sys.stdout.write(new_text)
                else:
                    try:
                        write_source(source, new_text)
                    except OSError as exc:
                        print(f"bprop-lsp: error: {source.path}: cannot write: {exc}", file=sys.stderr)
                        had_error = True
                        continue
                fixes_applied += count
                changed_files += 1
                if not args.diff:
                    text = new_text
                    analysis = analyze(text, settings)
            elif path == "-" and args.fix:
                sys.stdout.write(text)
        index = LineIndex(text)
        reported.extend(Reported(source.path, f, index) for f in analysis.findings)

    if args.diff:
        sys.stdout.write("".join(diffs))
        if not args.quiet:
            print(f"Would fix {fixes_applied} finding(s) in {changed_files} file(s).", file=sys.stderr)
        if had_error:
            return EXIT_ERROR
        return EXIT_FINDINGS if diffs and not args.exit_zero else EXIT_CLEAN

    # With --fix on stdin the fixed source goes to stdout, so findings go to stderr.
    out = sys.stderr if (args.fix and "-" in paths) else sys.stdout
    out.write(render(fmt, reported, color=color))
    if not args.quiet and fmt in ("full", "concise"):
        _summary(reported, fixes_applied, files_checked, args, out)
    if had_error:
        return EXIT_ERROR
    if reported and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _walk(paths, resolver):
    excludes = resolver.for_path(".").exclude
    yield from iter_paths(paths, excludes)


def _unified(name: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def _summary(reported, fixes_applied, files_checked, args, out) -> None:
    fixable = sum(1 for r in reported if r.finding.fix is not None and r.finding.fix.is_safe)
    parts = []
    if fixes_applied:
        parts.append(f"Fixed {fixes_applied} finding(s).")
    if reported:
        parts.append(f"Found {len(reported)} finding(s) in {files_checked} file(s) checked.")
        if fixable and not args.fix:
            parts.append(f"{fixable} fixable with `bprop-lsp check --fix`.")
    elif files_checked:
        parts.append(f"All checks passed ({files_checked} file(s)).")
    if parts:
        out.write(" ".join(parts) + "\n")
