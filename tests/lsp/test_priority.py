"""Keystrokes ahead of background work (issue 25, item 9): the analysis worker runs jobs by priority
(lsp/worker.py), fix checks are sized to a short job, and the workspace scan runs a file only when the worker is
free. Orders are asserted, not times."""
from __future__ import annotations

import threading
import time

from mul_add import BAD, GOOD, program
from raw_client import RawServer

from bprop_lsp.lsp import worker as prio
from bprop_lsp.lsp.worker import PriorityWorker

PUSH_CAPS = {"textDocument": {"publishDiagnostics": {"versionSupport": True}}}


def test_the_most_urgent_waiting_job_runs_next():
    w = PriorityWorker("test")
    gate = threading.Event()
    order = []
    try:
        blocker = w.submit(gate.wait, priority=prio.VERIFY)  # running: the others queue behind it
        time.sleep(0.05)
        futures = [w.submit(order.append, name, priority=p) for name, p in [
            ("scan", prio.SCAN), ("verify", prio.VERIFY), ("open", prio.OPEN), ("verify2", prio.VERIFY),
            ("request", prio.REQUEST), ("keystroke", prio.KEYSTROKE)]]
        assert w.waiting() == 6 and w.waiting(below=prio.OPEN) == 2
        gate.set()
        for f in futures:
            f.result(timeout=10)
        blocker.result(timeout=10)
        assert order == ["keystroke", "request", "open", "verify", "verify2", "scan"]
        assert w.wait_idle(timeout=10) and w.idle()
    finally:
        w.shutdown(wait=True)


def test_a_failing_job_fails_its_future_only():
    w = PriorityWorker("test")
    try:
        bad = w.submit(lambda: 1 / 0)
        good = w.submit(lambda: 42)
        assert good.result(timeout=10) == 42
        assert isinstance(bad.exception(timeout=10), ZeroDivisionError)
    finally:
        w.shutdown(wait=True, cancel_futures=True)


def _diagnostics_order(server: RawServer, wanted: set, timeout: float = 300) -> list:
    """(uri, version) of each publishDiagnostics, in arrival order, until every one of ``wanted`` has come."""
    seen: list = []
    deadline = time.monotonic() + timeout
    while not wanted <= set(seen):
        msg = server.wait_notification(lambda m: m["method"] == "textDocument/publishDiagnostics"
                                       and (m["params"]["uri"], m["params"].get("version")) not in seen,
                                       max(1.0, deadline - time.monotonic()))
        seen.append((msg["params"]["uri"], msg["params"].get("version")))
    return seen


def test_a_keystroke_goes_before_the_first_analyses_of_documents_just_opened():
    """Opening 40 documents queues 40 first analyses; an edit of the first one (analysed already) is analysed
    before the documents opened after it (it waited behind all of them: 0.9 s after 60, 2.1 s after 150)."""
    server = RawServer()
    try:
        server.initialize(PUSH_CAPS)
        first = "file:///tmp/bprop-prio/doc0.py"
        server.open(first, program(BAD, 5))
        server.wait_notification(lambda m: m["method"] == "textDocument/publishDiagnostics"
                                 and m["params"]["uri"] == first)
        uris = [f"file:///tmp/bprop-prio/doc{i}.py" for i in range(1, 41)]
        for i, uri in enumerate(uris):
            server.open(uri, program(BAD, 20, start=20 * i))
        server.notify("textDocument/didChange", {"textDocument": {"uri": first, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "#"}]})
        order = _diagnostics_order(server, {(first, 2), (uris[-1], 1)})
        assert order.index((first, 2)) < order.index((uris[-1], 1)), order
        opened_before = [u for u in uris if (u, 1) in order[:order.index((first, 2))]]
        assert len(opened_before) < len(uris) // 2, order
    finally:
        server.close()


