"""``bprop-lsp check`` over real trees: what is walked, what is skipped (and said), how ``--fix`` writes, and the
summary line."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

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


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _limit_memory():  # a regression must fail the test, not eat the machine
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def run_cli(*argv, cwd=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "bprop_lsp", *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, preexec_fn=_limit_memory)


def test_fifo_and_device_links_named_py_do_not_hang_the_walk(tmp_path):
    """Regression: a FIFO named x.py blocked open() forever; a committed `x.py -> /dev/zero` read without end."""
    (tmp_path / "ok.py").write_text(SEED)
    os.mkfifo(tmp_path / "fifo.py")
    os.symlink("/dev/zero", tmp_path / "zero.py")
    proc = run_cli("check", "--output-format", "concise", str(tmp_path), timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert "ok.py:8:9: BP001" in proc.stdout
    assert "fifo.py: a FIFO, not a regular file; skipped" in proc.stderr
    assert "zero.py: a character device (through a symbolic link), not a regular file; skipped" in proc.stderr


def test_a_named_fifo_is_an_error_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")
    proc = run_cli("check", str(tmp_path / "fifo.py"), timeout=30)
    assert proc.returncode == 2 and "fifo.py: a FIFO, not a regular file" in proc.stderr


def test_deep_tree_is_walked_without_recursion(capsys, tmp_path, deep_dir):
    """Regression: os.walk (recursive before Python 3.12) overflowed on a 1,200-deep tree."""
    path = deep_dir(1200)
    with open(os.path.join(path, "deep.py"), "w") as fh:
        fh.write(SEED)
    code, out, err = run(capsys, "check", "--output-format", "json", str(tmp_path))
    assert code == 1, err
    assert [f["code"] for f in json.loads(out)] == ["BP001"]


def test_symlink_loops_do_not_hang(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SEED)
    os.symlink("..", tmp_path / "pkg" / "up")
    os.symlink("a.py", tmp_path / "b.py")
    os.symlink("b.py", tmp_path / "a.py")
    proc = run_cli("check", "--output-format", "concise", str(tmp_path), timeout=30)
    assert proc.returncode == 1 and proc.stdout.count("BP001") == 1
    assert "a.py: a symbolic link loop; skipped" in proc.stderr and "up: a symbolic link to a directory; not followed" in proc.stderr


def test_gitignored_files_are_not_checked_unless_named_or_asked(capsys, tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "g.py").write_text(SEED)
    (tmp_path / "m.py").write_text(SEED)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "check", "--output-format", "json")
    assert code == 1 and [f["filename"] for f in json.loads(out)] == ["m.py"]
    code, out, _ = run(capsys, "check", "--output-format", "json", "--no-respect-gitignore", ".")
    assert code == 1 and [f["filename"] for f in json.loads(out)] == ["generated/g.py", "m.py"]
    code, out, _ = run(capsys, "check", "--output-format", "json", "generated/g.py")
    assert code == 1 and [f["filename"] for f in json.loads(out)] == ["generated/g.py"]


def test_paths_print_without_dot_slash_and_sorted(capsys, tmp_path, monkeypatch):
    for rel in ("b/m.py", "a/m.py", "a-x/m.py", "z.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(SEED)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "check", "--output-format", "concise", "./z.py", ".")
    names = [line.split(":")[0] for line in out.splitlines() if "BP001" in line]
    assert names == ["a/m.py", "a-x/m.py", "b/m.py", "z.py"]


def test_unreadable_directory_is_named_and_exits_2(capsys, tmp_path, monkeypatch):
    from bprop_lsp import sources

    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "x.py").write_text(SEED)
    (tmp_path / "m.py").write_text(SEED)
    real = os.scandir
    monkeypatch.setattr(sources.os, "scandir",
                        lambda p: (_ for _ in ()).throw(PermissionError(13, "Permission denied"))
                        if str(p).endswith("locked") else real(p))
    code, out, err = run(capsys, "check", "--output-format", "concise", str(tmp_path))
    assert code == 2
    assert f"{tmp_path / 'locked'}: cannot read directory: Permission denied" in err
    assert "m.py:8:9: BP001" in out


# ------------------------------------------------------------------------------------------------ --fix

def test_fix_does_not_follow_a_link_planted_at_the_temporary_name(capsys, tmp_path):
    """Regression: `--fix` wrote through `<file>.bprop-lsp.tmp`, so a planted link there overwrote any file."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    src = tmp_path / "m.py"
    src.write_text(SEED)
    os.symlink(victim, tmp_path / "m.py.bprop-lsp.tmp")
    code, out, err = run(capsys, "check", "--fix", str(src))
    assert code == 0, err
    assert victim.read_text() == "precious\n"
    assert not src.is_symlink() and src.read_text() == CLEAN


