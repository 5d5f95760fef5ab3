#!/usr/bin/env python3
"""Benchmark the language server against CPython, side by side in one run (not a test).

* didChange -> publishDiagnostics latency of a one-character edit in generated 2,000 / 10,000 / 50,000-line
  files (ordinary code plus one Cell with a bprop), against ``ast.parse`` of the same text;
* server start-up (process start -> ``initialize`` answered) against a bare ``python -c "import pygls"``.

Absolute times move with machine load; the ratios, measured in the same run, are what to compare.
Run: ``.venv/bin/python scripts/bench_server.py [--sizes 2000,10000,50000] [--edits 9]``.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import threading
import time

SERVER = [sys.executable, "-m", "bprop_lsp", "serve"] if not os.environ.get("BENCH_SERVER") else [sys.executable, os.environ["BENCH_SERVER"]]


def generate(n_lines: int, seed: int = 0) -> str:
    """Ordinary Python (functions, classes, comprehensions, try blocks) and one Cell with a broken bprop."""
    rnd = random.Random(seed)
    out = ["import math", "from mindspore import nn", ""]
    i = 0
    while len(out) < n_lines - 8:
        i += 1
        k = rnd.randint(0, 3)
        if k == 0:
            out += [f"def func_{i}(a, b=2, *args, **kw):", f"    '''Docstring {i}.'''", f"    x = a * b + {i}",
                    "    for j in range(10):", "        x += j ** 2 if j % 2 else -j",
                    "    return [x, {'k': x}, (a, b)]", ""]
        elif k == 1:
            out += [f"class Thing{i}:", f"    attr = {i}", "    def __init__(self, v):", "        self.v = v",
                    "    def method(self, other):", "        return self.v + other.v", ""]
        elif k == 2:
            out += [f"VALUE_{i} = [n * {i} for n in range(20) if n % 3]", f"NAME_{i} = 'text {i}' + str(VALUE_{i})", ""]
        else:
            out += ["try:", f"    R{i} = math.sqrt({i})", "except ValueError as exc:", f"    R{i} = None", ""]
    out += ["class MulAdd(nn.Cell):", "    def construct(self, x, y):", "        return 2 * x + y", "",
            "    def bprop(self, x, y, out):", "        return 2 * out, out", ""]
    return "\n".join(out) + "\n"


class Client:
    """A minimal stdio JSON-RPC client: no pygls on this side, so the timings are the server's."""

    def __init__(self, env=None):
        self.t_start = time.perf_counter()
        self.proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None if os.environ.get("BENCH_SERVER") else subprocess.DEVNULL,
                                     env=env)
        self.inbox: queue.Queue = queue.Queue()
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.inbox.put((time.perf_counter(), json.loads(out.read(length))))

    def send(self, message: dict) -> float:
        body = json.dumps(message).encode()
        t = time.perf_counter()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return t

    def request(self, method, params):
        self._id += 1
        self.send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        return self._id

    def notify(self, method, params):
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, predicate, timeout=120.0):
        deadline = time.perf_counter() + timeout
        while True:
            t, msg = self.inbox.get(timeout=max(0.01, deadline - time.perf_counter()))
            if msg.get("method") == "workspace/configuration":  # answer: no editor settings
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": [None] * len(msg["params"]["items"])})
                continue
            if predicate(msg):
                return t, msg

    def initialize(self) -> float:
        rid = self.request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {
            "textDocument": {"publishDiagnostics": {"versionSupport": True, "dataSupport": True},
                             "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}},
            "general": {"positionEncodings": ["utf-16"]}}})
        t, _ = self.wait(lambda m: m.get("id") == rid)
        self.notify("initialized", {})
        return t - self.t_start

    def close(self):
        rid = self.request("shutdown", None)
        try:
            self.wait(lambda m: m.get("id") == rid, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001
            self.proc.kill()


def published(uri, version):
    return lambda m: (m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                      and m["params"].get("version") == version)


def best_of(fn, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_size(n_lines: int, edits: int) -> dict:
    text = generate(n_lines)
    t_ast = best_of(lambda: ast.parse(text), 5)
    client = Client()
    client.initialize()
    uri = f"file:///bench/file_{n_lines}.py"
    t_open = client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}})
    t_first, msg = client.wait(published(uri, 1))
    assert msg["params"]["diagnostics"], "the generated file's bprop must be flagged"
    # Ask for the quick fix: answered once the server has re-parsed and re-checked the fix (deferred work
    # that otherwise runs when the document goes quiet), so the edits below start from an idle server.
    diag = msg["params"]["diagnostics"][0]
    rid = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diag["range"],
                                                      "context": {"diagnostics": [diag]}})
    t_fix, answer = client.wait(lambda m: m.get("id") == rid)
    assert answer.get("result"), "the quick fix must be offered"
    lines = text.split("\n")
    line_no = len(lines) // 2
    while not lines[line_no].strip():
        line_no += 1
    col = len(lines[line_no])
    latencies = []
    version = 1
    for i in range(edits):
        version += 1
        insert = i % 2 == 0  # type a character, then delete it again
        change = {"range": {"start": {"line": line_no, "character": col}, "end": {"line": line_no, "character": col}},
                  "text": " "} if insert else {
            "range": {"start": {"line": line_no, "character": col}, "end": {"line": line_no, "character": col + 1}},
            "text": ""}
        sent = client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                         "contentChanges": [change]})
        got, msg = client.wait(published(uri, version))
        assert msg["params"]["diagnostics"]
        latencies.append(got - sent)
        # A pause longer than the debounce (each edit is a fresh one, as when a user stops typing) but shorter
        # than the idle time after which the fix check runs.
        time.sleep(0.25)
    client.close()
    return {"lines": len(lines) - 1, "ast": t_ast, "open": t_first - t_open, "fix_ready": t_fix - t_open,
            "edit": statistics.median(latencies), "edit_max": max(latencies)}


