"""``check --watch``: check, then check again whenever a Python file or a ``pyproject.toml`` under the paths
changes (ruff's ``--watch``: the screen cleared before each run, a timestamped line saying why it runs).

Polling (every ``--watch-interval`` seconds, 0.5 by default): the modification times and sizes of the files the
walk finds (and the configuration files above and below the paths) are compared between polls, which needs no
dependency and works on every file system. Ctrl-C ends it (exit 0).
"""
from __future__ import annotations

import os
import sys
import time
from typing import Callable

CLEAR = "\x1b[H\x1b[2J\x1b[3J"  # what ruff writes: cursor home, clear the screen and the scroll-back


def _stamp() -> str:
    return time.strftime("[%H:%M:%S]")


def snapshot(paths: list[str], respect_gitignore: bool = True) -> dict[str, tuple[int, int]]:
    """path -> (mtime_ns, size) of every Python file under ``paths`` and of the configuration files."""
    from ..sources import iter_paths

    found: dict[str, tuple[int, int]] = {}
    names = list(iter_paths(paths, respect_gitignore=respect_gitignore))
    for path in paths:
        here = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
        for folder in dict.fromkeys((here, os.path.dirname(here))):
            names.append(os.path.join(folder, "pyproject.toml"))
        for root, dirs, files in os.walk(here):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
            names += [os.path.join(root, f) for f in files if f in ("pyproject.toml", ".gitignore", ".ignore")]
    for name in names:
        try:
            st = os.stat(name)
        except OSError:
            continue
        found[name] = (st.st_mtime_ns, st.st_size)
    return found


def watch(args, run: Callable[[], int], out=None) -> int:
    """Run ``run`` now and after every change; ``--watch-iterations N`` (for tests) stops after N runs."""
    out = out or sys.stdout
    paths = args.paths or ["."]
    args.watch_stamp = _stamp  # (check prints "[time] Found N findings. Watching for file changes." first)
    runs = 0
    reason = "Starting linter in watch mode..."
    try:
        while True:
            out.write(f"{CLEAR}{_stamp()} {reason}\n\n")
            out.flush()
            before = snapshot(paths, args.respect_gitignore)
            args._watch_reported = False
            code = run()
            if code == 2 and not getattr(args, "_watch_reported", False):
                out.write(f"{_stamp()} Stopped by an error (above). Watching for file changes.\n")
            out.flush()
            runs += 1
            if args.watch_iterations is not None and runs >= args.watch_iterations:
                return 0
            while True:
                time.sleep(max(0.05, args.watch_interval))
                now = snapshot(paths, args.respect_gitignore)
                if now != before:
                    break
            reason = "File change detected..."
    except KeyboardInterrupt:
        return 0
