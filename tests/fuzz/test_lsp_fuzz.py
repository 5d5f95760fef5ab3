"""LSP-level fuzzing through the real server process (issue 6), bounded and seeded.

A raw JSON-RPC client over stdio (independent of pygls and pytest-lsp) drives ``python -m bprop_lsp serve``
with random interleavings of didOpen / didChange (incremental, several changes per notification, full
text) / didClose / codeAction / hover / pull diagnostics / didChangeConfiguration, plus garbage: changes
with out-of-range or reversed ranges, unknown URIs, invalid JSON, params of the wrong type, unknown
methods, binary-looking and huge documents. The client mirrors every tracked document by applying the
same changes in the negotiated position encoding, and checks:

* every request gets an answer (a result or a JSON-RPC error) and the process never exits;
* every diagnostic range (and related range, and the fix/noqa edits in ``data``) lies inside the mirrored
  document on a character boundary of the negotiated encoding;
* the pulled diagnostics equal the engine's findings (code and range) on the mirrored text, whenever the
  settings the server uses are known (after a well-formed configuration);
* code-action edits lie inside the document;
* the server's memory stays flat over open/close cycles;
* broken framing (a ``Content-Length`` too small, too large, huge or no number; garbage between messages;
  lower-case and extra headers, bare ``\n`` line ends, messages split into small writes) never desynchronises the
  stream for good: a well-formed request sent after each breakage is answered, well-formed variants are answered
  with results, and the server still analyses correctly at the end; the reader alone (lsp/framing.py) delivers
  every intact message of a randomly broken and randomly chunked stream exactly once.

``BPROP_FUZZ_LSP_OPS`` / ``BPROP_FUZZ_LSP_CYCLES`` / ``BPROP_FUZZ_LSP_FRAMES`` raise the budget (e.g. 5000 ops,
10000 cycles, 2000 breakages; ``scripts/fuzz_long.py --lsp-frames`` runs the framing part with random seeds).
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

import pytest

import fuzzlib as F
from bprop_lsp.checker import RULE_NAMES, analyze
from bprop_lsp.engine import Settings
from bprop_lsp.engine.settings import merge

OPS = int(os.environ.get("BPROP_FUZZ_LSP_OPS") or 120)
CYCLES = int(os.environ.get("BPROP_FUZZ_LSP_CYCLES") or 300)
HUGE_MB = float(os.environ.get("BPROP_FUZZ_LSP_HUGE_MB") or 5)
FRAMES = int(os.environ.get("BPROP_FUZZ_LSP_FRAMES") or 40)
TIMEOUT = 60.0
ENC = {"utf-8": "utf-8", "utf-16": "utf-16", "utf-32": "utf-32"}


class Server:
    """The server process and a minimal JSON-RPC client: answers the server's own requests with nulls."""

    def __init__(self):
        env = {**os.environ, "BPROP_LSP_DEBOUNCE_MS": "5"}
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "bprop_lsp", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.lock = threading.Lock()
        self.cond = threading.Condition()
        self.responses: dict = {}
        self.notifications: list = []
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self.cond:
                        self.cond.notify_all()
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            msg = json.loads(out.read(length))
            if "method" in msg and "id" in msg:
                result = None
                if msg["method"] == "workspace/configuration":
                    result = [None] * len(msg.get("params", {}).get("items", []))
                self.write({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif "id" in msg:
                with self.cond:
                    self.responses[msg["id"]] = msg
                    self.cond.notify_all()
            else:
                with self.cond:
                    self.notifications.append(msg)
                    del self.notifications[:-200]

    def write(self, payload) -> None:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        with self.lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def write_raw(self, data: bytes) -> None:
        with self.lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def notify(self, method: str, params) -> None:
        self.write({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params, *, raw: bytes | None = None) -> dict:
        self.next_id += 1
        msg_id = f"fz-{self.next_id}"
        if raw is not None:
            self.write(raw.replace(b"$ID", msg_id.encode()))
        else:
            self.write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        deadline = time.time() + TIMEOUT
        with self.cond:
            while msg_id not in self.responses:
                assert self.proc.poll() is None, f"server exited ({self.proc.returncode}) during {method}: {self.log()}"
                left = deadline - time.time()
                assert left > 0, f"no answer to {method} within {TIMEOUT} s"
                self.cond.wait(min(left, 1.0))
            msg = self.responses.pop(msg_id)
        assert ("result" in msg) != ("error" in msg), f"{method}: neither result nor error: {msg}"
        return msg

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")[-3000:]

    def rss_kb(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.request("shutdown", None)
                self.notify("exit", None)
                self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.stderr.close()


def start(encoding: str) -> Server:
    server = Server()
    caps = {
        "general": {"positionEncodings": [encoding]},
        "textDocument": {
            "diagnostic": {"dynamicRegistration": False},
            "publishDiagnostics": {"relatedInformation": True},
            "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source"]}}},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
        },
        "workspace": {"workspaceEdit": {"documentChanges": False}},
    }
    init = server.request("initialize", {"processId": None, "rootUri": None, "capabilities": caps})
    assert "result" in init, init
    assert init["result"]["capabilities"].get("positionEncoding", "utf-16") == encoding
    server.notify("initialized", {})
    return server


