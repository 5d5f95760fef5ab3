"""Keys only the language server reads (``inlay-hints``) are no mistake for the engine, so the CLI does not
exit 2 on a pyproject.toml that sets them; a misspelt one still is."""
import subprocess
import sys

from bprop_lsp.checker import RULE_NAMES
from bprop_lsp.engine.settings import Settings, merge


def test_engine_accepts_editor_keys_silently():
    for key in ("inlay-hints", "inlay_hints", "inlayHints"):
        result = merge(Settings(), {key: True, "ignore": ["BP001"]}, "pyproject.toml", rules=RULE_NAMES)
        assert result.warnings == [] and result.settings.ignore == ("BP001",)
    assert merge(Settings(), {"inlay-hint": True}, "pyproject.toml", rules=RULE_NAMES).warnings


def test_cli_check_with_inlay_hints_in_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.bprop-lsp]\ninlay-hints = true\n")
    (tmp_path / "mod.py").write_text("x = 1\n")
    run = subprocess.run([sys.executable, "-m", "bprop_lsp", "check", str(tmp_path / "mod.py")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "inlay" not in run.stderr
