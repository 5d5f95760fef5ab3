#!/usr/bin/env python3
"""Benchmark ``bprop-lsp check``'s result cache against ``ast.parse`` of the same files, side by side.

    python3 scripts/bench_cache.py                       # a generated bprop-dense tree, and the installed wheel
    python3 scripts/bench_cache.py --corpus DIR          # any tree instead (never copied, never written)
    python3 scripts/bench_cache.py --repeat 7

For each tree and each repetition, back to back:
  baseline  reading + ``ast.parse`` of every ``.py`` file, in a fresh interpreter (start-up included, as for
            every command below);
  cold      ``bprop-lsp check`` with an empty cache folder;
  warm      the same command again, nothing changed (issue 23's target: <= 0.05x baseline);
  one-edit  one file with ``bprop`` changed (a comment appended), then the command (target: <= that file's own
            analysis + 0.05x baseline; the file's own cold ``check`` is shown beside it). In the generated tree
            the file itself is edited; a tree that must not be written (the installed wheel, ``--corpus``) is
            checked together with a copy of one of its ``bprop`` files in the scratch folder, edited there.
Ratios are medians of the per-repetition ratios. The cache folder is a temporary one (``--cache-dir``), so the
tree is never written. The generated tree comes from /work/shared/perf/gen_corpus.py (or $BPROP_GEN_CORPUS).

The commands run without ``PYTHONDONTWRITEBYTECODE`` (an installed package has its bytecode compiled; an editable
checkout writes it on its first run, which an untimed run does first), and the generated tree is left to age
past the cache's racy window (``RACY_NS``, 2 s) before it is measured, as a checkout's files are: a file
written less than 2 s before a run is hashed, not trusted by its stat.
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GENERATOR = os.environ.get("BPROP_GEN_CORPUS", "/work/shared/perf/gen_corpus.py")
BASELINE = ("import ast, os, sys\n"
            "for d, ds, fs in os.walk(sys.argv[1]):\n"
            "    ds.sort()\n"
            "    for f in sorted(fs):\n"
            "        if f.endswith('.py'):\n"
            "            p = os.path.join(d, f)\n"
            "            try:\n"
            "                ast.parse(open(p, 'rb').read(), p)\n"
            "            except (SyntaxError, ValueError):\n"
            "                pass\n")


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
RACY_S = 2.1  # cli/cache.py's RACY_NS, and a little


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV)
    return time.perf_counter() - start


def generated_tree(root: Path) -> Path:
    if not os.path.exists(GENERATOR):
        sys.exit(f"bench_cache: {GENERATOR} not found (set BPROP_GEN_CORPUS or pass --corpus)")
    out = root / "generated"
    # 24 distinct model files (the generator names a file by its size): 8 of ~2,000 lines, 16 of ~500.
    sizes = [str(2000 + i) for i in range(8)] + [str(500 + i) for i in range(16)]
    subprocess.run([sys.executable, GENERATOR, str(out), *sizes], check=True, stdout=subprocess.DEVNULL)
    time.sleep(RACY_S)
    return out


def installed_wheel() -> Path | None:
    for pattern in ("/work/msvenv/lib/python3*/site-packages/mindspore",
                    os.path.join(sys.prefix, "lib/python3*/site-packages/mindspore")):
        for hit in glob.glob(pattern):
            return Path(hit)
    return None


def bprop_file(tree: Path) -> Path | None:
    for path in sorted(tree.rglob("*.py")):
        try:
            if "bprop" in path.read_text(encoding="utf-8", errors="replace"):
                return path
        except OSError:
            continue
    return None


def bench(name: str, tree: Path, repeat: int, scratch: Path, editable: bool) -> None:
    exe = shutil.which("bprop-lsp") or sys.exit("bench_cache: bprop-lsp is not on PATH")
    files = list(tree.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    edited = bprop_file(tree)
    extra: list[str] = []
    if edited is not None and not editable:
        # The tree is not written: a copy of one of its bprop files, checked with it, is the file that changes.
        copy_dir = scratch / f"edited-{name.split()[0]}"
        copy_dir.mkdir(exist_ok=True)
        copy = copy_dir / edited.name
        copy.write_bytes(edited.read_bytes())
        edited, extra = copy, [str(copy)]
        time.sleep(RACY_S)
    timed([exe, "check", "--no-color", "-q", "--cache-dir", str(scratch / "warm-up"), str(tree)])  # bytecode
    rows: dict[str, list[float]] = {k: [] for k in ("baseline", "cold", "warm", "one-edit", "file-alone")}
    for rep in range(repeat):
        cache = scratch / f"cache-{name}-{rep}"
        check = [exe, "check", "--no-color", "-q", "--cache-dir", str(cache), str(tree), *extra]
        rows["baseline"].append(timed([sys.executable, "-c", BASELINE, str(tree)]))
        rows["cold"].append(timed(check))
        rows["warm"].append(timed(check))
        if edited is not None:
            original = edited.read_bytes()
            try:
                edited.write_bytes(original + f"\n# edit {rep}\n".encode())
                rows["one-edit"].append(timed(check))
                rows["file-alone"].append(timed([exe, "check", "--no-color", "-q", "--no-cache", str(edited)]))
            finally:
                edited.write_bytes(original)
            time.sleep(RACY_S)  # (the restored file ages, as the others have)
        shutil.rmtree(cache, ignore_errors=True)
    base = rows["baseline"]

    def ratio(key: str) -> str:
        values = rows[key]
        if not values:
            return "      -"
        r = statistics.median(v / b for v, b in zip(values, base))
        return f"{statistics.median(values) * 1000:7.0f} ms {r:5.2f}x"

    print(f"\n{name}: {len(files)} files, {lines:,} lines ({tree})")
    print(f"  baseline (read + ast.parse)  {statistics.median(base) * 1000:7.0f} ms  1.00x")
    for key, label in (("cold", "cold check"), ("warm", "warm check (unchanged)"),
                       ("one-edit", "one file edited"), ("file-alone", "that file alone, no cache")):
        print(f"  {label:28s} {ratio(key)}")
    if rows["one-edit"]:
        extra = statistics.median((e - a) / b for e, a, b in zip(rows["one-edit"], rows["file-alone"], base))
        print(f"  one-edit minus the file alone: {extra:+.3f}x baseline (target <= 0.05x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="append", type=Path, help="a tree to measure (repeatable)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_cache_") as scratch_name:
        scratch = Path(scratch_name)
        if args.corpus:
            for tree in args.corpus:
                bench(tree.name, tree.resolve(), args.repeat, scratch, editable=False)
            return
        bench("generated (bprop-dense)", generated_tree(scratch), args.repeat, scratch, editable=True)
        wheel = installed_wheel()
        if wheel is None:
            print("\ninstalled MindSpore wheel: not found, SKIPPED")
        else:
            bench("installed MindSpore wheel (sparse)", wheel, args.repeat, scratch, editable=False)


if __name__ == "__main__":
    main()
