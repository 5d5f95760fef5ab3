"""The workspace scan's child process (issue 25, item 9; lsp/scan_process.py, lsp/scan_child.py): its findings are
the in-process analysis's, it runs outside the workspace with no current folder on its path, it is replaced when it
leaves or dies, and it dies with the server. Behaviour only: the keystroke times are scripts/bench_fix_checks.py's.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from raw_client import SERVER_COMMAND, RawServer

from bprop_lsp.engine import Settings
from bprop_lsp.lsp import scan_process
from bprop_lsp.lsp.scan_process import ChildDied, ScanProcess, Unavailable
from bprop_lsp.lsp.workspace_scan import _analyse
from mul_add import BAD, GOOD, program

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

ROOT = Path(__file__).resolve().parents[2]
PULL_CAPS = {"textDocument": {"diagnostic": {"dynamicRegistration": False}},
             "workspace": {"diagnostics": {"refreshSupport": False}}}


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped counts as gone: it runs nothing; but a killed process's main
    thread is a zombie before its other threads have ended, and it is not gone until they have)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                return True
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


def wait_until(condition, timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture
def child():
    sp = ScanProcess(enabled=True)
    yield sp
    sp.close()


def test_the_childs_findings_are_the_in_process_analysis(child):
    """Every example, a file of 60 findings and files under other settings: the child's findings (positions,
    messages, related information, noqa lines) equal the server's in-process analysis, and the child is another
    process."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.py"))]
    texts += [program(BAD, 60), program(GOOD, 30), "no bprop here\n", "def bprop(:\n"]
    assert len(texts) > 6
    for settings in (Settings(), Settings(mode="graph"), Settings(mode="pynative", ignore=("BP028",))):
        for text in texts:
            assert child.analyse(text, settings) == _analyse(text, settings).findings
    assert len(child.analyse(program(BAD, 60), Settings())) >= 60
    assert child.pid is not None and child.pid != os.getpid() and child.started == 1


def test_the_child_runs_outside_the_callers_folder_and_path(child, tmp_path, monkeypatch):
    """Started from a workspace folder holding modules named like the engine's own imports: the child's
    working directory is the package's folder, and it imports nothing from the workspace (``-I``: no current
    folder, no PYTHON* variables, no user site)."""
    for name in ("parso", "bprop_lsp", "json", "struct"):
        (tmp_path / f"{name}.py").write_text("raise SystemExit('workspace code ran')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("PYTHONSTARTUP", str(tmp_path / "parso.py"))
    assert child.analyse(program(BAD, 1), Settings()) == _analyse(program(BAD, 1), Settings()).findings
    cwd = os.readlink(f"/proc/{child.pid}/cwd")
    assert Path(cwd).resolve() == Path(scan_process.__file__).resolve().parent.parent
    nice = int(open(f"/proc/{child.pid}/stat").read().rsplit(")", 1)[1].split()[16])
    assert nice >= min(19, os.nice(0) + 1), "the child runs at a lower priority"


def test_a_child_killed_in_the_middle_of_a_file_is_reported_and_replaced(child):
    """The OOM killer (SIGKILL) while the child has a large file: that file raises ChildDied (and is not analysed
    in this process), the next file gets a new child."""
    big = program(GOOD, 3000)
    outcome: list = []

    def scan_big():
        try:
            outcome.append(child.analyse(big, Settings()))
        except ChildDied as exc:
            outcome.append(exc)

    t = threading.Thread(target=scan_big)
    t.start()
    wait_until(lambda: child.pid is not None, what="the child never started")
    first = child.pid
    time.sleep(0.5)  # the large file (seconds) is being analysed
    os.kill(first, signal.SIGKILL)
    t.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], ChildDied), outcome
    assert "SIGKILL" in str(outcome[0])
    small = program(BAD, 2)
    assert child.analyse(small, Settings()) == _analyse(small, Settings()).findings
    assert child.pid != first and child.started == 2