def test_fix_checks_are_jobs_sized_to_a_chunk(tmp_path):
    """A document with 400 findings: its fixes are checked together in groups sized from the last group's time to
    take about VERIFY_CHUNK_S each (a keystroke waits for at most one group; they were 32 fixes, 230-370 ms),
    starting small."""
    import ast
    import re

    from raw_client import SERVER_COMMAND

    from bprop_lsp.lsp import scheduler

    log_file = tmp_path / "server.log"
    server = RawServer([*SERVER_COMMAND, "--log-file", str(log_file)])
    try:
        server.initialize(PUSH_CAPS)
        big = "file:///tmp/bprop-prio/big.py"
        server.open(big, program(BAD, 400))
        deadline = time.monotonic() + 300
        def log() -> str:
            return log_file.read_text(errors="replace") if log_file.exists() else ""

        while "checked the fixes of " + big not in log():
            assert time.monotonic() < deadline, log()[-3000:]
            time.sleep(0.2)
        line = next(l for l in log().splitlines() if "checked the fixes of " + big in l)
        groups = ast.literal_eval(re.search(r"size and seconds: (\[.*\])", line).group(1))
        assert groups and groups[0][0] == scheduler.VERIFY_FIRST_GROUP, line
        total = sum(size for size, _ in groups)  # every fix that was checked in a group
        done = 0
        for (size, seconds), (next_size, _) in zip(groups, groups[1:]):
            done += size
            per_fix = seconds / size  # (as the scheduler computes it)
            # (the last group is also cut to the fixes left)
            assert next_size == min(scheduler.VERIFY_GROUP, int(scheduler.VERIFY_CHUNK_S / per_fix), total - done), line
    finally:
        server.close()




def test_a_keystroke_is_not_held_up_by_the_workspace_scan(tmp_path):
    """The workspace scan analyses a large file on disk (seconds, no findings); an edit of an open document made
    meanwhile gets its diagnostics before the scan answers (it waited behind the whole file: 17 s behind a
    9.75 MiB one)."""
    big = tmp_path / "big_model.py"
    big.write_text(program(GOOD, 3000))
    small = (tmp_path / "small.py").as_uri()
    server = RawServer()
    try:
        server.initialize(PUSH_CAPS, rootUri=tmp_path.as_uri(),
                          workspaceFolders=[{"uri": tmp_path.as_uri(), "name": "ws"}])
        server.open(small, program(BAD, 1))
        server.wait_notification(lambda m: m["method"] == "textDocument/publishDiagnostics"
                                 and m["params"]["uri"] == small)
        scan = server.request_async("workspace/diagnostic", {"previousResultIds": []})
        time.sleep(1.0)  # the scan is analysing big_model.py now
        server.notify("textDocument/didChange", {"textDocument": {"uri": small, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "#"}]})
        server.wait_notification(lambda m: m["method"] == "textDocument/publishDiagnostics"
                                 and m["params"]["uri"] == small and m["params"].get("version") == 2, timeout=300)
        with server.cond:
            answered = scan in server.responses
        assert not answered, "the keystroke waited for the scan"
        server.response(scan, timeout=300)
    finally:
        server.close()


def test_a_keystroke_is_not_queued_behind_a_whole_fix_check(tmp_path):
    """BP001 made endlessly slow inside fix re-checks (slow_check_server.py: a check never ends by itself, 20 ms a
    Cell): keystrokes of another document and of the document itself still get their diagnostics, because the
    running check gives way (engine/preempt.py) and is queued again behind them. Before, a keystroke waited for
    the whole check it arrived in."""
    import sys
    from pathlib import Path

    checks = tmp_path / "checks.log"
    server = RawServer([sys.executable, str(Path(__file__).parent / "slow_check_server.py")],
                       env={"BPROP_TEST_CHECKS": str(checks)})

    def log() -> list[str]:
        return checks.read_text().split() if checks.exists() else []

    def wait_log(n_starts: int) -> None:
        deadline = time.monotonic() + 60
        while log().count("start") < n_starts:
            assert time.monotonic() < deadline, log()
            time.sleep(0.05)

    def push(uri, version):
        return server.wait_notification(lambda m: m["method"] == "textDocument/publishDiagnostics"
                                        and m["params"]["uri"] == uri and m["params"].get("version") == version)

    try:
        server.initialize(PUSH_CAPS)
        other, big = "file:///tmp/bprop-prio/other.py", "file:///tmp/bprop-prio/checked.py"
        server.open(other, program(GOOD, 1))
        push(other, 1)
        server.open(big, program(BAD, 20))
        assert len(push(big, 1)["params"]["diagnostics"]) == 20
        wait_log(1)  # a re-check runs (and would run for ever)
        server.notify("textDocument/didChange", {"textDocument": {"uri": other, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "#"}]})
        assert push(other, 2)["params"]["diagnostics"] == []
        assert log()[:2] == ["start", "end"], log()  # the check stopped for the keystroke ...
        wait_log(2)  # ... and was queued again behind it
        end = program(BAD, 20).count("\n")  # a comment typed on the last line
        server.notify("textDocument/didChange", {"textDocument": {"uri": big, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": end, "character": 0}, "end": {"line": end, "character": 0}}, "text": "#"}]})
        assert len(push(big, 2)["params"]["diagnostics"]) == 20
        assert log()[:4] == ["start", "end", "start", "end"], log()
    finally:
        server.close()
