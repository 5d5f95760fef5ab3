"""A raw JSON-RPC client over the server's real stdio, independent of pygls: it writes bytes as given (for
framing tests: wrong or huge Content-Length, garbage between messages) and reads the server's messages."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
import time

from lsp_helpers import SERVER_COMMAND

TIMEOUT = 20.0


class RawServer:
    def __init__(self, command: list[str] | None = None, env: dict | None = None, cwd: str | None = None):
        env = {**os.environ, "BPROP_LSP_DEBOUNCE_MS": "5", **(env or {})}
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(command or SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env, cwd=cwd)
        self.cond = threading.Condition()
        self.lock = threading.Lock()
        self.responses: dict = {}
        self.notifications: list[dict] = []
        self.server_requests: list[dict] = []
        self.arrivals: list[dict] = []  # every message from the server, in the order it came
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    # ------------------------------------------------------------------ reading
    def _read(self) -> None:
        out = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                msg = json.loads(out.read(length))
                with self.cond:
                    self.arrivals.append(msg)
                if "method" in msg and "id" in msg:
                    result = None
                    if msg["method"] == "workspace/configuration":
                        result = [None] * len(msg.get("params", {}).get("items", []))
                    with self.cond:
                        self.server_requests.append(msg)
                    self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
                elif "method" not in msg:
                    with self.cond:
                        self.responses[msg.get("id")] = msg
                        self.cond.notify_all()
                else:
                    with self.cond:
                        self.notifications.append(msg)
                        self.cond.notify_all()
        finally:
            with self.cond:
                self.cond.notify_all()

    # ------------------------------------------------------------------ writing
    def write(self, data: bytes) -> None:
        with self.lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, payload: dict) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params=None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def new_id(self) -> str:
        self.next_id += 1
        return f"raw-{self.next_id}"

    def request_async(self, method: str, params=None) -> str:
        msg_id = self.new_id()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id

    def response(self, msg_id, timeout: float = TIMEOUT) -> dict:
        deadline = time.time() + timeout
        with self.cond:
            while msg_id not in self.responses:
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError(f"no answer to {msg_id} within {timeout} s\n{self.log()}")
                if self.proc.poll() is not None and msg_id not in self.responses:
                    raise AssertionError(f"server exited ({self.proc.returncode}) before answering {msg_id}\n{self.log()}")
                self.cond.wait(min(left, 0.2))
            return self.responses.pop(msg_id)

    def request(self, method: str, params=None, timeout: float = TIMEOUT) -> dict:
        return self.response(self.request_async(method, params), timeout)

    def wait_notification(self, predicate, timeout: float = TIMEOUT) -> dict:
        deadline = time.time() + timeout
        with self.cond:
            while True:
                for msg in self.notifications:
                    if predicate(msg):
                        return msg
                left = deadline - time.time()
                if left <= 0:
                    last = [(m["method"], str(m.get("params"))[:200]) for m in self.notifications[-5:]]
                    raise AssertionError(f"no such notification within {timeout} s; the last: {last}\n{self.log()}")
                self.cond.wait(min(left, 0.2))

    def messages(self, kind: str = "window/logMessage") -> list[str]:
        with self.cond:
            return [m["params"]["message"] for m in self.notifications if m["method"] == kind]

    # ------------------------------------------------------------------ session
    def initialize(self, capabilities: dict | None = None, **params) -> dict:
        caps = capabilities if capabilities is not None else {
            "textDocument": {"diagnostic": {"dynamicRegistration": False},
                             "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}},
        }
        answer = self.request("initialize", {"processId": None, "rootUri": None, "capabilities": caps, **params})
        assert "result" in answer, answer
        self.notify("initialized", {})
        return answer

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version,
                                                              "text": text}})

    def pull(self, uri: str, timeout: float = TIMEOUT) -> dict:
        return self.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout)

    def rss_kb(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")[-4000:]

    def wait_exit(self, timeout: float = 10) -> int:
        return self.proc.wait(timeout)

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    self.request("shutdown", None, timeout=5)
                    self.notify("exit")
                    self.proc.wait(5)
                except (AssertionError, OSError, subprocess.TimeoutExpired):
                    pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.stderr.close()