def test_a_child_gone_between_files_or_idle_is_replaced_without_blame():
    """A child that died while it had nothing (killed between two files) or left after its idle time: the next
    file is analysed by a new child, no error."""
    sp = ScanProcess(enabled=True, idle_exit_s=0.5)
    try:
        text = program(BAD, 1)
        expected = _analyse(text, Settings()).findings
        assert sp.analyse(text, Settings()) == expected
        first = sp.pid
        wait_until(lambda: not alive(first), 30, "the idle child did not leave")
        assert sp.analyse(text, Settings()) == expected
        second = sp.pid
        assert second != first
        os.kill(second, signal.SIGKILL)
        wait_until(lambda: not alive(second), 30)
        assert sp.analyse(text, Settings()) == expected
        assert sp.pid not in (first, second) and sp.started == 3
    finally:
        sp.close()


def test_close_ends_the_child_and_starts_no_other(child):
    child.analyse(program(BAD, 1), Settings())
    pid = child.pid
    child.close()
    wait_until(lambda: not alive(pid), 10, "close() left the child running")
    assert not child.usable()
    with pytest.raises(Unavailable):
        child.analyse(program(BAD, 1), Settings())


@pytest.mark.parametrize("executable", ["/nonexistent/python3", "/bin/false", "python3", ""])
def test_no_child_means_in_process_for_a_while(monkeypatch, executable):
    """An interpreter that cannot be started or exits before it is ready: Unavailable (the scheduler then
    analyses in process), and no child is tried again for RETRY_S."""
    monkeypatch.setattr(scan_process.sys, "executable", executable)
    sp = ScanProcess(enabled=True)
    try:
        with pytest.raises(Unavailable):
            sp.analyse(program(BAD, 1), Settings())
        assert not sp.usable()
    finally:
        sp.close()


def test_BPROP_LSP_SCAN_PROCESS_0_keeps_the_scan_in_process(monkeypatch):
    monkeypatch.setenv("BPROP_LSP_SCAN_PROCESS", "0")
    assert not ScanProcess().usable()
    monkeypatch.setenv("BPROP_LSP_SCAN_PROCESS", "1")
    assert ScanProcess().usable()


# ---------------------------------------------------------------------- through the server