# -------------------------------------------------------------------------------- client-side mirror
def to_client(text: str, offset: int, encoding: str) -> dict:
    starts = F.line_starts(text)
    line = max(i for i, s in enumerate(starts) if s <= offset)
    return {"line": line, "character": F.cp_to_units(F.lines_of(text)[line], offset - starts[line], encoding)}


def from_client(text: str, pos: dict, encoding: str) -> int:
    """Strict: the position must be inside the document and on a character boundary."""
    lines, starts = F.lines_of(text), F.line_starts(text)
    assert 0 <= pos["line"] < len(lines), f"line {pos['line']} outside the document ({len(lines)} lines)"
    return starts[pos["line"]] + F.units_to_cp(lines[pos["line"]], pos["character"], encoding)


def check_range(text: str, rng: dict, encoding: str, what: str) -> tuple[int, int]:
    try:
        s, e = from_client(text, rng["start"], encoding), from_client(text, rng["end"], encoding)
    except AssertionError as exc:
        raise AssertionError(f"{what}: {rng} is not a position of the document: {exc}") from None
    assert s <= e, f"{what}: range {rng} ends before it starts"
    return s, e


def change_for(old: str, new: str, encoding: str) -> dict:
    """One incremental change turning ``old`` into ``new`` (never splitting a \\r\\n)."""
    p = 0
    limit = min(len(old), len(new))
    while p < limit and old[p] == new[p]:
        p += 1
    s = 0
    while s < limit - p and old[len(old) - 1 - s] == new[len(new) - 1 - s]:
        s += 1
    if p and old[p - 1] == "\r" and old[p:p + 1] == "\n":
        p -= 1
    end = len(old) - s
    if end and old[end - 1:end] == "\r" and old[end:end + 1] == "\n":
        s -= 1
        end += 1
    return {"range": {"start": to_client(old, p, encoding), "end": to_client(old, end, encoding)},
            "text": new[p:len(new) - s]}


def expected(text: str, settings: Settings, encoding: str) -> list:
    out = []
    for f in analyze(text, settings).findings:
        rng = {"start": to_client(text, _off(text, f.span.start), encoding),
               "end": to_client(text, _off(text, f.span.end), encoding)}
        out.append((f.code, json.dumps(rng, sort_keys=True)))
    return sorted(out)


def _off(text: str, pos) -> int:
    return F.line_starts(text)[pos.line] + pos.column


