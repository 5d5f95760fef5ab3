"""Hostile clients and documents over the server's real stdio: a second didOpen of an open URI, a version number
reused for new text, an analysis that raises, a document over the size limit, a workspace with a FIFO, a link to
/dev/zero and a huge file."""
import os
import sys
import time
from pathlib import Path

import pytest

from lsp_helpers import SEED, SEED_DEF_LINE, apply_text_edits
from lsprotocol import types
from raw_client import RawServer

URI = "file:///tmp/bprop-lsp-hostile/seed.py"
HERE = Path(__file__).resolve().parent
PULL_CAPS = {
    "textDocument": {"diagnostic": {"dynamicRegistration": False},
                     "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}},
    "window": {"showMessage": {}},
}


@pytest.fixture
def server():
    s = RawServer()
    yield s
    s.close()


def codes_and_lines(items: list) -> list:
    return [(d["code"], d["range"]["start"]["line"]) for d in items]


def test_second_did_open_wakes_waiting_requests(server):
    server.initialize(PULL_CAPS)
    # A long analysis keeps the first pull waiting while the document is opened again.
    slow = SEED + "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(3000))
    server.open(URI, slow)
    waiting = server.request_async("textDocument/diagnostic", {"textDocument": {"uri": URI}})
    server.open(URI, "\n\n" + SEED, version=1)
    answer = server.response(waiting)
    # The waiting request is answered, for the text now open.
    assert codes_and_lines(answer["result"]["items"]) == [("BP001", SEED_DEF_LINE + 2)], answer
    assert codes_and_lines(server.pull(URI)["result"]["items"]) == [("BP001", SEED_DEF_LINE + 2)]


def _fix_edits(server: RawServer, diagnostic: dict) -> list[types.TextEdit]:
    actions = server.request("textDocument/codeAction", {
        "textDocument": {"uri": URI}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}})["result"]
    fix = next(a for a in actions if a.get("isPreferred"))
    return [types.TextEdit(range=types.Range(start=types.Position(**e["range"]["start"]),
                                             end=types.Position(**e["range"]["end"])), new_text=e["newText"])
            for e in fix["edit"]["changes"][URI]]


def test_same_version_with_new_text_is_a_new_version(server):
    server.initialize(PULL_CAPS)
    server.open(URI, SEED, version=1)
    (first,) = server.pull(URI)["result"]["items"]
    assert first["range"]["start"]["line"] == SEED_DEF_LINE
    _fix_edits(server, first)  # the fixes of the first text are checked and cached
    # A client bug: new text (two lines inserted above the class) under the same version number.
    moved = "import os\nimport sys\n" + SEED
    server.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 1},
                                             "contentChanges": [{"text": moved}]})
    (diag,) = server.pull(URI)["result"]["items"]
    assert diag["range"]["start"]["line"] == SEED_DEF_LINE + 2, diag
    # A diagnostic of the old text (same version number) gets no fix: its edits are for other text.
    stale = server.request("textDocument/codeAction", {
        "textDocument": {"uri": URI}, "range": first["range"], "context": {"diagnostics": [first]}})["result"]
    assert not stale, stale
    fixed = apply_text_edits(moved, _fix_edits(server, diag), "utf-16")
    assert fixed == moved.replace("def bprop(self, x, y, out):", "def bprop(self, x, y, out, dout):"), fixed


def test_failing_analysis_is_not_retried_in_a_loop(tmp_path):
    count = tmp_path / "analyses"
    s = RawServer([sys.executable, str(HERE / "failing_server.py")], env={"BPROP_TEST_ANALYSES": str(count)})
    try:
        s.initialize(PULL_CAPS)
        s.open(URI, SEED + "# RAISE_IN_ANALYSIS\n")
        assert s.pull(URI)["result"]["items"] == []
        assert s.pull(URI)["result"]["items"] == []
        assert count.read_text().count("\n") == 1, count.read_text()
        failures = [m for m in s.messages() if "failed" in m]
        assert len(failures) == 1 and "RuntimeError: planted" in failures[0], s.messages()
        # A new version is analysed again (and this one succeeds).
        s.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": SEED}]})
        assert codes_and_lines(s.pull(URI)["result"]["items"]) == [("BP001", SEED_DEF_LINE)]
        assert count.read_text().count("\n") == 2
    finally:
        s.close()


