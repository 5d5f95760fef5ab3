"""``bprop-lsp``: ``check`` (the linter, ruff-shaped), ``serve`` (the language server), ``rule`` (docs).

Exit status of ``check``: 0 no findings, 1 findings (or ``--diff`` would change something),
2 usage error, unreadable input, broken configuration or internal error.
"""
from __future__ import annotations

import argparse
import os
import sys

from .. import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    from .output import FORMATS

    ap = argparse.ArgumentParser(prog="bprop-lsp", description="Find MindSpore custom-bprop mistakes before MindSpore does.")
    ap.add_argument("--version", action="version", version=f"bprop-lsp {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="check files or directories (default: .)")
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or directories; '-' reads stdin")
    check.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    check.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe (with --fix/--diff)")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--output-format", choices=FORMATS, default=None, help="how findings are printed (default: full)")
    check.add_argument("--select", metavar="CODES", help="comma-separated rule codes or prefixes to enable")
    check.add_argument("--ignore", metavar="CODES", help="comma-separated rule codes or prefixes to disable")
    check.add_argument("--mode", choices=("auto", "graph", "pynative"), help="execution mode (default: inferred per file)")
    check.add_argument("--config", metavar="FILE", help="a pyproject.toml (or TOML file with [tool.bprop-lsp]) to use "
                                                          "instead of the nearest pyproject.toml")
    check.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    check.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                       help="also check files that .gitignore, .ignore, .git/info/exclude or git's global excludes file ignore")
    check.add_argument("-j", "--jobs", type=int, default=0, metavar="N",
                       help="processes to check files with (default: one per idle CPU; 1: no process pool)")
    check.add_argument("--stdin-filename", metavar="NAME", help="the name to report for stdin input")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    check.add_argument("--no-color", action="store_true", help="no ANSI colours in the full format")
    check.add_argument("--no-cache", action="store_true",
                       help="neither read nor write the result cache (.bprop_lsp_cache)")
    check.add_argument("--cache-dir", metavar="DIR",
                       help="where the result cache lives (default: $BPROP_LSP_CACHE_DIR, else .bprop_lsp_cache in "
                            "the project root)")
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")

    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead (for debugging)")
    serve.add_argument("--log-file", metavar="FILE", help="also write the server's log to FILE")

    rule = sub.add_parser("rule", help="explain a rule (or --all)")
    rule.add_argument("code", nargs="?", help="e.g. BP001")
    rule.add_argument("--all", action="store_true", help="every rule, as the Markdown of docs/rules.md")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    try:
        args = ap.parse_args(argv)
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

        print(f"bprop-lsp: internal error: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        if os.environ.get("BPROP_LSP_DEBUG"):
            traceback.print_exc()
        return EXIT_ERROR
    return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