def check_diagnostics(text: str, items: list, encoding: str) -> None:
    for d in items:
        check_range(text, d["range"], encoding, f"diagnostic {d.get('code')}")
        for rel in d.get("relatedInformation") or []:
            check_range(text, rel["location"]["range"], encoding, f"related of {d.get('code')}")
        data = d.get("data") or {}
        edits = ((data.get("fix") or {}).get("edits") or []) + ([data["noqa"]] if data.get("noqa") else [])
        for sl, sc, el, ec, _new in edits:
            check_range(text, {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
                        encoding, f"fix/noqa edit of {d.get('code')}")


SETTINGS_CHOICES = [
    ({"mode": "graph"}, True), ({"mode": "pynative"}, True), ({"mode": "auto"}, True), ({}, True),
    ({"select": ["BP0"], "ignore": ["BP020", "BP044"]}, True), ({"ignore": ["BP001"]}, True),
    ({"mode": 5}, False), ({"select": "BP001, BP002"}, False), ({"unknownKey": True}, False),
    ([1, 2, 3], False), ("not an object", False), (None, False), ({"mode": None, "select": [None]}, False),
]


def run_session(seed: int, encoding: str, ops: int) -> dict:
    rnd = random.Random(seed)
    pick = F.RandomPicker(rnd)
    cases = F.oracle_cases()
    server = start(encoding)
    stats = {"ops": 0, "requests": 0, "compared": 0}
    docs: dict[str, list] = {}  # uri -> [text, version]
    uris = [f"file:///tmp/bprop-fuzz-lsp-{seed}/doc{i}.py" for i in range(3)]
    junk = f"file:///tmp/bprop-fuzz-lsp-{seed}/junk.py"
    settings: Settings | None = Settings()
    try:
        server.notify("textDocument/didOpen", {"textDocument": {"uri": junk, "languageId": "python", "version": 1,
                                                                "text": cases[0][1]}})

        def pull(uri: str) -> None:
            text = docs[uri][0]
            msg = server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            stats["requests"] += 1
            assert "result" in msg, msg
            items = msg["result"].get("items", [])
            check_diagnostics(text, items, encoding)
            if settings is not None:
                got = sorted((d.get("code"), json.dumps(d["range"], sort_keys=True)) for d in items)
                assert got == expected(text, settings, encoding), (
                    f"server diagnostics differ from the engine on the mirrored text ({encoding}):\n"
                    f" server {got}\n engine {expected(text, settings, encoding)}\n text {text!r}")
                stats["compared"] += 1

        for _ in range(ops):
            stats["ops"] += 1
            op = pick.choice(("open", "change", "change", "change", "change", "multi", "full", "close", "action",
                              "hover", "pull", "pull", "config", "garbage", "badchange", "unknown"))
            uri = pick.choice(uris)
            if op == "open" or (uri not in docs and op in ("change", "multi", "full", "action", "hover", "pull")):
                text = F.gen_program(pick) if pick.bool() else pick.choice(cases)[1]
                docs[uri] = [text, 1]
                server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                        "version": 1, "text": text}})
                continue
            if op in ("change", "multi", "full"):
                text, version = docs[uri]
                changes = []
                for _ in range(pick.int(2, 4) if op == "multi" else 1):
                    new = F.apply_edit(text, F.gen_edit(pick))
                    changes.append({"text": new} if op == "full" else change_for(text, new, encoding))
                    text = new
                docs[uri] = [text, version + 1]
                server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version + 1},
                                                         "contentChanges": changes})
            elif op == "close":
                server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
                docs.pop(uri, None)
            elif op == "action":
                text = docs[uri][0]
                a, b = sorted((pick.int(0, len(text)), pick.int(0, len(text))))
                rng = {"start": to_client(text, a, encoding), "end": to_client(text, b, encoding)}
                msg = server.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": rng,
                                                                 "context": {"diagnostics": []}})
                stats["requests"] += 1
                for action in (msg.get("result") or []):
                    for edits in ((action.get("edit") or {}).get("changes") or {}).values():
                        for e in edits:
                            check_range(text, e["range"], encoding, f"code action {action.get('title')!r}")
            elif op == "hover":
                text = docs[uri][0]
                server.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                      "position": to_client(text, pick.int(0, len(text)), encoding)})
                stats["requests"] += 1
            elif op == "pull":
                pull(uri)
            elif op == "config":
                value, valid = pick.choice(SETTINGS_CHOICES)
                server.notify("workspace/didChangeConfiguration", {"settings": {"bprop-lsp": value}})
                settings = merge(Settings(), value, "fuzz", rules=RULE_NAMES).settings if valid else None
            elif op == "garbage":
                kind = pick.int(0, 4)
                if kind == 0:
                    server.write(b"{not json at all")
                elif kind == 1:
                    msg = server.request("textDocument/hover", None, raw=json.dumps(
                        {"jsonrpc": "2.0", "id": "$ID", "method": "textDocument/hover",
                         "params": {"textDocument": 42, "position": "x"}}).encode())
                    assert "error" in msg, msg
                elif kind == 2:
                    msg = server.request("bprop/noSuchMethod", {"x": 1})
                    assert "error" in msg, msg
                elif kind == 3:
                    server.notify("textDocument/didChange", {"textDocument": None, "contentChanges": 7})
                else:
                    blob = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 3000))).decode("latin-1")
                    server.notify("textDocument/didChange", {"textDocument": {"uri": junk, "version": 99},
                                                             "contentChanges": [{"text": blob + " bprop"}]})
                stats["requests"] += kind in (1, 2)
            elif op == "badchange":
                big = pick.choice((10 ** 6, 2 ** 31 - 1, 5))
                server.notify("textDocument/didChange", {"textDocument": {"uri": junk, "version": 100},
                                                         "contentChanges": [
                    {"range": {"start": {"line": big, "character": big}, "end": {"line": 0, "character": big}},
                     "text": pick.choice(("x", "😀\r\n", "def bprop(:"))}]})
                server.request("textDocument/diagnostic", {"textDocument": {"uri": junk}})
                stats["requests"] += 1
            elif op == "unknown":
                nowhere = f"file:///nowhere/{pick.int(0, 9)}.py"
                server.notify("textDocument/didChange", {"textDocument": {"uri": nowhere, "version": 3},
                                                         "contentChanges": [{"text": "x"}]})
                server.request("textDocument/hover", {"textDocument": {"uri": nowhere},
                                                      "position": {"line": 99, "character": 99}})
                server.request("textDocument/codeAction", {"textDocument": {"uri": nowhere}, "range": {
                    "start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}},
                    "context": {"diagnostics": []}})
                stats["requests"] += 2
        # The end state: known settings, every tracked document compared with the engine.
        server.notify("workspace/didChangeConfiguration", {"settings": {"bprop-lsp": {}}})
        settings = Settings()
        for uri in list(docs):
            pull(uri)
        assert server.proc.poll() is None
        return stats
    except AssertionError as exc:
        raise AssertionError(f"seed {seed}, {encoding}: {exc}\n--- server log ---\n{server.log()}") from None
    finally:
        server.close()


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_random_lsp_traffic(encoding):
    seed = {"utf-16": 1, "utf-8": 2, "utf-32": 3}[encoding] + int(os.environ.get("BPROP_FUZZ_LSP_SEED") or 0)
    stats = run_session(seed, encoding, OPS)
    assert stats["compared"] > 0 and stats["requests"] > 0


def test_huge_and_binary_documents_keep_the_server_answering():
    server = start("utf-16")
    try:
        size = int(HUGE_MB * 1024 * 1024)
        line = "x = 1  # 中文 😀\n"
        huge = line * (size // len(line.encode()))
        server.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///tmp/huge.py", "languageId": "python",
                                                                "version": 1, "text": huge}})
        blob = bytes(range(256)).decode("latin-1") * 64 + "\ndef bprop(self, x, out):\n\x00\x00"
        server.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///tmp/blob.py", "languageId": "python",
                                                                "version": 1, "text": blob}})
        for uri in ("file:///tmp/huge.py", "file:///tmp/blob.py"):
            msg = server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            assert "result" in msg, msg
            server.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 2}})
        # Another document is still served normally.
        seed = "from mindspore import nn\nclass M(nn.Cell):\n    def construct(self, x):\n        return x\n" \
               "    def bprop(self, x, out):\n        return (out,)\n"
        server.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///tmp/ok.py", "languageId": "python",
                                                                "version": 1, "text": seed}})
        msg = server.request("textDocument/diagnostic", {"textDocument": {"uri": "file:///tmp/ok.py"}})
        assert [d["code"] for d in msg["result"]["items"]] == ["BP001"]
    finally:
        server.close()