def test_fix_refuses_read_only_files_and_fixes_the_others(capsys, tmp_path):
    """Regression: a read-only file was replaced anyway (rename needs only the folder's permission)."""
    ro = tmp_path / "ro.py"
    ro.write_text(SEED)
    os.chmod(ro, 0o444)
    rw = tmp_path / "rw.py"
    rw.write_text(SEED)
    code, out, err = run(capsys, "check", "--fix", "--output-format", "concise", str(ro), str(rw))
    assert code == 2
    assert f"{ro}: read-only file; not fixed" in err
    assert ro.read_text() == SEED and rw.read_text() == CLEAN
    assert f"{ro}:8:9: BP001" in out  # its finding is still reported
    assert stat_mode(ro) == 0o444


def stat_mode(p):
    return os.stat(p).st_mode & 0o7777


def test_fix_leaves_a_file_changed_during_the_run(capsys, tmp_path, monkeypatch):
    from bprop_lsp.cli import jobs

    src = tmp_path / "m.py"
    src.write_text(SEED)
    other = tmp_path / "n.py"
    other.write_text(SEED)
    real_fix_all = jobs.fix_all

    def fix_all_while_an_editor_saves(text, settings, **kw):
        result = real_fix_all(text, settings, **kw)
        if not src.read_text().endswith("# saved\n"):
            src.write_text(SEED + "# saved\n")
        return result

    monkeypatch.setattr(jobs, "fix_all", fix_all_while_an_editor_saves)
    code, out, err = run(capsys, "check", "--fix", "-j", "1", str(src), str(other))
    assert code == 2
    assert f"{src}: changed on disk during the run; not fixed" in err
    assert src.read_text() == SEED + "# saved\n"
    assert other.read_text() == CLEAN
    assert sorted(os.listdir(tmp_path)) == ["m.py", "n.py"]


def test_fix_through_a_symlink_and_with_hard_links_keeps_the_links(capsys, tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "t.py"
    target.write_text(SEED)
    os.symlink(target, tmp_path / "link.py")
    hard = tmp_path / "hard.py"
    hard.write_text(SEED)
    os.link(hard, tmp_path / "hard_twin.py")
    code, _, err = run(capsys, "check", "--fix", str(tmp_path / "link.py"), str(hard))
    assert code == 0, err
    assert (tmp_path / "link.py").is_symlink() and target.read_text() == CLEAN
    assert (tmp_path / "hard_twin.py").read_text() == CLEAN
    assert os.stat(hard).st_ino == os.stat(tmp_path / "hard_twin.py").st_ino


def test_fix_keeps_the_mode(capsys, tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SEED)
    os.chmod(src, 0o751)
    assert run(capsys, "check", "--fix", str(src))[0] == 0
    assert src.read_text() == CLEAN and stat_mode(src) == 0o751


# ------------------------------------------------------------------------------------------------ summary

@pytest.mark.parametrize("files, expected", [
    (1, "Found 1 finding in 1 file (1 fixable)."),
    (3, "Found 3 findings in 3 files (3 fixable)."),
])
def test_summary_line_plurals(capsys, tmp_path, files, expected):
    for i in range(files):
        (tmp_path / f"m{i}.py").write_text(SEED)
    code, out, _ = run(capsys, "check", "--output-format", "concise", str(tmp_path))
    assert code == 1 and expected in out.splitlines()


def test_summary_after_fix_and_when_clean(capsys, tmp_path):
    (tmp_path / "a.py").write_text(SEED)
    (tmp_path / "b.py").write_text(SEED)
    code, out, _ = run(capsys, "check", "--fix", str(tmp_path))
    assert code == 0 and out.splitlines() == ["Fixed 2 findings in 2 files.", "All checks passed!"]
    code, out, _ = run(capsys, "check", str(tmp_path))
    assert code == 0 and out == "All checks passed!\n"


def test_pyproject_in_the_current_folder_applies_to_a_walk_of_dot(capsys, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.bprop-lsp]\nexclude = ["legacy"]\nignore = ["BP014"]\n')
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "old.py").write_text(SEED)
    (tmp_path / "new.py").write_text(SEED)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "check", "--output-format", "json", ".")
    assert code == 1 and [f["filename"] for f in json.loads(out)] == ["new.py"]


