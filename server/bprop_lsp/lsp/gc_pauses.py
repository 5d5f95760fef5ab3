"""Garbage-collector pauses, recorded for the memory benchmark (scripts/bench_memory.py) when the environment
variable ``BPROP_LSP_GC_STATS`` names a file: the longest pause so far and how many exceeded 50 ms are written
there whenever either changes (rarely: not on every collection). Off otherwise, at no cost."""
from __future__ import annotations

import gc
import json
import os
import threading
import time
import traceback

SLOW_MS = 50.0


class GcPauses:
    def __init__(self, path: str):
        self.path = path
        self.longest_ms = 0.0
        self.slow = 0
        self.collections = 0
        self.slowest: list[tuple[int, float]] = []  # (generation, ms, thread) of the slow ones, the first 50
        self._started = 0.0
        self._write()

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        self.collections += 1
        ms = (time.perf_counter() - self._started) * 1e3
        changed = False
        if ms > self.longest_ms:
            self.longest_ms, changed = ms, True
        if ms > SLOW_MS:
            self.slow, changed = self.slow + 1, True
            if len(self.slowest) < 50:
                # Where the collection was triggered (the allocating code), for whoever reads the benchmark.
                where = [f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in traceback.extract_stack(limit=8)[:-1]]
                self.slowest.append((info.get("generation", -1), round(ms, 1), threading.current_thread().name, where))
        if changed:
            self._write()

    def _write(self) -> None:
        try:
            with open(self.path, "w", encoding="utf-8") as fh:
                json.dump({"longest_ms": round(self.longest_ms, 2), "over_50ms": self.slow,
                           "collections": self.collections, "slow": self.slowest}, fh)
        except OSError:
            pass


def install_from_environment() -> None:
    path = os.environ.get("BPROP_LSP_GC_STATS")
    if path:
        gc.callbacks.append(GcPauses(path))