def _log(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def _child_pid(log_file: Path, timeout: float = 120) -> int:
    import re

    wait_until(lambda: "started the workspace check's process" in _log(log_file), timeout, _log(log_file)[-3000:])
    return int(re.search(r"started the workspace check's process \(pid (\d+)\)", _log(log_file)).group(1))


def _server(tmp_path: Path, log_file: Path, env: dict | None = None) -> RawServer:
    server = RawServer([*SERVER_COMMAND, "--log-file", str(log_file)], env=env)
    server.initialize(PULL_CAPS, rootUri=tmp_path.as_uri(), workspaceFolders=[{"uri": tmp_path.as_uri(), "name": "ws"}])
    return server


def _report(server: RawServer) -> dict:
    """uri -> the diagnostics of the workspace report (``workspace/diagnostic``, no previous result ids)."""
    response = server.request("workspace/diagnostic", {"previousResultIds": []}, timeout=300)
    return {item["uri"]: item.get("items") for item in response["result"]["items"]}


def test_the_server_scans_in_a_child_with_the_findings_of_an_in_process_scan(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text(program(BAD, 3))
    (ws / "b.py").write_text((ROOT / "examples" / "muladd_missing_dout.py").read_text(encoding="utf-8"))
    (ws / "c.py").write_text(program(GOOD, 3))
    reports = {}
    for switch in ("1", "0"):
        log_file = tmp_path / f"server{switch}.log"
        server = _server(ws, log_file, {"BPROP_LSP_SCAN_PROCESS": switch})
        try:
            reports[switch] = _report(server)
            pid = server.proc.pid
        finally:
            server.close()
        if switch == "1":
            child = _child_pid(log_file)
            assert child != pid and f"a.py sent to process {child}" in _log(log_file)
        else:
            assert "started the workspace check's process" not in _log(log_file)
    assert reports["1"] == reports["0"]
    assert len(reports["1"][(ws / "a.py").as_uri()]) == 3 and reports["1"][(ws / "b.py").as_uri()]


def test_the_server_scans_in_process_when_no_child_can_start(tmp_path):
    """The scan's interpreter exits before it is ready (no_scan_child_server.py): every file is analysed in the
    server's process, with the same report, and the log says why."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text(program(BAD, 3))
    (ws / "c.py").write_text(program(GOOD, 3))
    log_file = tmp_path / "server.log"
    server = RawServer([sys.executable, str(Path(__file__).parent / "no_scan_child_server.py"),
                        "--log-file", str(log_file)])
    try:
        server.initialize(PULL_CAPS, rootUri=ws.as_uri(), workspaceFolders=[{"uri": ws.as_uri(), "name": "ws"}])
        report = _report(server)
        assert len(report[(ws / "a.py").as_uri()]) == 3 and (ws / "c.py").as_uri() not in report
        assert "exited with status 1 before it was ready" in _log(log_file)
        assert "in the server's process" in _log(log_file)
        assert _log(log_file).count("exited with status 1 before it was ready") == 1  # not tried for every file
    finally:
        server.close()


@pytest.mark.parametrize("how", ["exit", "killed"])
def test_the_scan_child_dies_with_the_server(tmp_path, how):
    """``shutdown`` + ``exit`` ends the child at once; so does the server's death by SIGKILL in the middle of a
    large file (the child reads the end of its request pipe on a thread of its own)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.py").write_text(program(GOOD, 3000))
    log_file = tmp_path / "server.log"
    server = _server(ws, log_file)
    try:
        server.request_async("workspace/diagnostic", {"previousResultIds": []})
        child = _child_pid(log_file)
        wait_until(lambda: "big.py sent to process" in _log(log_file), 60, _log(log_file)[-3000:])
        assert alive(child)
        if how == "exit":
            server.request("shutdown", None, timeout=30)
            server.notify("exit", None)
            server.proc.wait(30)
        else:
            server.proc.send_signal(signal.SIGKILL)
            server.proc.wait(30)
        wait_until(lambda: not alive(child), 30, f"the scan child {child} outlived the server ({how})")
    finally:
        server.close()
        try:
            os.kill(child, signal.SIGKILL)
        except (OSError, UnboundLocalError):
            pass


def test_a_scan_child_crash_is_logged_and_the_server_goes_on(tmp_path):
    """The child is killed while it checks the first file: the scan answers, with the other files' findings; the
    crash is logged (window/logMessage, error) naming the file; the next scan does not send that file again
    until it changes, and keystrokes are still analysed."""
    ws = tmp_path / "ws"
    ws.mkdir()
    big, small = ws / "a_big.py", ws / "b_small.py"
    big.write_text(program(GOOD, 3000) + BAD.format(i="X"))
    small.write_text(program(BAD, 2))
    log_file = tmp_path / "server.log"
    server = _server(ws, log_file)
    try:
        scan = server.request_async("workspace/diagnostic", {"previousResultIds": []})
        child = _child_pid(log_file)
        wait_until(lambda: "a_big.py sent to process" in _log(log_file), 60, _log(log_file)[-3000:])
        time.sleep(0.3)
        os.kill(child, signal.SIGKILL)
        items = {i["uri"]: i.get("items") for i in server.response(scan, timeout=300)["result"]["items"]}
        assert big.as_uri() not in items and len(items[small.as_uri()]) == 2, items
        errors = [m["params"]["message"] for m in server.notifications
                  if m["method"] == "window/logMessage" and m["params"]["type"] == 1]
        assert any(str(big) in e and "SIGKILL" in e for e in errors), errors
        # Again: the crashed file is skipped (it has not changed), the other file is analysed by a new child.
        sent_before = _log(log_file).count("a_big.py sent to process")
        again = _report(server)
        assert big.as_uri() not in again and len(again[small.as_uri()]) == 2
        assert _log(log_file).count("a_big.py sent to process") == sent_before
        # The file changes: checked again, by a child.
        time.sleep(0.01)
        big.write_text(program(BAD, 1))
        os.utime(big, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        assert len(_report(server)[big.as_uri()]) == 1
        # And the server still analyses documents.
        doc = (ws / "open.py").as_uri()
        server.open(doc, program(BAD, 1))
        server.request("textDocument/diagnostic", {"textDocument": {"uri": doc}}, timeout=60)
        assert server.proc.poll() is None
    finally:
        server.close()
