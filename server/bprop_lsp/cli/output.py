"""Output formats of ``bprop-lsp check``, shaped like ruff's: rows and columns are 1-based code points."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import __version__

if TYPE_CHECKING:  # imported by the engine, which the CLI imports only when a file needs it
    from ..engine.model import Finding
    from ..engine.text import LineIndex

FORMATS = ("full", "concise", "json", "github", "sarif")

# Characters a terminal may act on: C0 controls, DEL and C1 controls (0x9b is CSI, as ESC [ is). A checked-out
# file's name or line is data: it must not move the cursor, retitle the window or ring the bell.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7f, 0xa0))}
_CONTROLS.update({0x09: "\\t", 0x0a: "\\n", 0x0d: "\\r"})
# In a source line: C0 and DEL as their one-column Unicode pictures (as ruff shows them), so that the carets
# still line up; tabs stay (expanded); C1 as U+FFFD.
_PICTURES = {c: chr(0x2400 + c) for c in range(0x20) if c != 0x09}
_PICTURES.update({0x7f: "\u2421", **{c: "\ufffd" for c in range(0x80, 0xa0)}})
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f]")


def terminal_safe(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with its control characters written out (``\\x1b``, ``\\n``...), for a terminal."""
    if not _UNSAFE.search(text):
        return text
    if keep_newlines:
        return "\n".join(line.translate(_CONTROLS) for line in text.split("\n"))
    return text.translate(_CONTROLS)


def _source_safe(line: str) -> str:
    return line.translate(_PICTURES) if _UNSAFE.search(line) else line


def _json_safe(text: str) -> str:
    # json.dumps escapes C0 but passes DEL and C1 through when ensure_ascii is off; \u escapes are still JSON.
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_C1 = re.compile("[\x7f-\x9f]")


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
        "related": [{"message": rel.message, "location": _loc(rel.span.start), "end_location": _loc(rel.span.end),
                     **({"filename": related_name(rel.path)} if rel.path else {})}
                    for rel in f.related],
    }