def test_document_over_the_size_limit_is_not_analysed_and_memory_is_returned(server):
    from bprop_lsp.sources import MAX_BYTES

    server.initialize(PULL_CAPS)
    server.open(URI, SEED)
    server.pull(URI)
    time.sleep(0.5)
    before = server.rss_kb()
    big_uri = "file:///tmp/bprop-lsp-hostile/generated_big.py"
    unit = SEED.replace("MulAdd", "MulAdd{}") + "\n"
    count = MAX_BYTES // len(unit) + 1000
    big = "".join(unit.format(i) for i in range(count))
    assert len(big.encode()) > MAX_BYTES
    t0 = time.monotonic()
    server.open(big_uri, big)
    assert server.pull(big_uri, timeout=30)["result"]["items"] == []
    # Another document is not kept waiting.
    other = "file:///tmp/bprop-lsp-hostile/other.py"
    server.open(other, SEED)
    assert codes_and_lines(server.pull(other)["result"]["items"]) == [("BP001", SEED_DEF_LINE)]
    assert time.monotonic() - t0 < 15
    warning = server.wait_notification(lambda m: m["method"] == "window/showMessage")
    text = warning["params"]["message"]
    assert "generated_big.py" in text and "10 MiB" in text and warning["params"]["type"] == 2, text
    server.notify("textDocument/didClose", {"textDocument": {"uri": big_uri}})
    time.sleep(2.5)  # the server collects and trims the heap shortly after closes
    server.request("textDocument/hover", {"textDocument": {"uri": other}, "position": {"line": 0, "character": 0}})
    after = server.rss_kb()
    assert after - before < 60 * 1024, f"RSS {before} -> {after} kB after closing a {len(big) / 1e6:.0f} MB document"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_workspace_scan_skips_fifos_devices_and_huge_files(tmp_path):
    from bprop_lsp.sources import MAX_BYTES

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "seed.py").write_text(SEED)
    os.mkfifo(tmp_path / "pkg" / "fifo.py")
    os.symlink("/dev/zero", tmp_path / "pkg" / "zero.py")
    with open(tmp_path / "pkg" / "huge.py", "wb") as fh:
        fh.truncate(MAX_BYTES + 1)  # sparse: no disk used
    s = RawServer()
    try:
        s.initialize(PULL_CAPS, workspaceFolders=[{"uri": tmp_path.as_uri(), "name": "ws"}])
        report = s.request("workspace/diagnostic", {"previousResultIds": []}, timeout=30)
        items = {Path(i["uri"][len("file://"):]).name: i for i in report["result"]["items"]}
        assert list(items) == ["seed.py"], items
        assert codes_and_lines(items["seed.py"]["items"]) == [("BP001", SEED_DEF_LINE)]
        (log,) = [m for m in s.messages() if "skipped" in m]
        assert "fifo.py: not a regular file" in log and "zero.py: not a regular file" in log, log
        assert "huge.py" in log and "limit" in log, log
        assert s.request("textDocument/hover", {"textDocument": {"uri": "file:///x.py"},
                                                "position": {"line": 0, "character": 0}})["result"] is None
    finally:
        s.close()


@pytest.mark.parametrize("gitignore", ["x[a-D].py\n", "[z-a]\nunclosed[\n"])
def test_workspace_scan_survives_a_gitignore_line_that_git_reads_oddly(tmp_path, gitignore):
    """Regression: one reversed range in a .gitignore made every workspace/diagnostic fail with -32603."""
    home = tmp_path / "home"
    home.mkdir()
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".gitignore").write_text(gitignore + "ignored.py\n")
    (ws / "seed.py").write_text(SEED)
    (ws / "ignored.py").write_text(SEED)
    s = RawServer(env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1"})
    try:
        s.initialize(PULL_CAPS, workspaceFolders=[{"uri": ws.as_uri(), "name": "ws"}])
        for _ in range(2):
            report = s.request("workspace/diagnostic", {"previousResultIds": []}, timeout=30)
            assert "error" not in report, report
            items = {Path(i["uri"][len("file://"):]).name: i for i in report["result"]["items"]}
            assert list(items) == ["seed.py"], items
            assert codes_and_lines(items["seed.py"]["items"]) == [("BP001", SEED_DEF_LINE)]
        assert any(".gitignore:1: pattern" in m for m in s.messages()), s.messages()
    finally:
        s.close()