def test_memory_stays_flat_over_open_close_cycles():
    server = start("utf-16")
    cases = [t for _, t in F.oracle_cases()]
    try:
        def cycles(n: int, offset: int) -> None:
            for i in range(n):
                uri = f"file:///tmp/bprop-fuzz-cycle/{offset + i}.py"
                server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                        "version": 1, "text": cases[i % len(cases)]}})
                if i % 10 == 0:
                    server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
                server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            # The server collects closed documents' trees shortly after a burst of closes (did_close.py).
            time.sleep(2.5)
            server.request("textDocument/hover", {"textDocument": {"uri": "file:///none.py"},
                                                  "position": {"line": 0, "character": 0}})

        warm = max(100, CYCLES // 10)
        cycles(warm, 0)
        before = server.rss_kb()
        cycles(CYCLES, warm)
        after = server.rss_kb()
        assert after - before < 30 * 1024, f"server RSS grew {before} -> {after} kB over {CYCLES} open/close cycles"
    finally:
        server.close()


# -------------------------------------------------------------------------------- broken framing
HOVER_NOWHERE = {"textDocument": {"uri": "file:///nowhere.py"}, "position": {"line": 0, "character": 0}}
BREAKAGES = ("short", "long", "huge", "invalid", "garbage", "garbage", "lowercase", "content-type", "lf", "split")
VALID_VARIANTS = ("lowercase", "content-type", "lf", "split")


def _garbage(pick: "F.RandomPicker") -> bytes:
    parts = [b"\r\n", b"\r\n\r\n", b"Content-Length: ", b"Content-Length: 5", b"Content-Length: 12\r\n",
             b"Content-Length: 30\r\n\r\n", b"{", b"}", b'"id": 1', b"\x00\xff", b"12345", b"content-length:x"]
    out = b""
    for _ in range(pick.int(1, 6)):
        out += pick.choice(parts) if pick.bool() else bytes(pick.int(0, 255) for _ in range(pick.int(1, 12)))
    return out


def broken_frame(pick: "F.RandomPicker", kind: str, body: bytes) -> list[bytes]:
    """One breakage of the message ``body``, as the writes to make."""
    n = len(body)
    if kind == "short":
        return [b"Content-Length: %d\r\n\r\n" % pick.int(1, n - 1) + body]
    if kind == "long":
        return [b"Content-Length: %d\r\n\r\n" % (n + pick.int(1, 200)) + body]
    if kind == "huge":
        return [b"Content-Length: %d\r\n\r\n" % 10 ** pick.int(8, 15) + body]
    if kind == "invalid":
        return [b"Content-Length: " + pick.choice((b"-5", b"abc", b"", b"1e3", b"0x10")) + b"\r\n\r\n" + body]
    if kind == "garbage":
        return [_garbage(pick)]
    if kind == "lowercase":
        return [b"content-length: %d\r\n\r\n" % n + body]
    if kind == "content-type":
        ctype = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        head = ctype + b"Content-Length: %d\r\n" % n if pick.bool() else b"Content-Length: %d\r\n" % n + ctype
        return [head + b"\r\n" + body]
    if kind == "lf":
        return [b"Content-Length: %d\n\n" % n + body]
    data = b"Content-Length: %d\r\n\r\n" % n + body
    cuts = sorted({pick.int(1, len(data) - 1) for _ in range(pick.int(1, 8))})
    return [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]


def run_framing_session(seed: int, frames: int) -> dict:
    rnd = random.Random(seed)
    pick = F.RandomPicker(rnd)
    server = start("utf-16")
    stats = {"breakages": 0, "answered_broken": 0}
    try:
        for i in range(frames):
            kind = pick.choice(BREAKAGES)
            msg_id = f"brk-{i}"
            body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover",
                               "params": HOVER_NOWHERE}).encode()
            for part in broken_frame(pick, kind, body):
                server.write_raw(part)
                if kind == "split":
                    time.sleep(pick.int(0, 10) / 1000)
            stats["breakages"] += 1
            probe = server.request("textDocument/hover", HOVER_NOWHERE)
            assert "result" in probe, f"probe after a {kind!r} breakage: {probe}"
            if kind in VALID_VARIANTS:
                answer = _wait_response(server, msg_id)
                assert answer.get("result", "missing") is None, f"{kind!r} message: {answer}"
            with server.cond:
                stats["answered_broken"] += server.responses.pop(msg_id, None) is not None
        # Still in step: a document is analysed as the engine says.
        seed_text = F.oracle_cases()[0][1]
        server.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///tmp/frames.py", "languageId": "python",
                                                                "version": 1, "text": seed_text}})
        msg = server.request("textDocument/diagnostic", {"textDocument": {"uri": "file:///tmp/frames.py"}})
        got = sorted((d.get("code"), json.dumps(d["range"], sort_keys=True)) for d in msg["result"]["items"])
        assert got == expected(seed_text, Settings(), "utf-16")
        assert server.proc.poll() is None
        return stats
    except AssertionError as exc:
        raise AssertionError(f"framing seed {seed}: {exc}\n--- server log ---\n{server.log()}") from None
    finally:
        server.close()


