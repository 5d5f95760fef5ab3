"""Shared pieces of the real-editor tests: seed programs, a sandboxed environment, running an editor.

The editors start the real server exactly as the snippets in editors/ tell users to: `bprop-lsp serve`,
found on PATH. PATH starts with the bin directory of the interpreter running pytest (the project's venv);
BPROP_LSP_EDITOR_BIN overrides that directory (e.g. to try another installation).
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EDITORS = ROOT / "editors"
DRIVERS = Path(__file__).resolve().parent / "drivers"
TIMEOUT_S = 15  # each wait inside an editor; the editor's own watchdog is 3x this, the process gets 5x

# The seed program (bprop lacks dout), shared by the test suites: tests/fixtures/seed_muladd.py.
SEED = (Path(__file__).resolve().parents[1] / "fixtures" / "seed_muladd.py").read_text(encoding="utf-8")
SEED_FIXED = SEED.replace("    def bprop(self, x, y, out):\n", "    def bprop(self, x, y, out, dout):\n")
SEED_LINE, SEED_COL = 5, 9  # 1-based: the name `bprop` on `def bprop` (all ASCII: bytes = UTF-16 = code points)

# Chinese and an astral-plane emoji (1 code point, 2 UTF-16 units, 4 UTF-8 bytes) on the lines of the finding and
# before the column of the fix, so a client and server that disagree about the position encoding corrupt the file.
SEED_ZH = (
    "from mindspore import nn  # 中文注释 😀\n"
    "class 乘加(nn.Cell):  # 乘加 😀\n"
    "    def construct(self, 甲, 乙):\n"
    "        return 2 * 甲 + 乙\n"
    '    def bprop(self, 甲: "中文😀", 乙, out):  # 反向 😀\n'
    "        return 2 * dout, dout\n"
)
SEED_ZH_FIXED = SEED_ZH.replace('乙, out):  # 反向', '乙, out, dout):  # 反向')
ZH_LINE = 5
# Chinese only, no character outside the Basic Multilingual Plane: UTF-16 units = code points here
SEED_ZH_BMP = SEED_ZH.replace("😀", "汉")
SEED_ZH_BMP_FIXED = SEED_ZH_FIXED.replace("😀", "汉")
ZH_BPROP_LINE = SEED_ZH.splitlines()[ZH_LINE - 1]
ZH_INSERT_AT = ZH_BPROP_LINE.index("out)") + len("out")  # code points, 0-based: where ", dout" goes


# An ops.Custom whose lambda bprop lacks dout: the finding starts on the lambda, after Chinese text and an emoji on
# the same line (no fix: the offered action is "Disable BP040 for this line").
SEED_OP = (
    "from mindspore import nn, ops\n"
    "def 前向(x):\n"
    "    return x\n"
    "class 乘(nn.Cell):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    '        self.op = ops.Custom(前向, out_shape=(2,), out_dtype=None, func_type="pyfunc", reg_info="中文😀", '
    "bprop=lambda x, out: (out,))\n"
    "    def construct(self, x):\n"
    "        return self.op(x)\n"
)
OP_LINE = 7
OP_LINE_TEXT = SEED_OP.splitlines()[OP_LINE - 1]
SEED_OP_NOQA = SEED_OP.replace(OP_LINE_TEXT, OP_LINE_TEXT + "  # noqa: BP040")


def columns(prefix: str) -> dict[str, int]:
    """Length of ``prefix`` in each LSP position encoding."""
    return {
        "utf-8": len(prefix.encode("utf-8")),
        "utf-16": len(prefix.encode("utf-16-le")) // 2,
        "utf-32": len(prefix),
    }


def server_bin_dir() -> Path:
    return Path(os.environ.get("BPROP_LSP_EDITOR_BIN") or Path(sys.executable).parent)


@dataclass
class Sandbox:
    dir: Path  # a project directory holding the file under test (with a pyproject.toml, as a real project)
    env: dict[str, str]

    def write_seed(self, text: str, name: str = "muladd.py") -> Path:
        path = self.dir / name
        path.write_bytes(text.encode("utf-8"))
        return path


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    """A temp project plus HOME/XDG dirs so no editor reads or writes the real home directory."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "seed"\nversion = "0"\n')
    home = tmp_path / "home"
    for sub in (".config", ".local/share", ".local/state", ".cache"):
        (home / sub).mkdir(parents=True)
    (tmp_path / "tmp").mkdir()  # the editors' temporary files too
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NVIM", "VIM", "EMACS", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_STATE_HOME=str(home / ".local/state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        PATH=os.pathsep.join([str(server_bin_dir()), env.get("PATH", "")]),
        TMPDIR=str(tmp_path / "tmp"),
        TERM="dumb",
        LANG="C.UTF-8",
        LC_ALL="C.UTF-8",
        E2E_TIMEOUT_MS=str(TIMEOUT_S * 1000),
        E2E_TIMEOUT_S=str(TIMEOUT_S),
    )
    return Sandbox(project, env)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    def lines(self, tag: str) -> list[str]:
        return [line[len(tag) + 1 :] for line in self.stdout.splitlines() if line.startswith(tag + " ")]

    def report(self) -> str:
        return f"exit {self.returncode}\n--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr[-4000:]}"


