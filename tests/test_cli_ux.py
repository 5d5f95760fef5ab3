"""What a ruff user reaches for (issue 24): the check flags beyond the basics, shaped like ruff's."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bprop_lsp.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SEED = (ROOT / "tests" / "fixtures" / "seed_muladd.py").read_text(encoding="utf-8")  # BP001, a safe fix
SEED_FIXED = SEED.replace("def bprop(self, x, y, out):", "def bprop(self, x, y, out, dout):")
# BP025 only: its fix is unsafe
NONE_GRAD = ("from mindspore import nn, ops\nclass M(nn.Cell):\n    def construct(self, x, mask):\n        return x * mask\n"
             "    def bprop(self, x, mask, out, dout):\n        return dout * mask, None\n")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(SEED)
    (tmp_path / "b.py").write_text(SEED)
    (tmp_path / "n.py").write_text(NONE_GRAD)
    return tmp_path


def run(capsys, *argv):
    code = main(["check", "--isolated", *argv])
    out, err = capsys.readouterr()
    return code, out, err


# --- --statistics ------------------------------------------------------------------------------------------------

def test_statistics_like_ruff(tree, capsys):
    code, out, err = run(capsys, "--statistics", ".")
    assert code == 1
    lines = out.splitlines()
    # ruff: "{count:>w}\t{code:<w}\t[*] name", most frequent first; then the summary
    assert lines[0] == "2\tBP001\t[*] bprop-missing-params"
    assert lines[1] == "1\tBP025\t[ ] bprop-none-gradient"
    assert "Found 3 findings in 3 files (2 fixable)." in out
    assert "a.py:" not in out


def test_statistics_json(tree, capsys):
    code, out, _ = run(capsys, "--statistics", "--output-format", "json", ".")
    assert json.loads(out) == [
        {"code": "BP001", "name": "bprop-missing-params", "count": 2, "fixable": True, "fixable_count": 2},
        {"code": "BP025", "name": "bprop-none-gradient", "count": 1, "fixable": False, "fixable_count": 0}]
    code, out, _ = run(capsys, "--statistics", "--output-format", "json", "--unsafe-fixes", "n.py")
    assert json.loads(out)[0]["fixable_count"] == 1


# --- hidden fixes (item 7) ---------------------------------------------------------------------------------------

def test_unsafe_fix_is_hinted(tree, capsys):
    code, out, _ = run(capsys, "n.py")
    assert "Found 1 finding in 1 file." in out
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option." in out
    code, out, _ = run(capsys, "--unsafe-fixes", "n.py")
    assert "hidden" not in out and "(1 fixable)" in out


def test_diff_names_the_hidden_fix(tree, capsys):
    code, out, err = run(capsys, "--diff", "n.py")
    assert code == 0 and out == ""
    assert "Would fix 0 findings in 0 files (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in err


# --- --show-fixes ------------------------------------------------------------------------------------------------

def test_show_fixes_with_fix_lists_what_was_fixed(tree, capsys):
    code, out, _ = run(capsys, "--fix", "--show-fixes", "a.py", "b.py")
    assert code == 0
    assert "Fixed 2 findings:\n- a.py:\n    1 × BP001 (bprop-missing-params)\n- b.py:\n    1 × BP001" in out
    assert (tree / "a.py").read_text() == SEED_FIXED


def test_show_fixes_without_fix_shows_each_fix_as_a_diff(tree, capsys):
    code, out, _ = run(capsys, "--show-fixes", "a.py")
    assert code == 1
    assert "    - " + "    def bprop(self, x, y, out):" in out
    assert "+     def bprop(self, x, y, out, dout):" in out
    assert (tree / "a.py").read_text() == SEED


# --- --output-file -----------------------------------------------------------------------------------------------

def test_output_file(tree, capsys):
    code, out, _ = run(capsys, "--output-format", "json", "-o", "report.json", "a.py")
    assert code == 1 and out == ""
    assert json.loads((tree / "report.json").read_text())[0]["code"] == "BP001"


# --- excludes ----------------------------------------------------------------------------------------------------

def test_exclude_flags_and_force_exclude(tree, capsys):
    (tree / "sub").mkdir()
    (tree / "sub" / "c.py").write_text(SEED)
    code, out, _ = run(capsys, "--output-format", "concise", "--exclude", "a.py,n.py", "--extend-exclude", "sub", ".")
    found = [line for line in out.splitlines() if ".py:" in line]
    assert found and all(line.startswith("b.py:") for line in found)
    # a named file is checked anyway, unless --force-exclude
    code, out, _ = run(capsys, "--output-format", "concise", "--exclude", "sub", "sub/c.py")
    assert "sub/c.py:" in out
    code, out, err = run(capsys, "--output-format", "concise", "--exclude", "sub", "--force-exclude", "sub/c.py")
    assert code == 0 and "c.py" not in out


def test_exclude_in_pyproject_is_anchored_at_its_folder(tmp_path, capsys, monkeypatch):
    (tmp_path / "proj" / "legacy").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text('[tool.bprop-lsp]\nexclude = ["legacy/*"]\nforce-exclude = true\n')
    (tmp_path / "proj" / "legacy" / "old.py").write_text(SEED)
    (tmp_path / "proj" / "new.py").write_text(SEED)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--output-format", "concise", "proj", "proj/legacy/old.py"]) == 1
    out = capsys.readouterr().out
    assert "proj/new.py" in out and "old.py" not in out


# --- --add-noqa --------------------------------------------------------------------------------------------------

def test_add_noqa(tree, capsys):
    (tree / "c.py").write_text(SEED.replace("def bprop(self, x, y, out):", "def bprop(self, x, y, out):  # why"))
    code, out, err = run(capsys, "--add-noqa", "a.py", "c.py")
    assert code == 0 and "Added 2 noqa directives." in err
    assert "    def bprop(self, x, y, out):  # noqa: BP001\n" in (tree / "a.py").read_text()
    assert "    def bprop(self, x, y, out):  # noqa: BP001 # why\n" in (tree / "c.py").read_text()
    code, out, _ = run(capsys, "a.py", "c.py")
    assert code == 0, out


# --- --fix-only, --no-fix ----------------------------------------------------------------------------------------

def test_fix_only(tree, capsys):
    code, out, _ = run(capsys, "--fix-only", "a.py", "n.py")
    assert code == 0
    assert out == "Fixed 1 finding in 1 file (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n"
    assert (tree / "a.py").read_text() == SEED_FIXED


def test_no_fix_overrides_fix(tree, capsys):
    code, out, _ = run(capsys, "--fix", "--no-fix", "a.py")
    assert code == 1 and (tree / "a.py").read_text() == SEED


# --- -v, -j, --show-settings, --show-files -----------------------------------------------------------------------

def test_verbose(tree, capsys):
    code, _, err = run(capsys, "-v", "-j", "64", "a.py")
    assert "bprop-lsp: debug: checking 1 file with" in err and "done in" in err
    from bprop_lsp.cli.jobs import cpu_count

    if cpu_count() < 64:
        assert f"-j 64 capped at {cpu_count()}" in err


@pytest.mark.parametrize("jobs", ["0", "-1"])
def test_jobs_must_be_positive(tree, capsys, jobs):
    code, _, err = run(capsys, "-j", jobs, "a.py")
    assert code == 2 and "-j/--jobs must be at least 1" in err


def test_jobs_is_capped(tree, monkeypatch):
    from bprop_lsp.cli import check, jobs

    monkeypatch.setattr(jobs, "cpu_count", lambda: 2)
    seen = []
    monkeypatch.setattr(check, "run_jobs", lambda js, workers, *rest: seen.append(workers) or [])
    main(["check", "--isolated", "-q", "-j", "64", "a.py"])
    assert seen == [2]


def test_show_settings_says_where_each_value_came_from(tree, capsys):
    (tree / "pyproject.toml").write_text('[tool.bprop-lsp]\nignore = ["BP014"]\nmode = "graph"\n')
    assert main(["check", "--show-settings", "--mode", "pynative", "a.py"]) == 0
    out = capsys.readouterr().out
    assert f'Resolved settings for: "{tree / "a.py"}"' in out
    lines = {line.split(" = ")[0]: line for line in out.splitlines() if " = " in line}
    assert lines["ignore"].endswith(f"# {tree / 'pyproject.toml'}") and '["BP014"]' in lines["ignore"]
    assert lines["mode"].endswith("# command line") and '"pynative"' in lines["mode"]
    assert lines["select"].endswith("# default")
    (enabled,) = [line for key, line in lines.items() if key.startswith("enabled rules")]
    assert "BP001" in enabled and "BP014" not in enabled


def test_show_files(tree, capsys):
    code, out, _ = run(capsys, "--show-files", ".")
    assert code == 0 and out.splitlines() == [str(tree / n) for n in ("a.py", "b.py", "n.py")]


# --- usage -------------------------------------------------------------------------------------------------------

def test_unknown_flag_prints_checks_usage(capsys):
    assert main(["check", "--bogus"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: bprop-lsp check") and "unrecognized arguments: --bogus" in err


@pytest.mark.parametrize("where", ["nonsense", "host:port", "127.0.0.1:0", "127.0.0.1:70000"])
def test_serve_tcp_is_checked(capsys, where):
    assert main(["serve", "--tcp", where]) == 2
    assert "--tcp expects HOST:PORT" in capsys.readouterr().err


def test_serve_tcp_says_where_it_listens():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "bprop_lsp", "serve", "--tcp", f"127.0.0.1:{port}"],
                            stderr=subprocess.PIPE, text=True)
    try:
        import selectors

        with selectors.DefaultSelector() as sel:  # (a server that says nothing must fail the test, not hang it)
            sel.register(proc.stderr, selectors.EVENT_READ)
            assert sel.select(timeout=30), "serve --tcp said nothing"
        line = proc.stderr.readline()
        assert f"listening for one LSP client on 127.0.0.1:{port}" in line
    finally:
        proc.kill()
        proc.wait(10)


def test_internal_error_names_where_to_report(monkeypatch, capsys):
    from bprop_lsp.cli import check

    monkeypatch.setattr(check, "run_check", lambda args: 1 / 0)
    assert main(["check", "x.py"]) == 2
    assert "please report it at https://github.com/" in capsys.readouterr().err


def test_rule_by_name_and_did_you_mean(capsys):
    assert main(["rule", "bprop-missing-params"]) == 0
    assert capsys.readouterr().out.startswith("## BP001 bprop-missing-params")
    assert main(["rule", "BP0O1"]) == 2
    assert "did you mean BP001 (bprop-missing-params)?" in capsys.readouterr().err


# --- --watch -----------------------------------------------------------------------------------------------------

def test_watch_reruns_on_change_with_a_clear_screen(tmp_path):
    (tmp_path / "a.py").write_text(SEED)
    proc = subprocess.Popen([sys.executable, "-m", "bprop_lsp", "check", "--isolated", "--watch", "--watch-interval",
                             "0.1", "--watch-iterations", "2", "--output-format", "concise", "."],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        first = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            first.append(line)
            if "Watching for file changes." in line:
                break
        text = "".join(first)
        # ruff's shape: clear, "[time] Starting linter in watch mode...", blank, "[time] Found ...", blank, findings
        assert text.startswith("\x1b[H\x1b[2J\x1b[3J[") and "] Starting linter in watch mode...\n\n[" in text
        assert "] Found 1 finding in 1 file. Watching for file changes.\n" in text
        time.sleep(0.3)
        (tmp_path / "a.py").write_text(SEED_FIXED)
        rest = proc.stdout.read()  # (to the end: --watch-iterations 2 stops after the second run)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert rest.startswith("\na.py:5:9: BP001"), rest  # the first run's findings, after its count
    assert rest.count("\x1b[H\x1b[2J\x1b[3J") == 1 and "] File change detected...\n\n[" in rest
    assert rest.endswith("] Found 0 findings. Watching for file changes.\n\n")


def test_watch_refuses_statistics(capsys):
    assert main(["check", "--watch", "--statistics", "."]) == 2
    assert "--watch cannot be used with --statistics" in capsys.readouterr().err


def test_add_noqa_is_not_served_from_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(SEED)
    assert main(["check", "--isolated", "a.py"]) == 1  # (fills the cache)
    assert main(["check", "--isolated", "--add-noqa", "a.py"]) == 0
    assert "# noqa: BP001" in (tmp_path / "a.py").read_text()
    (tmp_path / "a.py").write_text(SEED)
    assert main(["check", "--isolated", "a.py"]) == 1  # (the --add-noqa run stored no empty result)