def related_name(path: str) -> str:
    """How a related location in another file (the workspace's: ``Related.path``, absolute) is named: relative
    to the working folder when it is inside it, as ruff names files."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # pragma: no cover - another drive
        return path
    return path if rel.startswith("..") else rel


def render_statistics(reported: list[Reported], fmt: str, *, unsafe_fixes: bool = False) -> str:
    """``--statistics``: one line per rule, most frequent first (ruff's columns: count, code, fixable, name);
    ``[*]`` when a finding of the rule has a fix ``--fix`` applies. ``--output-format json``: the same as a list."""
    rows: dict[str, list] = {}
    for r in reported:
        f = r.finding
        row = rows.setdefault(f.code, [f.code, f.name, 0, 0])
        row[2] += 1
        if f.fix is not None and (f.fix.is_safe or unsafe_fixes):
            row[3] += 1
    ordered = sorted(rows.values(), key=lambda row: (-row[2], row[0]))
    if fmt == "json":
        import json

        return json.dumps([{"code": code, "name": name, "count": count, "fixable": fixable > 0,
                            "fixable_count": fixable} for code, name, count, fixable in ordered], indent=2) + "\n"
    if not ordered:
        return ""
    count_width = max(len(str(row[2])) for row in ordered)
    code_width = max(len(row[0]) for row in ordered)
    return "".join(f"{count:>{count_width}}\t{code:<{code_width}}\t{'[*]' if fixable else '[ ]'} {name}\n"
                   for code, name, count, fixable in ordered)


def render(fmt: str, reported: list[Reported], *, color: bool = False, show_fixes: bool = False) -> str:
    if fmt == "json":
        import json

        return _json_safe(json.dumps([to_json_obj(r) for r in reported], indent=2, ensure_ascii=False)) + "\n"
    if fmt == "concise":
        return "".join(_concise(r) + "\n" for r in reported)
    if fmt == "github":
        return "".join(_github(r) + "\n" for r in reported)
    if fmt == "sarif":
        import json

        return _json_safe(json.dumps(_sarif(reported), indent=2, ensure_ascii=False)) + "\n"
    return "".join(_full(r, color, show_fixes) for r in reported)


def _concise(r: Reported) -> str:
    f = r.finding
    mark = " [*]" if f.fix is not None and f.fix.is_safe else (" [-]" if f.fix is not None else "")
    return terminal_safe(f"{r.filename}:{f.span.start.line + 1}:{f.span.start.column + 1}: {f.code}{mark} "
                         f"{f.severity.value}: {f.message}")


def _fix_diff(r: Reported, cyan: str, red: str, green: str, reset: str) -> list[str]:
    """``--show-fixes``: the lines the fix changes, ruff-style (``- old`` / ``+ new``, numbered as after the fix)."""
    import difflib

    from ..engine.text import apply_edits

    old = r.index.text
    new = apply_edits(old, r.finding.fix.edits)
    a, b = old.splitlines(), new.splitlines()
    out: list[str] = []
    shown_a, shown_b = [terminal_safe(x.expandtabs(4)) for x in a], [terminal_safe(x.expandtabs(4)) for x in b]
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(1):
        width = len(str(max(group[-1][4], group[-1][2]) + 1))
        out.append(f"{cyan}{' ' * width} |{reset}")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [f"{cyan}{j + 1:>{width}} |{reset} {shown_b[j]}" for j in range(j1, j2)]
                continue
            out += [f"{red}{' ' * width} - {shown_a[i]}{reset}" for i in range(i1, i2)]
            out += [f"{green}{j + 1:>{width}} + {shown_b[j]}{reset}" for j in range(j1, j2)]
        out.append(f"{cyan}{' ' * width} |{reset}")
    return out


def _full(r: Reported, color: bool, show_fixes: bool = False) -> str:
    from ..engine.model import Severity

    f = r.finding
    bold, red, yellow, cyan, reset = ("\x1b[1m", "\x1b[31m", "\x1b[33m", "\x1b[36m", "\x1b[0m") if color else ("",) * 5
    tone = red if f.severity is Severity.ERROR else yellow
    out = [f"{bold}{terminal_safe(r.filename)}:{f.span.start.line + 1}:{f.span.start.column + 1}:{reset} "
           f"{tone}{bold}{f.code}{reset} {tone}{f.severity.value}{reset}: {terminal_safe(f.message)}"]
    line_no = f.span.start.line
    line = r.index.line_text(line_no) if line_no < r.index.line_count else ""
    gutter = len(str(line_no + 1))
    start = f.span.start.column
    end = f.span.end.column if f.span.end.line == line_no else len(line)
    line = _source_safe(line)  # one character for one: the columns stay
    shown = line.expandtabs(4)
    # Carets under the span, measured on the tab-expanded line.
    pad = len(line[:start].expandtabs(4))
    width = max(1, len(line[:end].expandtabs(4)) - pad)
    out.append(f"{cyan}{' ' * gutter} |{reset}")
    out.append(f"{cyan}{line_no + 1} |{reset} {shown}")
    out.append(f"{cyan}{' ' * gutter} |{reset} {' ' * pad}{tone}{'^' * width}{reset}")
    for rel in f.related:
        where = f"{terminal_safe(related_name(rel.path))}:{rel.span.start.line + 1}" if rel.path \
            else f"line {rel.span.start.line + 1}"
        out.append(f"{cyan}{' ' * gutter} ={reset} note: {terminal_safe(rel.message)} ({where})")
    if f.fix is not None:
        safety = "" if f.fix.is_safe else " (unsafe: applied only with --unsafe-fixes)"
        out.append(f"{cyan}{' ' * gutter} ={reset} help: {terminal_safe(f.fix.title)}{safety}")
        if show_fixes:
            out += ["    " + line for line in _fix_diff(r, cyan, red, "\x1b[32m" if color else "", reset)]
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


def artifact_uri(filename: str) -> str:
    """A SARIF ``artifactLocation.uri`` for a reported path: a URI reference (RFC 3986), relative as the path is,
    every byte outside the unreserved set and ``/`` percent-encoded (``#``, ``%``, ``?``, ``:``, spaces, newlines,
    UTF-8 or undecodable bytes of the name)."""
    from urllib.parse import quote  # (SARIF only: urllib.parse and ipaddress cost every run ~3 ms)

    path = filename.replace("\\", "/") if os.sep == "\\" else filename
    if os.sep == "\\" and len(path) > 2 and path[1] == ":" and path[0].isalpha():  # pragma: no cover - C:/x.py
        return "file:///" + path[:2] + quote(path[2:].encode("utf-8", "surrogatepass"), safe="/")
    return quote(os.fsencode(path), safe="/")


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
                    "artifactLocation": {"uri": artifact_uri(r.filename)},
                    "region": {
                        "startLine": f.span.start.line + 1, "startColumn": f.span.start.column + 1,
                        "endLine": f.span.end.line + 1, "endColumn": f.span.end.column + 1,
                    },
                }
            }],
        }
        if f.related:
            result["relatedLocations"] = [{
                "id": k,
                "message": {"text": rel.message},
                "physicalLocation": {
                    "artifactLocation": {"uri": artifact_uri(related_name(rel.path) if rel.path else r.filename)},
                    "region": {
                        "startLine": rel.span.start.line + 1, "startColumn": rel.span.start.column + 1,
                        "endLine": rel.span.end.line + 1, "endColumn": rel.span.end.column + 1,
                    },
                },
            } for k, rel in enumerate(f.related)]
        if f.fix is not None:
            result["fixes"] = [{
                "description": {"text": f.fix.title},
                "artifactChanges": [{
                    "artifactLocation": {"uri": artifact_uri(r.filename)},
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
            "tool": {"driver": {"name": "bprop-lsp", "version": __version__, **_information_uri(), "rules": rules}},
            "results": results,
        }],
    }


def _information_uri() -> dict:
    """SARIF's optional ``informationUri``: the project's home as the installed package's metadata names it
    (``Project-URL: Source, ...``, which the release workflow writes: scripts/pin_release_links.py). A checkout
    or a local build names none, and then none is claimed."""
    from importlib import metadata

    try:
        urls = metadata.metadata("bprop-lsp").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return {}
    by_label = {}
    for entry in urls:
        label, _, url = entry.partition(",")
        by_label[label.strip().lower()] = url.strip()
    url = by_label.get("source") or by_label.get("homepage")
    return {"informationUri": url} if url and url.startswith("https://") else {}