def run_editor(argv: list[str], sandbox: Sandbox, *, extra_env: dict[str, str] | None = None, stdin: str = "") -> Run:
    env = dict(sandbox.env, **(extra_env or {}))
    try:
        p = subprocess.run(argv, cwd=sandbox.dir, env=env, input=stdin.encode(), capture_output=True,
                           timeout=TIMEOUT_S * 5)
    except subprocess.TimeoutExpired as exc:  # the process is killed by subprocess.run
        out = (exc.stdout or b"").decode("utf-8", "replace")
        err = (exc.stderr or b"").decode("utf-8", "replace")
        pytest.fail(f"{argv[0]} hung for {TIMEOUT_S * 5}s\n--- stdout ---\n{out}\n--- stderr ---\n{err[-4000:]}")
    return Run(p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"))


def assert_only_fix_applied(path: Path, expected: str) -> None:
    """The file on disk is byte-for-byte the expected text (the fix, and nothing else, changed)."""
    got = path.read_bytes()
    assert got == expected.encode("utf-8"), f"file on disk differs:\n{got.decode('utf-8', 'replace')}"


def _initialize_answered(argv: list[str], env: dict[str, str], timeout: float = 20) -> tuple[bool, str]:
    """Send `initialize` to the server over stdio; True when it answers with capabilities."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"processId": None, "rootUri": None, "capabilities": {}}}).encode()
    msg = b"Content-Length: %d\r\n\r\n" % len(body) + body
    try:
        p = subprocess.run(argv, input=msg, env=env, capture_output=True, timeout=timeout)
        out, err = p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:  # a server keeps running after initialize: that is expected
        out, err = exc.stdout or b"", exc.stderr or b""
    except OSError as exc:
        return False, str(exc)
    return b'"capabilities"' in out, (out + err).decode("utf-8", "replace")[-2000:]


NOT_ASKED = ("editor tests not asked for: `bash scripts/test.sh --with-editors` (or BPROP_TEST_EDITORS=1; CI=true "
             "does) installs the editors (apt, root) and runs them")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    """scripts/test.sh sets BPROP_TEST_EDITORS=0 unless the editor tests were asked for: then each skips with the
    reason (before any editor or server starts) instead of driving whatever editors happen to be installed. Unset
    (plain pytest) they run."""
    if item.get_closest_marker("editor") is not None and os.environ.get("BPROP_TEST_EDITORS") == "0":
        pytest.skip(NOT_ASKED)


@pytest.fixture(scope="session")
def language_server() -> None:
    """The editors start `bprop-lsp serve` themselves; make sure it is there and answers first."""
    if importlib.util.find_spec("bprop_lsp.lsp.server") is None:
        pytest.skip("the language server (bprop_lsp/lsp/server.py) is not in this checkout yet")
    exe = server_bin_dir() / "bprop-lsp"
    env = dict(os.environ, PATH=os.pathsep.join([str(server_bin_dir()), os.environ.get("PATH", "")]))
    # as long as an editor waits for it (a loaded machine starts Python slowly: 5 s was too short there)
    ok, output = _initialize_answered([str(exe), "serve"], env, timeout=TIMEOUT_S * 2)
    if not ok:
        pytest.fail(f"`{exe} serve` does not answer initialize:\n{output}")
