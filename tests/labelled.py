"""Reading MindSpore-labelled programs (the oracle copy, the probes): where a label says the finding belongs, the
way the oracle's scorer reads it."""
from __future__ import annotations

from pathlib import Path


def expected_line(case):
    """(line, strict): the offending def line, else a def under test or the line MindSpore reported (with slack)."""
    if case.get("offending_def_line"):
        return case["offending_def_line"], True
    for d in case.get("bprop_defs_under_test") or []:
        return d["def_line"], False
    for mode in ("GRAPH", "PYNATIVE"):
        line = (case.get(mode) or {}).get("reported_line")
        if line:
            return line, False
    return None, False


def covers(finding, line, strict) -> bool:
    if line is None:
        return True
    start, end = finding.span.start.line + 1, finding.span.end.line + 1
    return start <= line <= end if strict else start - 5 <= line <= end + 5


def ids(cases):
    return [Path(c["file"]).stem for c in cases]
