#!/usr/bin/env python3
"""Benchmark the server's background workspace index (issue 23; not a test).

A project of N ``gen_corpus`` files (1 % with a custom bprop, as ``bench_cli.py`` T2) plus ``pkg/model.py`` (a Cell
with a GRAPH-only finding, no mode of its own) and ``train.py`` (imports it, sets GRAPH_MODE). The server is
started with the project as its workspace folder and ``model.py`` is opened; measured, per run:

* **first**: didOpen -> the first ``publishDiagnostics`` of model.py (the index is built in the background: the
  finding is a warning until it is done);
* **indexed**: didOpen -> model.py's finding an error (the index done, model.py analysed again);

and the same *first* in a project of model.py and train.py alone, run in turn with it (the baseline: what the
first diagnostics cost without 2,000 files to index). Target: first(N files) <= 1.1x first(alone).

Run: ``.venv/bin/python scripts/bench_index.py [--files 2000] [--runs 5]``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cli import _load_generator, make_tree  # noqa: E402
from bench_server import Client  # noqa: E402

MODEL = """import mindspore as ms
from mindspore import nn, ops


class ScaleCell(nn.Cell):
    def construct(self, x):
        return x * 2

    def bprop(self, x, out, dout):
        return dout * 2
"""
TRAIN = """import mindspore as ms
from pkg.model import ScaleCell

ms.set_context(mode=ms.GRAPH_MODE)
net = ScaleCell()
grads = ms.grad(net)(ms.Tensor(1.0))
"""


def project(root: Path, files: int, generator) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "train.py").write_text(TRAIN)
    (root / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
    if files:
        make_tree(root / "corpus", files, 150, 600, 0.01, generator, 7)
    return root


def open_once(root: Path) -> tuple[float, float | None]:
    from pygls import uris

    client = Client()
    try:
        rid = client.request("initialize", {"processId": os.getpid(), "rootUri": uris.from_fs_path(str(root)),
                                            "workspaceFolders": [{"uri": uris.from_fs_path(str(root)), "name": "b"}],
                                            "capabilities": {"textDocument": {"publishDiagnostics": {
                                                "versionSupport": True}}, "window": {"workDoneProgress": True}}})
        client.wait(lambda m: m.get("id") == rid)
        client.notify("initialized", {})
        uri = uris.from_fs_path(str(root / "pkg" / "model.py"))
        t0 = client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                     "version": 1, "text": MODEL}})

        def diagnostics(m):
            if m.get("method") == "window/workDoneProgress/create":
                client.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
                return False
            return m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri

        t_first, msg = client.wait(diagnostics, timeout=600)
        severities = [d["severity"] for d in msg["params"]["diagnostics"]]
        t_error = t_first if severities == [1] else None
        while t_error is None:
            t, msg = client.wait(diagnostics, timeout=600)
            if [d["severity"] for d in msg["params"]["diagnostics"]] == [1]:
                t_error = t
        return t_first - t0, t_error - t0
    finally:
        client.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--generator", default="/work/shared/perf/gen_corpus.py")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_index_"))
    try:
        big = project(tmp / "big", args.files, _load_generator(args.generator))
        alone = project(tmp / "alone", 0, None)
        rows = {"big": [], "alone": []}
        for _ in range(args.runs):  # (in turn: load drifts alike for both)
            rows["big"].append(open_once(big))
            rows["alone"].append(open_once(alone))
        first_big = statistics.median(r[0] for r in rows["big"])
        first_alone = statistics.median(r[0] for r in rows["alone"])
        indexed = statistics.median(r[1] for r in rows["big"])
        print(f"{args.files} files: first diagnostics {first_big * 1e3:.0f} ms (median of {args.runs}), "
              f"alone {first_alone * 1e3:.0f} ms: {first_big / first_alone:.2f}x (target <= 1.1x); "
              f"indexed and analysed again {indexed * 1e3:.0f} ms")
        print("  per run (first, indexed) ms, big:", [(round(a * 1e3), round(b * 1e3)) for a, b in rows["big"]],
              "alone:", [(round(a * 1e3), round(b * 1e3)) for a, b in rows["alone"]])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
