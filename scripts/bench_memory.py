#!/usr/bin/env python3
"""Benchmark the server's memory with several large model files open (not a test).

Opens N generated 10,000-line MindSpore model files (``gen_corpus.py``) in a real server process over stdio, types
in each, waits for the diagnostics and for the fixes to be checked (a code action waits for that), then reads:

* the server's RSS growth since start-up (engine loaded), against the RSS growth of a plain process that holds
  parso trees of the same texts (what the trees themselves cost): the target is at most 2x;
* the longest garbage-collector pause in the server (``BPROP_LSP_GC_STATS``, gc_pauses.py): at most 50 ms.

Run: ``.venv/bin/python scripts/bench_memory.py --corpus DIR [--documents 5] [--size 10000]``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_model import GENERATOR, corpus_file  # noqa: E402
from bench_server import Client, published  # noqa: E402

PARSO_BASELINE = r"""
import json, sys
import parso

def rss():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith("VmRSS:")) * 1024

grammar = parso.load_grammar()
grammar.parse("x = 1\n")
before = rss()
texts = json.load(sys.stdin)
trees = [grammar.parse(t, error_recovery=True) for t in texts]
print(rss() - before)
"""


def rss_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:")) * 1024


def documents(base: str, n: int) -> list[str]:
    # Distinct texts (no string shared between documents), same shape.
    return [f"# document {i}\n" + base + f"\nDOC_{i} = {i}\n" for i in range(n)]


def parso_growth(texts: list[str]) -> int:
    out = subprocess.run([sys.executable, "-c", PARSO_BASELINE], input=json.dumps(texts), capture_output=True,
                         text=True, check=True)
    return int(out.stdout.strip())


def server_growth(texts: list[str], edits: int) -> tuple[int, dict, int]:
    stats = tempfile.NamedTemporaryFile(prefix="bprop-gc-", suffix=".json", delete=False)
    stats.close()
    client = Client(env=dict(os.environ, BPROP_LSP_GC_STATS=stats.name))
    try:
        client.initialize()
        time.sleep(2.0)  # the engine is imported and parso's grammar loaded off the event loop (warm-up)
        start = rss_of(client.proc.pid)
        uris = [f"file:///tmp/bench-memory/model_{i}.py" for i in range(len(texts))]
        for uri, text in zip(uris, texts):
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                    "text": text}})
            client.wait(published(uri, 1), timeout=600)
        for uri, text in zip(uris, texts):
            lines = text.splitlines()
            line = len(lines) // 2
            for k in range(edits):
                version = k + 2
                character = len(lines[line])
                change = ({"range": {"start": {"line": line, "character": character},
                                     "end": {"line": line, "character": character}}, "text": " "} if k % 2 == 0 else
                          {"range": {"start": {"line": line, "character": character},
                                     "end": {"line": line, "character": character + 1}}, "text": ""})
                client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                         "contentChanges": [change]})
                _, msg = client.wait(published(uri, version), timeout=600)
            # A quick-fix request waits for the fixes of the current version to be checked.
            diagnostics = msg["params"]["diagnostics"]
            if diagnostics:
                rid = client.request("textDocument/codeAction", {
                    "textDocument": {"uri": uri}, "range": diagnostics[0]["range"],
                    "context": {"diagnostics": diagnostics[:1]}})
                client.wait(lambda m: m.get("id") == rid, timeout=600)
        time.sleep(1.0)
        end = rss_of(client.proc.pid)
        with open(stats.name, encoding="utf-8") as fh:
            gc_stats = json.load(fh)
        return end - start, gc_stats, start
    finally:
        client.close()
        os.unlink(stats.name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, help="directory for (or with) gen_corpus.py's synth_N.py files")
    ap.add_argument("--generator", default=GENERATOR)
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--documents", type=int, default=5)
    ap.add_argument("--edits", type=int, default=6)
    args = ap.parse_args()
    texts = documents(corpus_file(args.corpus, args.size, args.generator), args.documents)
    trees = parso_growth(texts)
    grown, gc_stats, start = server_growth(texts, args.edits)
    mib = 1024 * 1024
    ratio = grown / trees
    print(f"{args.documents} documents of {args.size} lines ({sum(len(t) for t in texts) / mib:.1f} MiB of text)")
    print(f"parso trees alone: +{trees / mib:.0f} MiB   server: +{grown / mib:.0f} MiB over {start / mib:.0f} MiB "
          f"at start-up   ratio {ratio:.2f} (target <= 2)  {'PASS' if ratio <= 2 else 'FAIL'}")
    longest = gc_stats["longest_ms"]
    print(f"longest GC pause in the server: {longest:.1f} ms over {gc_stats['collections']} collections, "
          f"{gc_stats['over_50ms']} over 50 ms (target none)  {'PASS' if gc_stats['over_50ms'] == 0 else 'FAIL'}")
    if gc_stats.get("slow"):
        print("  slow collections (generation, ms):", gc_stats["slow"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
