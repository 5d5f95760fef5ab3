"""``bprop-lsp check``: output formats, exit codes, fixes, configuration and bad input."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bprop_lsp.cli.main import main

SEED = (
    "from mindspore import nn\n\n\n"
    "class MulAdd(nn.Cell):\n"
    "    def construct(self, x, y):\n"
    "        return 2 * x + y\n\n"
    "    def bprop(self, x, y, out):\n"
    "        return 2 * dout, dout\n"
)
CLEAN = SEED.replace("(self, x, y, out)", "(self, x, y, out, dout)")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def seed(tmp_path):
    p = tmp_path / "seed.py"
    p.write_bytes(SEED.encode())
    return p


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_seed_gets_exactly_one_bp001_at_the_def(capsys, seed):
    code, out, _ = run(capsys, "check", "--output-format", "json", str(seed))
    assert code == 1
    findings = json.loads(out)
    assert [f["code"] for f in findings] == ["BP001"]
    f = findings[0]
    assert f["location"] == {"row": 8, "column": 9} and f["end_location"] == {"row": 8, "column": 14}
    assert f["severity"] == "error" and f["filename"] == str(seed)
    assert "must take (self, x, y, out, dout): it lacks dout" in f["message"]
    assert f["url"].startswith(("https://", "file:///")) and f["url"].endswith("/BP001.md")
    assert f["fix"]["applicability"] == "safe"
    assert f["fix"]["edits"] == [{"content": ", dout", "location": {"row": 8, "column": 30},
                                  "end_location": {"row": 8, "column": 30}}]


def test_fix_changes_only_the_parameter_list(capsys, seed):
    code, out, _ = run(capsys, "check", "--fix", str(seed))
    assert code == 0, out
    assert seed.read_bytes() == CLEAN.encode()
    assert "Fixed 1 finding" in out


def test_diff_writes_nothing_and_exits_1(capsys, seed):
    code, out, _ = run(capsys, "check", "--diff", str(seed))
    assert code == 1
    assert "-    def bprop(self, x, y, out):" in out and "+    def bprop(self, x, y, out, dout):" in out
    assert seed.read_bytes() == SEED.encode()


def test_clean_file_exits_0(capsys, tmp_path):
    p = tmp_path / "ok.py"
    p.write_text(CLEAN)
    code, out, _ = run(capsys, "check", str(p))
    assert code == 0 and "All checks passed" in out


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "github", "sarif"])
def test_every_format_names_the_finding(capsys, seed, fmt):
    code, out, _ = run(capsys, "check", "--output-format", fmt, "--no-color", str(seed))
    assert code == 1
    if fmt == "json":
        assert json.loads(out)[0]["code"] == "BP001"
    elif fmt == "sarif":
        sarif = json.loads(out)
        result = sarif["runs"][0]["results"][0]
        assert sarif["version"] == "2.1.0" and result["ruleId"] == "BP001" and result["level"] == "error"
        assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 8
        assert any(r["id"] == "BP001" for r in sarif["runs"][0]["tool"]["driver"]["rules"])
    elif fmt == "github":
        assert out.startswith("::error title=bprop-lsp (BP001),file=") and ",line=8,col=9," in out
    elif fmt == "concise":
        assert f"{seed}:8:9: BP001 [*] error:" in out
    else:
        assert f"{seed}:8:9:" in out and "^^^^^" in out and "help: Add missing parameter `dout`" in out


def test_select_and_ignore(capsys, seed):
    assert run(capsys, "check", "--ignore", "BP001", str(seed))[0] == 0
    assert run(capsys, "check", "--select", "BP02", str(seed))[0] == 0
    assert run(capsys, "check", "--select", "BP0", str(seed))[0] == 1


def test_pyproject_settings_apply(capsys, seed, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.bprop-lsp]\nignore = ["BP001"]\n')
    assert run(capsys, "check", str(seed))[0] == 0
    # The command line wins over the file.
    assert run(capsys, "check", "--isolated", str(seed))[0] == 1


def test_broken_pyproject_is_a_clear_error(capsys, seed, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.bprop-lsp\nmode = ")
    code, out, err = run(capsys, "check", str(seed))
    assert code == 2 and "pyproject.toml" in err and "invalid TOML" in err
    assert seed.read_bytes() == SEED.encode()


def test_unknown_setting_warns_and_keeps_defaults(capsys, seed, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.bprop-lsp]\nmodee = "graph"\nmode = "turbo"\n')
    code, _, err = run(capsys, "check", str(seed))
    assert code == 1
    assert "unknown setting 'modee'" in err and "'mode' must be one of" in err


def test_missing_config_file(capsys, seed):
    code, _, err = run(capsys, "check", "--config", "/nonexistent/pyproject.toml", str(seed))
    assert code == 2 and "/nonexistent/pyproject.toml" in err


def test_bad_inputs_are_named_and_others_still_checked(capsys, seed, tmp_path):
    latin1 = tmp_path / "latin1.py"
    latin1.write_bytes(b"x = '\xe9'\n")
    binary = tmp_path / "blob.py"
    binary.write_bytes(b"\x00\x01\x02bprop")
    code, out, err = run(capsys, "check", "--output-format", "concise", str(tmp_path / "missing.py"), str(latin1),
                         str(binary), str(seed))
    assert code == 2
    assert "missing.py: no such file or directory" in err
    assert "latin1.py: not valid UTF-8" in err
    assert "blob.py: binary file" in err
    assert "BP001" in out  # the good file was still checked


def test_coding_cookie_is_honoured(capsys, tmp_path):
    p = tmp_path / "gbk.py"
    p.write_bytes(("# -*- coding: gbk -*-\n# 中文注释\n" + SEED).encode("gbk"))
    code, out, _ = run(capsys, "check", "--fix", str(p))
    assert code == 0
    assert p.read_bytes().decode("gbk") == "# -*- coding: gbk -*-\n# 中文注释\n" + CLEAN


def test_syntax_error_file_still_gets_findings(capsys, tmp_path):
    p = tmp_path / "half.py"
    p.write_text(SEED + "\ndef broken(:\n    pass\n")
    code, out, err = run(capsys, "check", "--output-format", "concise", str(p))
    assert code == 1 and "BP001" in out
    assert "syntax error" in err and "half.py" in err


def test_directory_walk_skips_virtualenvs_and_node_modules(capsys, tmp_path):
    for sub in ("pkg", ".venv/lib", "node_modules/x", "build", ".git"):
        d = tmp_path / sub
        d.mkdir(parents=True)
        (d / "m.py").write_text(SEED)
    code, out, _ = run(capsys, "check", "--output-format", "json", str(tmp_path))
    names = {Path(f["filename"]).parent.name for f in json.loads(out)}
    assert code == 1 and names == {"pkg"}


def test_noqa_suppresses(capsys, tmp_path):
    p = tmp_path / "n.py"
    p.write_text(SEED.replace("(self, x, y, out):", "(self, x, y, out):  # noqa: BP001"))
    assert run(capsys, "check", str(p))[0] == 0
    p.write_text(SEED.replace("(self, x, y, out):", "(self, x, y, out):  # noqa"))
    assert run(capsys, "check", str(p))[0] == 0


def test_usage_errors_exit_2(capsys):
    assert run(capsys, "check", "--output-format", "xml")[0] == 2
    assert run(capsys)[0] == 2
    code, _, err = run(capsys, "rule", "BP999")
    assert code == 2 and "unknown rule" in err


def test_rule_docs(capsys):
    code, out, _ = run(capsys, "rule", "BP001")
    assert code == 0 and out.startswith("## BP001 bprop-missing-params") and "After the fix:" in out


def test_docs_rules_md_is_generated_from_the_rules(capsys):
    """docs/rules.md must be the output of `bprop-lsp rule --all` (regenerate it when a rule changes)."""
    code, out, _ = run(capsys, "rule", "--all")
    assert code == 0
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == out


def test_console_script_reads_stdin_and_fix_writes_stdout():
    exe = [sys.executable, "-m", "bprop_lsp"]
    proc = subprocess.run(exe + ["check", "--output-format", "json", "--stdin-filename", "seed.py", "-"],
                          input=SEED.encode(), capture_output=True, timeout=60)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)[0]["filename"] == "seed.py"
    proc = subprocess.run(exe + ["check", "--fix", "-"], input=SEED.encode(), capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == CLEAN.encode()


def test_the_readme_example_folder(capsys):
    code, out, _ = run(capsys, "check", "--output-format", "json", str(ROOT / "examples"))
    assert code == 1
    by_file = {}
    for f in json.loads(out):
        by_file.setdefault(Path(f["filename"]).name, []).append(f["code"])
    assert by_file["muladd_missing_dout.py"] == ["BP001"]
    assert "straight_through_estimator.py" not in by_file


def test_no_syntax_warning_for_code_python_accepts(tmp_path, capsys):
    """parso's grammar lags CPython's: a `match` statement must not be called a syntax error."""
    src = tmp_path / "m.py"
    src.write_text(
        "from mindspore import nn\n"
        "def f(c):\n    match c:\n        case 1:\n            return 2\n        case _:\n            return 3\n"
        "class C(nn.Cell):\n    def construct(self, x):\n        return x\n"
        "    def bprop(self, x, out):\n        return (out,)\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "--output-format", "concise", str(src))
    assert code == 1 and "BP001" in out
    assert "syntax error" not in err
    broken = tmp_path / "b.py"
    broken.write_text("from mindspore import nn\nclass C(nn.Cell:\n    def bprop(self, x):\n        pass\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "--output-format", "concise", str(broken))
    assert "syntax error" in err


def test_syntax_warning_for_what_python_compiles_rejects(tmp_path, capsys):
    """CPython's check reads its symbol table too: a duplicate parameter name is a syntax error for Python (its
    import fails) though its parser alone accepts it; the file is still checked, with the warning."""
    src = tmp_path / "dup.py"
    src.write_text(SEED + "\n\ndef helper(a, a):\n    return a\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "--output-format", "concise", str(src))
    assert code == 1 and "BP001" in out
    assert "syntax error" in err and "duplicate argument" in err