# ---------------------------------------------------------------------------- ignore files, links, names (issue 25)

@pytest.fixture
def no_user_git_config(tmp_path, monkeypatch):
    """git's global excludes come from the user's config: keep the developer's own out of these tests."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    return home


def _git_tree(root, gitignore: str) -> None:
    (root / ".git").mkdir()
    (root / ".gitignore").write_text(gitignore)


@pytest.mark.parametrize("pattern", ["x[a-D].py", "[z-a]", "a[bc.py", "[[:nope:]].py", "x\\"])
def test_a_gitignore_line_git_reads_oddly_neither_stops_the_run_nor_is_silent(capsys, tmp_path, no_user_git_config,
                                                                               pattern):
    """Regression: `x[a-D].py` in a .gitignore ended `check` with exit 2, 'internal error: bad character range'."""
    _git_tree(tmp_path, f"*.pyc\n{pattern}\n")
    (tmp_path / "seed.py").write_text(SEED)
    code, out, err = run(capsys, "check", "--output-format", "concise", str(tmp_path))
    assert code == 1, err
    assert "seed.py:8:9: BP001" in out
    assert "internal error" not in err
    assert f".gitignore:2: pattern {pattern!r}: " in err, err


def test_git_global_excludes_are_honoured_and_no_files_found_says_they_were_ignored(capsys, tmp_path,
                                                                                    no_user_git_config):
    (no_user_git_config / ".gitconfig").write_text('[user]\n\tname = x\n[core]\n\texcludesfile = "~/global ignore"\n')
    (no_user_git_config / "global ignore").write_text("*.py\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    _git_tree(repo, "")
    (repo / "seed.py").write_text(SEED)
    code, out, err = run(capsys, "check", str(repo))
    assert code == 0 and "BP001" not in out, (out, err)
    assert "no Python files found under the given paths (1 Python file ignored by .gitignore" in err, err
    code, out, err = run(capsys, "check", "--no-respect-gitignore", "--output-format", "concise", str(repo))
    assert code == 1 and "seed.py:8:9: BP001" in out


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_fix_through_two_names_of_one_file_fixes_and_reports_it_once(capsys, tmp_path, monkeypatch, kind):
    """Regression: with b.py a link to a.py, --fix fixed a.py, then found b.py 'changed on disk' and exited 2."""
    (tmp_path / "a.py").write_text(SEED)
    if kind == "symlink":
        os.symlink("a.py", tmp_path / "b.py")
    else:
        os.link(tmp_path / "a.py", tmp_path / "b.py")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "check", "--fix", ".")
    assert code == 0, (out, err)
    assert "changed on disk" not in err
    assert "Fixed 1 finding in 1 file." in out, out
    assert (tmp_path / "a.py").read_text() == CLEAN
    assert (tmp_path / "b.py").is_symlink() is (kind == "symlink")
    assert (tmp_path / "b.py").read_text() == CLEAN
    code, out, err = run(capsys, "check", "--output-format", "concise", "a.py", "b.py")
    assert code == 0 and out.count("All checks passed!") == 1


def test_fix_of_a_file_whose_name_is_near_the_limit(capsys, tmp_path):
    """Regression: a name of 232+ characters could not be fixed: the temporary file's name overflowed 255 bytes."""
    for name in ("a" * 252 + ".py", "é" * 124 + ".py"):  # 255 bytes each
        path = tmp_path / name
        path.write_text(SEED)
        code, out, err = run(capsys, "check", "--fix", str(path))
        assert code == 0, err
        assert path.read_text() == CLEAN
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a" * 252 + ".py", "é" * 124 + ".py"])


HOSTILE_NAME = "e\x1b[2J\x07\x9bx.py"


def _hostile_tree(tmp_path):
    text = SEED.replace("(self, x, y, out):", "(self, x, y, out):  # \x1b]0;pwned\x07\x7f")
    (tmp_path / HOSTILE_NAME).write_text(text)