def _wait_response(server: Server, msg_id: str) -> dict:
    deadline = time.time() + TIMEOUT
    with server.cond:
        while msg_id not in server.responses:
            assert server.proc.poll() is None and time.time() < deadline, f"no answer to {msg_id}"
            server.cond.wait(0.2)
        return server.responses.pop(msg_id)


def test_broken_framing_over_stdio():
    seed = 11 + int(os.environ.get("BPROP_FUZZ_LSP_SEED") or 0)
    stats = run_framing_session(seed, FRAMES)
    assert stats["breakages"] == FRAMES


def reader_fuzz(seed: int, streams: int) -> int:
    """The reader alone: random intact and broken frames, random chunking; every intact frame is delivered once."""
    import asyncio

    from bprop_lsp.lsp.framing import MessageReader

    rnd = random.Random(seed)
    pick = F.RandomPicker(rnd)
    checked = 0
    for s in range(streams):
        data, intact = b"", []
        for i in range(pick.int(1, 12)):
            body = json.dumps({"n": i, "s": s, "pad": "x" * pick.int(0, 300)}).encode()
            kind = pick.choice(BREAKAGES + ("intact",) * 4)
            if kind in ("intact", "lowercase", "content-type", "lf", "split"):
                data += b"".join(broken_frame(pick, kind if kind != "intact" else "split", body))
                intact.append(i)
            elif kind == "garbage":
                data += _garbage(pick)
            else:
                data += b"".join(broken_frame(pick, kind, body))
        size = pick.int(1, 200)
        chunks = [data[k:k + size] for k in range(0, len(data), size)]
        delivered: list = []

        async def read():
            await asyncio.sleep(0)
            return chunks.pop(0) if chunks else b""

        def on_body(raw: bytes) -> bool:
            try:
                message = json.loads(raw)
            except ValueError:
                return False
            if isinstance(message, dict) and message.get("s") == s:
                delivered.append(message["n"])
            return True

        asyncio.run(MessageReader(read, on_body, lambda err: None, max_bytes=1 << 20, quiet_seconds=0.01).run())
        missing = [i for i in intact if delivered.count(i) != 1]
        assert not missing, f"reader seed {seed}, stream {s}: intact frames {missing} not delivered exactly once " \
                            f"(delivered {delivered}); stream {data!r}"
        checked += len(intact)
    return checked


def test_framing_reader_with_random_breakage():
    assert reader_fuzz(5 + int(os.environ.get("BPROP_FUZZ_LSP_SEED") or 0), FRAMES * 5) > 0
