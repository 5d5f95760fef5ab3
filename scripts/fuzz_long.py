#!/usr/bin/env python3
"""The long engine fuzz run (issue 6): random edit sequences at volume, against a time budget.

Drives the generators and checkers of tests/fuzz/fuzzlib.py with ``random.Random`` (no Hypothesis), so it
counts edits: every sequence starts from an oracle case (round robin) or a generated MindSpore program,
applies 1..``--max-seq`` random edits and after each one checks

* the incremental analysis (one cache key, like the server) equals a fresh one, findings and syntax errors;
* analyze does not raise and every range is inside the document on UTF-8/16/32 character boundaries;
* every offered fix applies strictly, changes only its spans, keeps line breaks, re-parses, removes its finding;
* every ``--fix-all-every`` edits and at the end of each sequence: fix_all is idempotent and re-parses.

Failures are grouped by signature; the first input of each is saved under ``--out`` as JSON (``--replay FILE``
re-checks one). Exit status 1 when anything failed.

    .venv/bin/python scripts/fuzz_long.py --edits 100000 --minutes 10
    .venv/bin/python scripts/fuzz_long.py --lsp-frames 2000 --seed 7   # broken LSP framing instead (see below)

``--lsp-frames N`` fuzzes the server's message framing instead of the engine: N random breakages (a wrong, huge or
non-numeric ``Content-Length``, garbage between messages, split writes, lower-case and extra headers) written to a
real server over stdio, each followed by a well-formed request that must be answered, and 10*N randomly broken and
chunked streams through the reader alone (lsp/framing.py), every intact message delivered exactly once.
    BPROP_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest tests/fuzz   # the Hypothesis suite, long profile
"""
from __future__ import annotations

import argparse
import collections
import json
import logging
import multiprocessing
import random
import re
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

import fuzzlib as F  # noqa: E402
from bprop_lsp.engine import Settings  # noqa: E402

MODES = ("auto", "graph", "pynative")


def signature(exc: BaseException) -> str:
    """Exception type, first message line without numbers, and the innermost frame in bprop_lsp or parso."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = next((f"{Path(f.filename).name}:{f.name}" for f in reversed(frames)
                  if "bprop_lsp" in f.filename or "parso" in f.filename), "checker")
    first = (str(exc).splitlines() or [""])[0]
    first = re.sub(r"\d+", "N", first)[:120]
    return f"{type(exc).__name__} @ {where}: {first}"


class _CountLogs(logging.Handler):
    """Counts the engine's log records (e.g. the diff parser falling back to a full parse) instead of printing them."""

    def __init__(self, stats):
        super().__init__(logging.DEBUG)
        self.stats = stats

    def emit(self, record):
        self.stats[f"log {record.levelname.lower()}: {record.getMessage().split(' for ')[0][:80]}"] += 1