def bench_startup(runs: int) -> tuple[float, float, float]:
    bare = best_of(lambda: subprocess.run([sys.executable, "-c", "import pygls"], check=True), runs)
    stack = best_of(lambda: subprocess.run([sys.executable, "-c", "import pygls.lsp.server, lsprotocol.types"],
                                           check=True), runs)
    starts = []
    for _ in range(runs):
        c = Client()
        starts.append(c.initialize())
        c.close()
    return statistics.median(starts), bare, stack


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000,10000,50000")
    ap.add_argument("--edits", type=int, default=9, help="one-character edits per size (median reported)")
    ap.add_argument("--startup-runs", type=int, default=5)
    args = ap.parse_args()
    rows = [bench_size(int(n), args.edits) for n in args.sizes.split(",")]
    start, bare, stack = bench_startup(args.startup_runs)
    print(f"{'lines':>7} | {'ast.parse':>10} | {'didOpen->diag':>13} | {'->fix checked':>13} | "
          f"{'1-char edit->diag':>17} | {'max':>8} | {'edit / ast.parse':>16}")
    print("-" * 104)
    for r in rows:
        print(f"{r['lines']:>7} | {r['ast'] * 1e3:>8.1f}ms | {r['open'] * 1e3:>11.1f}ms | {r['fix_ready'] * 1e3:>11.1f}ms | "
              f"{r['edit'] * 1e3:>15.1f}ms | {r['edit_max'] * 1e3:>6.1f}ms | {r['edit'] / r['ast']:>16.2f}")
    print()
    print(f"start-up (spawn -> initialize answered): {start * 1e3:.0f} ms")
    print(f"  python -c 'import pygls':                             {bare * 1e3:6.0f} ms  (server / this = {start / bare:.1f})")
    print(f"  python -c 'import pygls.lsp.server, lsprotocol.types': {stack * 1e3:6.0f} ms  (server / this = {start / stack:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
