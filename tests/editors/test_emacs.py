"""Emacs 28+ with Eglot, and with lsp-mode, against `bprop-lsp serve`, loading the very snippets docs/editors.md
shows (editors/emacs/).

Emacs comes from Debian (emacs-nox elpa-eglot elpa-lsp-mode, installed by scripts/install-editors.sh). The quick
fix is taken the way a user does: M-x eglot-code-actions on the diagnostic and RET on the default, which Eglot makes
the action the server marks preferred; M-x lsp-execute-code-action and picking the preferred action.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import (DRIVERS, EDITORS, SEED, SEED_COL, SEED_FIXED, SEED_LINE, SEED_ZH, SEED_ZH_BMP,
                       SEED_ZH_BMP_FIXED, SEED_ZH_FIXED, ZH_BPROP_LINE, ZH_LINE, Sandbox, assert_only_fix_applied,
                       run_editor)

pytestmark = [pytest.mark.editor, pytest.mark.usefixtures("language_server")]

INSTALL_HINT = "run scripts/install-editors.sh (apt-get install emacs-nox elpa-eglot elpa-lsp-mode)"


@pytest.fixture(scope="module")
def emacs() -> str:
    exe = shutil.which("emacs")
    if exe is None:
        pytest.skip(f"Emacs is not installed: {INSTALL_HINT}")
    first = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()[:1]
    m = re.match(r"GNU Emacs (\d+)", first[0] if first else "")
    if not m or int(m.group(1)) < 28:
        pytest.skip(f"Emacs 28+ needed, found {first}: {INSTALL_HINT}")
    if int(m.group(1)) < 29 and not list(Path("/usr/share/emacs/site-lisp/elpa").glob("eglot-*")):
        pytest.skip(f"Eglot is not installed for Emacs 28: {INSTALL_HINT}")
    return exe


@pytest.fixture(scope="module")
def lsp_mode(emacs: str) -> str:
    if not list(Path("/usr/share/emacs/site-lisp/elpa").glob("lsp-mode-*")):
        pytest.skip(f"lsp-mode is not installed: {INSTALL_HINT}")
    return emacs


def _run(emacs: str, sandbox: Sandbox, file: Path, snippets: list[str], mode: str = "quickfix",
         driver: str = "emacs_eglot_e2e.el"):
    argv = [emacs, "--batch", "-Q", "-l", str(DRIVERS / "emacs_site.el")]
    for name in snippets:
        argv += ["-l", str(EDITORS / "emacs" / name)]
    argv += ["-l", str(DRIVERS / driver), str(file)]
    return run_editor(argv, sandbox, extra_env={"E2E_MODE": mode})


@pytest.mark.parametrize("seed,fixed,name", [(SEED, SEED_FIXED, "muladd.py"), (SEED_ZH, SEED_ZH_FIXED, "乘加.py")],
                         ids=["ascii", "chinese-utf-16"])
def test_eglot_quick_fix(emacs: str, sandbox: Sandbox, seed: str, fixed: str, name: str) -> None:
    f = sandbox.write_seed(seed, name)
    run = _run(emacs, sandbox, f, ["bprop-lsp-eglot.el"])
    assert run.returncode == 0 and "RESULT ok" in run.stdout, run.report()
    diags = [json.loads(d) for d in run.lines("DIAG")]
    assert diags and "[BP001]" in diags[0]["text"], run.report()
    # Emacs's own position of the Flymake diagnostic (line, 1-based character column): the name `bprop`
    col = SEED_COL if seed is SEED else ZH_BPROP_LINE.index("bprop") + 1
    assert (diags[0]["line"], diags[0]["col"], diags[0]["length"]) == (SEED_LINE if seed is SEED else ZH_LINE, col, 5), \
        run.report()
    actions = [json.loads(a) for a in run.lines("ACTION")]
    assert [a["isPreferred"] for a in actions].count(True) == 1, run.report()
    assert any(a["title"].startswith("Disable BP001") for a in actions), run.report()
    assert run.lines("PROMPT"), run.report()  # the menu was offered (with the preferred action as its default)
    assert "CLEARED" in run.stdout, run.report()
    assert_only_fix_applied(f, fixed)


def test_eglot_fix_all_on_save(emacs: str, sandbox: Sandbox) -> None:
    f = sandbox.write_seed(SEED)
    run = _run(emacs, sandbox, f, ["bprop-lsp-eglot.el", "bprop-lsp-eglot-fix-on-save.el"], mode="save")
    assert run.returncode == 0 and "RESULT ok" in run.stdout, run.report()
    assert_only_fix_applied(f, SEED_FIXED)


LSP_MODE_ASTRAL = pytest.mark.xfail(
    strict=True, reason="lsp-mode 8.0 counts a character outside the BMP (the emoji) as 1 UTF-16 unit instead of 2 "
                        "(emacs-lsp/lsp-mode#2080): edits after it on the line land one column early")


@pytest.mark.parametrize("seed,fixed,name", [
    (SEED, SEED_FIXED, "muladd.py"),
    (SEED_ZH_BMP, SEED_ZH_BMP_FIXED, "乘加.py"),
    pytest.param(SEED_ZH, SEED_ZH_FIXED, "乘加.py", marks=LSP_MODE_ASTRAL),
], ids=["ascii", "chinese-utf-16", "chinese-emoji-utf-16"])
def test_lsp_mode_quick_fix(lsp_mode: str, sandbox: Sandbox, seed: str, fixed: str, name: str) -> None:
    f = sandbox.write_seed(seed, name)
    run = _run(lsp_mode, sandbox, f, ["bprop-lsp-lsp-mode.el"], driver="emacs_lsp_mode_e2e.el")
    assert run.returncode == 0 and "RESULT ok" in run.stdout, run.report()
    diags = [json.loads(d) for d in run.lines("DIAG")]
    assert diags and diags[0]["code"] == "BP001", run.report()
    assert (diags[0]["line"], diags[0]["col"], diags[0]["length"]) == (SEED_LINE, SEED_COL, 5), run.report()
    actions = [json.loads(a) for a in run.lines("ACTION")]
    assert [a["isPreferred"] for a in actions].count(True) == 1, run.report()
    assert "APPLIED" in run.stdout and "CLEARED" in run.stdout, run.report()
    assert_only_fix_applied(f, fixed)


def test_lsp_mode_fix_all_on_save(lsp_mode: str, sandbox: Sandbox) -> None:
    f = sandbox.write_seed(SEED_ZH_BMP, "乘加.py")
    run = _run(lsp_mode, sandbox, f, ["bprop-lsp-lsp-mode.el"], mode="save", driver="emacs_lsp_mode_e2e.el")
    assert run.returncode == 0 and "RESULT ok" in run.stdout, run.report()
    assert_only_fix_applied(f, SEED_ZH_BMP_FIXED)