def run_worker(args) -> dict:
    worker, jobs, seed, target_edits, deadline, max_seq, fix_all_every, out = args
    cases = F.oracle_cases()
    stats = collections.Counter()
    engine_log = logging.getLogger("bprop_lsp")
    engine_log.handlers[:] = [_CountLogs(stats)]
    engine_log.setLevel(logging.DEBUG)
    engine_log.propagate = False
    failures: dict[str, dict] = {}
    counts: collections.Counter = collections.Counter()
    i = worker
    while stats["edits"] < target_edits and time.time() < deadline:
        rnd = random.Random(f"{seed}:{i}")
        pick = F.RandomPicker(rnd)
        if i % 2:
            source, text = "generated", F.gen_program(pick)
        else:
            name, text = cases[(i // 2) % len(cases)]
            source = f"oracle:{name}"
        settings = Settings(mode=pick.choice(MODES))
        doc = F.IncrementalDoc(settings)
        edits: list = []
        previous = text
        step = "initial"
        try:
            analysis = F.check_document(text, settings, analysis=doc.check(text))
            stats["documents"] += 1
            stats["fixes"] += sum(1 for f in analysis.findings if f.fix)
            n = pick.int(1, max_seq)
            for k in range(1, n + 1):
                edit = F.gen_edit(pick)
                edits.append(edit)
                previous, text = text, F.apply_edit(text, edit)
                step = f"edit {k}"
                analysis = F.check_document(text, settings, analysis=doc.check(text))
                stats["edits"] += 1
                stats["documents"] += 1
                stats["findings"] += len(analysis.findings)
                stats["fixes"] += sum(1 for f in analysis.findings if f.fix)
                if fix_all_every and k % fix_all_every == 0:
                    step = f"fix_all after edit {k}"
                    F.check_fix_all(text, settings)
                    stats["fix_all"] += 1
            step = "final fix_all"
            F.check_fix_all(text, settings)
            stats["fix_all"] += 1
        except Exception as exc:  # noqa: BLE001 - every failure is recorded, the run goes on
            sig = signature(exc)
            counts[sig] += 1
            if sig not in failures:
                record = {"signature": sig, "seed": f"{seed}:{i}", "source": source, "mode": settings.mode,
                          "step": step, "edits": edits, "previous": previous, "text": text,
                          "error": "".join(traceback.format_exception(exc))[-4000:]}
                failures[sig] = record
                if out is not None:
                    out.mkdir(parents=True, exist_ok=True)
                    path = out / f"failure-{len(list(out.glob('failure-*.json'))) + 1:03d}-w{worker}.json"
                    path.write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
                    record["file"] = str(path)
        finally:
            doc.close()
        stats["sequences"] += 1
        i += jobs
    return {"stats": dict(stats), "failures": failures, "counts": dict(counts)}


def run_differential_worker(args) -> dict:
    """``--differential``: structural edit sequences (fuzzlib.structural_edit: classes of one name, orphaned blocks
    with headers typed or pasted above them, half-deleted classes, moved statements, undo) over oracle cases,
    generated programs and corpus files; the session's findings compared with a fresh analysis after each edit,
    the rule memo standing in on every other sequence whatever the file's size."""
    worker, jobs, seed, target_edits, deadline, max_seq, verify_every, out = args
    cases = F.oracle_cases()
    stats = collections.Counter()
    engine_log = logging.getLogger("bprop_lsp")
    engine_log.handlers[:] = [_CountLogs(stats)]
    engine_log.setLevel(logging.DEBUG)
    engine_log.propagate = False
    failures: dict[str, dict] = {}
    counts: collections.Counter = collections.Counter()
    i = worker
    while stats["edits"] < target_edits and time.time() < deadline:
        rnd = random.Random(f"{seed}:{i}")
        pick = F.RandomPicker(rnd)
        try:
            stats["edits"] += F.run_differential(pick, cases, pick.int(1, max_seq), memo_always=i % 2 == 0,
                                                 verify_every=verify_every, stats=stats)
        except Exception as exc:  # noqa: BLE001 - every failure is recorded, the run goes on
            sig = signature(exc)
            counts[sig] += 1
            stats["mismatches" if isinstance(exc, AssertionError) else "errors"] += 1
            if sig not in failures:
                failures[sig] = {"signature": sig, "seed": f"{seed}:{i}", "source": "differential",
                                 "step": "", "error": "".join(traceback.format_exception(exc))[-4000:]}
                if out is not None:
                    out.mkdir(parents=True, exist_ok=True)
                    path = out / f"diff-failure-{len(list(out.glob('diff-failure-*.json'))) + 1:03d}-w{worker}.json"
                    path.write_text(json.dumps(failures[sig], ensure_ascii=False, indent=1), encoding="utf-8")
                    failures[sig]["file"] = str(path)
        stats["sequences"] += 1
        i += jobs
    return {"stats": dict(stats), "failures": failures, "counts": dict(counts)}


def replay(path: Path) -> int:
    record = json.loads(path.read_text(encoding="utf-8"))
    settings = Settings(mode=record["mode"])
    doc = F.IncrementalDoc(settings)
    try:
        doc.check(record["previous"])
        doc.check(record["text"])
        F.check_document(record["text"], settings)
        F.check_fix_all(record["text"], settings)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        return 1
    finally:
        doc.close()
    print("passes now:", record["signature"])
    return 0


def fuzz_framing(frames: int, seed: str) -> int:
    import test_lsp_fuzz as L

    base = int(seed) if seed.isdigit() else random.Random(seed).randrange(1 << 30)
    start = time.time()
    try:
        stats = L.run_framing_session(base, frames)
        delivered = L.reader_fuzz(base, frames * 10)
    except AssertionError as exc:
        print(f"fuzz_long: framing failure (seed {base}): {exc}")
        return 1
    print(f"fuzz_long: {stats['breakages']} framing breakages over stdio ({stats['answered_broken']} of the broken "
          f"requests answered), {frames * 10} broken streams through the reader ({delivered} intact messages "
          f"delivered), seed {base}, {time.time() - start:.0f} s: no failures")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edits", type=int, default=100_000, help="stop after this many edits (all workers)")
    ap.add_argument("--minutes", type=float, default=10.0, help="stop after this much time")
    ap.add_argument("--seed", default="0", help="base seed; sequence i uses '<seed>:<i>'")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--max-seq", type=int, default=30, help="most edits in one sequence")
    ap.add_argument("--fix-all-every", type=int, default=10, help="check fix_all every N edits (0: only at the end)")
    ap.add_argument("--out", type=Path, default=None, help="save the first input of each failure here (JSON)")
    ap.add_argument("--replay", type=Path, default=None, help="re-check one saved failure and exit")
    ap.add_argument("--lsp-frames", type=int, default=0, help="fuzz the server's message framing with N breakages")
    ap.add_argument("--differential", action="store_true",
                    help="structural edit families, the session against a fresh analysis (issue 25)")
    ap.add_argument("--verify-every", type=int, default=7,
                    help="with --differential: compare the verified findings too every N versions")
    args = ap.parse_args(argv)
    if args.replay:
        return replay(args.replay)
    if args.lsp_frames:
        return fuzz_framing(args.lsp_frames, args.seed)
    start = time.time()
    deadline = start + args.minutes * 60
    per_worker = -(-args.edits // args.jobs)
    worker = run_differential_worker if args.differential else run_worker
    tasks = [(w, args.jobs, args.seed, per_worker, deadline, args.max_seq,
              args.verify_every if args.differential else args.fix_all_every, args.out)
             for w in range(args.jobs)]
    if args.jobs == 1:
        results = [worker(tasks[0])]
    else:
        with multiprocessing.Pool(args.jobs) as pool:
            results = pool.map(worker, tasks)
    stats: collections.Counter = collections.Counter()
    counts: collections.Counter = collections.Counter()
    failures: dict[str, dict] = {}
    for r in results:
        stats.update(r["stats"])
        counts.update(r["counts"])
        for sig, rec in r["failures"].items():
            failures.setdefault(sig, rec)
    elapsed = time.time() - start
    if args.differential:
        print(f"fuzz_long: differential: {stats['edits']} edits in {stats['sequences']} sequences, "
              f"{stats['mismatches']} sequence(s) with a session/fresh mismatch, {stats['errors']} with an error, "
              f"{stats['findings']} findings compared, seed {args.seed!r}, {elapsed:.0f} s")
        for key in sorted(k for k in stats if k.startswith("edit ")):
            print(f"fuzz_long: {stats[key]} x {key}")
    else:
        print(f"fuzz_long: {stats['edits']} edits in {stats['sequences']} sequences, {stats['documents']} documents "
              f"analysed (incremental + fresh), {stats['findings']} findings, {stats['fixes']} fixes checked, "
              f"{stats['fix_all']} fix_all idempotence checks, seed {args.seed!r}, {elapsed:.0f} s")
    for key in sorted(k for k in stats if k.startswith("log ")):
        print(f"fuzz_long: {stats[key]} x engine {key}")
    if not failures:
        print("fuzz_long: no failures")
        return 0
    print(f"fuzz_long: {sum(counts.values())} failing sequence(s), {len(failures)} distinct signature(s):")
    for sig, n in counts.most_common():
        rec = failures[sig]
        print(f"  {n:5d} x {sig}\n          first: seed {rec['seed']} ({rec['source']}, {rec['step']})"
              + (f" -> {rec['file']}" if rec.get("file") else ""))
    return 1


if __name__ == "__main__":
    sys.exit(main())
