"""Output formats of ``bprop-lsp check``, shaped like ruff's: rows and columns are 1-based code points."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import __version__

if TYPE_CHECKING:  # imported by the engine, which the CLI imports only when a file needs it
    from ..engine.model import Finding
    from ..engine.text import LineIndex

FORMATS = ("full", "concise", "json", "github", "sarif")


@dataclass
class Reported:
    filename: str
    finding: Finding
    index: LineIndex


def _loc(pos) -> dict:
    return {"row": pos.line + 1, "column": pos.column + 1}


def to_json_obj(r: Reported) -> dict:
    f = r.finding
    fix = None
    if f.fix is not None:
        fix = {
            "applicability": f.fix.applicability.value,
            "message": f.fix.title,
            "edits": [
                {"content": e.new_text, "location": _loc(e.span.start), "end_location": _loc(e.span.end)}
                for e in f.fix.edits
            ],
        }
    return {
        "code": f.code,
        "name": f.name,
        "message": f.message,
        "severity": f.severity.value,
        "filename": r.filename,
        "location": _loc(f.span.start),
        "end_location": _loc(f.span.end),
        "fix": fix,
        "url": f.url,
        "noqa_row": (f.noqa_line + 1) if f.noqa_line is not None else None,
        "related": [{"message": rel.message, "location": _loc(rel.span.start), "end_location": _loc(rel.span.end)}
                    for rel in f.related],
    }


def render(fmt: str, reported: list[Reported], *, color: bool = False) -> str:
    if fmt == "json":
        import json

        return json.dumps([to_json_obj(r) for r in reported], indent=2, ensure_ascii=False) + "\n"
    if fmt == "concise":
        return "".join(_concise(r) + "\n" for r in reported)
    if fmt == "github":
        return "".join(_github(r) + "\n" for r in reported)
    if fmt == "sarif":
        import json

        return json.dumps(_sarif(reported), indent=2, ensure_ascii=False) + "\n"
    return "".join(_full(r, color) for r in reported)


def _concise(r: Reported) -> str:
    f = r.finding
    mark = " [*]" if f.fix is not None and f.fix.is_safe else (" [-]" if f.fix is not None else "")
    return f"{r.filename}:{f.span.start.line + 1}:{f.span.start.column + 1}: {f.code}{mark} {f.severity.value}: {f.message}"


def _full(r: Reported, color: bool) -> str:
    from ..engine.model import Severity

    f = r.finding
    bold, red, yellow, cyan, reset = ("\x1b[1m", "\x1b[31m", "\x1b[33m", "\x1b[36m", "\x1b[0m") if color else ("",) * 5
    tone = red if f.severity is Severity.ERROR else yellow
    out = [f"{bold}{r.filename}:{f.span.start.line + 1}:{f.span.start.column + 1}:{reset} "
           f"{tone}{bold}{f.code}{reset} {tone}{f.severity.value}{reset}: {f.message}"]
    line_no = f.span.start.line
    line = r.index.line_text(line_no) if line_no < r.index.line_count else ""
    gutter = len(str(line_no + 1))
    start = f.span.start.column
    end = f.span.end.column if f.span.end.line == line_no else len(line)
    shown = line.expandtabs(4)
    # Carets under the span, measured on the tab-expanded line.
    pad = len(line[:start].expandtabs(4))
    width = max(1, len(line[:end].expandtabs(4)) - pad)
    out.append(f"{cyan}{' ' * gutter} |{reset}")
    out.append(f"{cyan}{line_no + 1} |{reset} {shown}")
    out.append(f"{cyan}{' ' * gutter} |{reset} {' ' * pad}{tone}{'^' * width}{reset}")
    for rel in f.related:
        out.append(f"{cyan}{' ' * gutter} ={reset} note: {rel.message} (line {rel.span.start.line + 1})")
    if f.fix is not None:
        safety = "" if f.fix.is_safe else " (unsafe: applied only with --unsafe-fixes)"
        out.append(f"{cyan}{' ' * gutter} ={reset} help: {f.fix.title}{safety}")
    out.append(f"{cyan}{' ' * gutter} ={reset} docs: bprop-lsp rule {f.code} ({f.url})")
    return "\n".join(out) + "\n\n"


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _github(r: Reported) -> str:
    f = r.finding
    level = {"error": "error", "warning": "warning", "info": "notice"}[f.severity.value]
    return (
        f"::{level} title={_escape_prop('bprop-lsp (' + f.code + ')')},file={_escape_prop(r.filename)},"
        f"line={f.span.start.line + 1},col={f.span.start.column + 1},"
        f"endLine={f.span.end.line + 1},endColumn={f.span.end.column + 1}::{_escape_data(f.code + ' ' + f.message)}"
    )


def _sarif(reported: list[Reported]) -> dict:
    from ..rules import ALL_RULES

    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "helpUri": rule.url(),
            "properties": {"fixable": rule.fix_title is not None},
        }
        for rule in ALL_RULES
    ]
    index = {rule.code: i for i, rule in enumerate(ALL_RULES)}
    results = []
    for r in reported:
        f = r.finding
        result = {
            "ruleId": f.code,
            "ruleIndex": index.get(f.code, -1),
            "level": {"error": "error", "warning": "warning", "info": "note"}[f.severity.value],
            "message": {"text": f.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": r.filename.replace("\\", "/")},
                    "region": {
                        "startLine": f.span.start.line + 1, "startColumn": f.span.start.column + 1,
                        "endLine": f.span.end.line + 1, "endColumn": f.span.end.column + 1,
                    },
                }
            }],
        }
        if f.fix is not None:
            result["fixes"] = [{
                "description": {"text": f.fix.title},
                "artifactChanges": [{
                    "artifactLocation": {"uri": r.filename.replace("\\", "/")},
                    "replacements": [{
                        "deletedRegion": {
                            "startLine": e.span.start.line + 1, "startColumn": e.span.start.column + 1,
                            "endLine": e.span.end.line + 1, "endColumn": e.span.end.column + 1,
                        },
                        "insertedContent": {"text": e.new_text},
                    } for e in f.fix.edits],
                }],
            }]
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "bprop-lsp", "version": __version__, "informationUri": "https://github.com/bprop-lsp/bprop-lsp", "rules": rules}},
            "results": results,
        }],
    }
