"""``bprop-lsp``: ``check`` (the linter, ruff-shaped), ``serve`` (the language server), ``rule`` (docs).

Exit status of ``check``: 0 no findings, 1 findings (or ``--diff`` would change something),
2 usage error, unreadable input, broken configuration or internal error.
"""
from __future__ import annotations

import argparse
import os
import sys

from .. import ISSUES_URL, __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2




def _comma_list(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _add_setting_flags(check: argparse.ArgumentParser) -> None:
    """One flag per setting that has one (``engine/options.py``: the one definition)."""
    from ..engine.options import MODES, OPTIONS

    for o in OPTIONS:
        if not o.flag:
            continue
        if o.kind == "mode":
            check.add_argument(o.flag, dest=o.attr, type=str.lower, choices=MODES, help=o.flag_help)
        elif o.kind == "selectors":
            # Repeatable, each a comma-separated list (as in ruff); "" names no rule (exit 2).
            check.add_argument(o.flag, dest=o.attr, action="append", metavar="CODES", help=o.flag_help)
        elif o.kind == "globs":
            check.add_argument(o.flag, dest=o.attr, action="append", type=_comma_list, metavar="GLOBS",
                               help=o.flag_help)
        elif o.kind == "per-file-ignores":
            check.add_argument(o.flag, dest=o.attr, action="append", metavar="GLOB:CODES", help=o.flag_help)
        elif o.kind == "bool":
            check.add_argument(o.flag, dest=o.attr, action="store_true", default=None, help=o.flag_help)
            check.add_argument("--no-" + o.flag[2:], dest=o.attr, action="store_false", help=argparse.SUPPRESS)
        else:  # pragma: no cover - a kind with a flag must be handled here
            raise ValueError(o.kind)


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    from .output import FORMATS

    ap = argparse.ArgumentParser(prog="bprop-lsp", description="Find MindSpore custom-bprop mistakes before MindSpore does.")
    ap.add_argument("--version", action="version", version=f"bprop-lsp {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="check files or directories (default: .)")
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or directories; '-' reads stdin")
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    check.add_argument("--no-fix", action="store_true", help="apply no fix (overrides --fix and --fix-only)")
    check.add_argument("--fix-only", action="store_true", help="apply the fixes and report nothing that is left")
    check.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe (with --fix/--diff)")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--show-fixes", action="store_true",
                       help="with --fix: list what was fixed, per file and rule; otherwise show each fix as a diff")
    check.add_argument("--add-noqa", action="store_true", help="add a `# noqa: CODE` comment for every finding")
    check.add_argument("--statistics", action="store_true", help="count the findings per rule instead of listing them")
    check.add_argument("--output-format", choices=FORMATS, default=None, help="how findings are printed (default: full)")
    check.add_argument("-o", "--output-file", metavar="FILE", help="write the findings to FILE instead of stdout")
    _add_setting_flags(check)
    check.add_argument("--config", metavar="FILE", help="a pyproject.toml (or TOML file with [tool.bprop-lsp]) to use "
                                                          "instead of the nearest pyproject.toml")
    check.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    check.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                       help="also check files that .gitignore, .ignore, .git/info/exclude or git's global excludes file ignore")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings each PATH resolves to and where each value came from; check nothing")
    check.add_argument("--show-files", action="store_true", help="print the files that would be checked; check nothing")
    check.add_argument("-w", "--watch", action="store_true", help="check again whenever a file changes")
    check.add_argument("--watch-iterations", type=int, default=None, help=argparse.SUPPRESS)  # (tests: runs, then exit)
    check.add_argument("--watch-interval", type=float, default=0.5, help=argparse.SUPPRESS)
    check.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                       help="processes to check files with (default: one per idle CPU, at most one per CPU; "
                            "1: no process pool)")
    check.add_argument("--stdin-filename", metavar="NAME", help="the name to report for stdin input")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    check.add_argument("--no-color", action="store_true", help="no ANSI colours in the full format")
    check.add_argument("--no-cache", action="store_true",
                       help="neither read nor write the result cache (.bprop_lsp_cache)")
    check.add_argument("--cache-dir", metavar="DIR",
                       help="where the result cache lives (default: $BPROP_LSP_CACHE_DIR, else .bprop_lsp_cache in "
                            "the project root)")
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check.add_argument("-v", "--verbose", action="store_true",
                       help="say which configuration files, files and workers are used, and how long it took")

    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead (for debugging)")
    serve.add_argument("--log-file", metavar="FILE", help="also write the server's log to FILE")

    rule = sub.add_parser("rule", help="explain a rule (or --all)")
    rule.add_argument("code", nargs="?", help="a code (BP001) or a name (bprop-missing-params)")
    rule.add_argument("--all", action="store_true", help="every rule, as the Markdown of docs/rules.md")
    return ap, {"check": check, "serve": serve, "rule": rule}


def parse_tcp(value: str) -> tuple[str, int] | None:
    """``HOST:PORT`` (or ``:PORT``/``PORT``: 127.0.0.1) as (host, port); None when it is not one."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "", value
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)


def main(argv: list[str] | None = None) -> int:
    ap, commands = _parser()
    try:
        args, extra = ap.parse_known_args(argv)
        if extra:
            # (argparse reports what a subcommand does not know with the top-level usage; say it with the
            # subcommand's own, which lists its flags.)
            (commands.get(args.command) or ap).error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # argparse exits 2 on usage errors and 0 on --help/--version
        return int(exc.code or 0)
    if args.command is None:
        ap.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        if args.command == "check":
            from .check import run_check

            return run_check(args)
        if args.command == "serve":
            if args.tcp is not None:
                where = parse_tcp(args.tcp)
                if where is None:
                    print(f"bprop-lsp: error: --tcp expects HOST:PORT with a port from 1 to 65535, e.g. "
                          f"127.0.0.1:2087; got {args.tcp!r}", file=sys.stderr)
                    return EXIT_ERROR
                args.tcp = f"{where[0]}:{where[1]}"
            from ..lsp.server import run

            return run(args) or 0
        if args.command == "rule":
            from .rule_docs import run_rule

            return run_rule(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # noqa: BLE001 - the CLI must never show a bare traceback
        import traceback

        print(f"bprop-lsp: internal error: {exc.__class__.__name__}: {exc}\n"
              f"bprop-lsp: please report it at {ISSUES_URL} (with BPROP_LSP_DEBUG=1 set, the traceback is printed)",
              file=sys.stderr)
        if os.environ.get("BPROP_LSP_DEBUG"):
            traceback.print_exc()
        return EXIT_ERROR
    return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