@pytest.mark.parametrize("fmt", ["full", "concise"])
def test_terminal_output_escapes_control_characters_of_names_and_lines(capsys, tmp_path, monkeypatch, fmt):
    _hostile_tree(tmp_path)
    os.mkfifo(tmp_path / "f\x1bifo.py")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "check", "--output-format", fmt, ".")
    assert code == 1, err
    for stream in (out, err):
        assert not any(c in stream for c in "\x1b\x07\x7f\x9b"), repr(stream)
    assert "e\\x1b[2J\\x07\\x9bx.py:8:9: BP001" in out
    assert "f\\x1bifo.py: a FIFO" in err
    if fmt == "full":
        line = next(l for l in out.splitlines() if l.startswith("8 |"))
        assert line.endswith("# \u241b]0;pwned\u2407\u2421"), line  # one column each: the carets still line up
        carets = out.splitlines()[out.splitlines().index(line) + 1]
        assert carets.index("^") == line.index("bprop")


def test_json_output_leaves_no_raw_control_character(capsys, tmp_path, monkeypatch):
    _hostile_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    for fmt in ("json", "sarif"):
        code, out, _ = run(capsys, "check", "--output-format", fmt, ".")
        assert code == 1
        assert not any(c in out for c in "\x1b\x07\x7f\x9b"), repr(out)
        data = json.loads(out)
        if fmt == "json":
            assert data[0]["filename"] == HOSTILE_NAME


def test_sarif_artifact_uris_are_percent_encoded(capsys, tmp_path, monkeypatch):
    names = {"a #1%.py": "a%20%231%25.py", "new\nline.py": "new%0Aline.py", "é.py": "%C3%A9.py",
             "sub dir/x?.py": "sub%20dir/x%3F.py", "c:d.py": "c%3Ad.py"}
    for name in names:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(SEED)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "check", "--output-format", "sarif", ".")
    assert code == 1
    (run_,) = json.loads(out)["runs"]
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run_["results"])
    assert uris == sorted(names.values())
    from urllib.parse import unquote

    assert sorted(unquote(u) for u in uris) == sorted(names)


def test_the_settings_resolver_finds_the_same_pyproject_as_find_pyproject(tmp_path):
    """The resolver asks each folder once (cli/check.py: realpath and the nearest pyproject.toml memoised along the
    parents); the answers must be find_pyproject's, through linked folders too."""
    import argparse
    from pathlib import Path

    from bprop_lsp.cli.check import SettingsResolver
    from bprop_lsp.engine.settings import find_pyproject

    (tmp_path / "proj" / "a" / "b").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("")
    (tmp_path / "proj" / "a" / "pyproject.toml").write_text("")
    (tmp_path / "other" / "deep").mkdir(parents=True)
    (tmp_path / "proj" / "a" / "b" / "link").symlink_to(tmp_path / "other" / "deep", target_is_directory=True)
    (tmp_path / "loose").mkdir()
    args = argparse.Namespace(config=None, isolated=False, **{o.attr: None for o in __import__(
        "bprop_lsp.engine.options", fromlist=["OPTIONS"]).OPTIONS if o.flag})
    resolver = SettingsResolver(args)
    folders = ["proj", "proj/a", "proj/a/b", "proj/a/b/link", "other/deep", "loose", "proj/a/b/link/../.."]
    for folder in folders * 2:  # (the second time from the memo)
        path = str(tmp_path / folder / "x.py")
        expected = find_pyproject(Path(os.path.dirname(os.path.abspath(path))).resolve())
        assert resolver.pyproject_for(path, is_file=True) == expected, folder


def test_virtual_environments_and_other_files_are_passed_over(capsys, tmp_path):
    (tmp_path / "venvish" / "lib").mkdir(parents=True)
    (tmp_path / "venvish" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "venvish" / "lib" / "m.py").write_text(SEED)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SEED)
    for name in ("data.bin", "notes.txt", "m.pyc"):
        (tmp_path / "pkg" / name).write_text(SEED)
    code, out, err = run(capsys, "check", "--output-format", "concise", "--no-cache", str(tmp_path))
    assert out.count("BP001") == 1 and "pkg" in out and "venvish" not in out
    # A walk that starts inside a virtual environment checks it (only folders below the start are passed over).
    code, out, err = run(capsys, "check", "--output-format", "concise", "--no-cache", str(tmp_path / "venvish"))
    assert out.count("BP001") == 1
