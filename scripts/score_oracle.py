#!/usr/bin/env python3
"""Score a bprop checker against an oracle corpus whose labels come from running real MindSpore.

    python3 scripts/score_oracle.py [--labels LABELS.json] [--cmd 'bprop-lsp check --output-format json'] [--verbose]

(A copy of the shared scoring tool; by default it scores the `bprop-lsp` on PATH against the repository's own
copy of the corpus, tests/fixtures/oracle, so the README's score is reproducible from a clone.)

The command is run once with every case file appended; it must print a JSON list of findings in the
ruff-like shape: {"code", "message", "filename", "location": {"row", "column"}, "end_location": {...},
"severity"?}. Rows and columns are 1-based. A finding matches a case's expectation when its code equals
the case's rule and its rows cover the offending `def` line (or, where the label has no def line, the line
that MindSpore reported, give or take five lines; where there is no line at all, anywhere in the file).

Scored rules are those whose static checkability is Y in bprop-rules.md; P (partly static) and N rules are
listed but do not count against recall. Any finding on a case labelled VALID, and any error-severity finding
whose code is not the case's rule, is a false positive.
Exit status: 0 when recall on scored rules is 100% and there are no false positives, else 1.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
from collections import defaultdict

SCORED = {
    "BP001", "BP002", "BP003", "BP004", "BP005", "BP006", "BP008", "BP011", "BP012", "BP013", "BP020", "BP021",
    "BP022", "BP023", "BP025", "BP030", "BP031", "BP040", "BP041", "BP042", "BP043", "BP044", "BP045", "BP050",
}
PARTIAL = {"BP007", "BP009", "BP014", "BP024", "BP026", "BP027"}


def expected_line(case):
    """(line, strict): the offending def line (strict), else a fallback line with some slack, else (None, False)."""
    if case.get("offending_def_line"):
        return case["offending_def_line"], True
    for d in case.get("bprop_defs_under_test") or []:
        return d["def_line"], False
    for mode in ("GRAPH", "PYNATIVE"):
        line = (case.get(mode) or {}).get("reported_line")
        if line:
            return line, False
    return None, False


def matches(f, line, strict):
    start = f["location"]["row"]
    end = (f.get("end_location") or f["location"])["row"]
    if line is None:
        return True
    if strict:
        return start <= line <= end
    return start - 5 <= line <= end + 5


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", default=os.path.join(here, "..", "tests", "fixtures", "oracle", "labels.json"))
    ap.add_argument("--cmd", default="bprop-lsp check --output-format json")
    ap.add_argument("--verbose", "-v", action="store_true")
    a = ap.parse_args()

    labels = json.load(open(a.labels, encoding="utf-8"))
    root = os.path.dirname(os.path.abspath(a.labels))
    cases = {os.path.realpath(os.path.join(root, c["file"])): c for c in labels["cases"]}
    proc = subprocess.run(shlex.split(a.cmd) + sorted(cases), capture_output=True, text=True)
    try:
        findings = json.loads(proc.stdout or "null")
        assert isinstance(findings, list)
    except (ValueError, AssertionError):
        print(f"the command did not print a JSON list (exit {proc.returncode}); stderr:\n{proc.stderr[-2000:]}")
        print("score: unusable output")
        return 1

    per_file = defaultdict(list)
    for f in findings:
        per_file[os.path.realpath(f["filename"])].append(f)

    tally = defaultdict(lambda: [0, 0])  # rule -> [hit, total]
    false_pos, misses = [], []
    for path, case in sorted(cases.items()):
        rule, name = case["rule"], os.path.basename(path)
        got = per_file.get(path, [])
        if rule == "VALID":
            false_pos += [(name, f) for f in got]
            continue
        line, strict = expected_line(case)
        hit = [f for f in got if f["code"] == rule and matches(f, line, strict)]
        tally[rule][1] += 1
        if hit:
            tally[rule][0] += 1
        else:
            misses.append((name, rule, line))
        false_pos += [(name, f) for f in got
                      if f not in hit and f["code"] != rule and f.get("severity", "error") == "error"]

    scored_hit = sum(v[0] for r, v in tally.items() if r in SCORED)
    scored_all = sum(v[1] for r, v in tally.items() if r in SCORED)
    print("rule   found/cases  (P = partly static, not scored)")
    for rule in sorted(tally):
        h, t = tally[rule]
        print(f"{rule}  {h:>3}/{t:<3}{'  P' if rule not in SCORED else ''}")
    if a.verbose or len(misses) < 15:
        for name, rule, line in misses:
            print(f"  missed {rule} at line {line} in {name}")
    for name, f in false_pos[:30]:
        print(f"  false positive {f['code']} at row {f['location']['row']} in {name}: {f.get('message', '')[:90]}")
    ok = scored_hit == scored_all and not false_pos
    print(f"score: recall {scored_hit}/{scored_all} on scored rules, {len(false_pos)} false positive(s)"
          f"{'' if ok else ' — short of 100% / 0'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
