""".pre-commit-hooks.yaml: each hook's entry, run on a temporary git repository as pre-commit would run it.

pre-commit runs `shlex.split(entry) + args + <staged files matching types>` inside the hook's environment (for
`language: python`, a virtualenv with this package installed: here, the venv running the tests). When the
`pre-commit` tool itself is installed, `pre-commit try-repo` against this checkout is exercised too.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOKS_FILE = ROOT / ".pre-commit-hooks.yaml"

# The seed program (bprop lacks dout), shared by the test suites: tests/fixtures/seed_muladd.py.
SEED = (Path(__file__).resolve().parents[0] / "fixtures" / "seed_muladd.py").read_text(encoding="utf-8")
SEED_FIXED = SEED.replace("def bprop(self, x, y, out):", "def bprop(self, x, y, out, dout):")
CLEAN = "def bprop_helper(x):\n    return x\n"


def load_hooks() -> dict[str, dict]:
    """The hook definitions. A small reader for this file's flat shape (PyYAML is no dependency); checked
    against PyYAML when it happens to be installed."""
    hooks: list[dict] = []
    for raw in HOOKS_FILE.read_text().splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        m = re.fullmatch(r"(- |  )([a-z_]+): (.*)", line)
        assert m, f"unexpected line in {HOOKS_FILE.name}: {raw!r}"
        if m.group(1) == "- ":
            hooks.append({})
        key, value = m.group(2), m.group(3)
        if value.startswith("["):
            hooks[-1][key] = [v.strip() for v in value.strip("[]").split(",") if v.strip()]
        else:
            hooks[-1][key] = value
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        pass
    else:
        assert yaml.safe_load(HOOKS_FILE.read_text()) == hooks
    return {h["id"]: h for h in hooks}


def test_hook_definitions() -> None:
    hooks = load_hooks()
    assert set(hooks) == {"bprop-lsp", "bprop-lsp-fix"}
    for h in hooks.values():
        assert h["language"] == "python"
        assert h["types"] == ["python"]
        assert h["name"] and h["description"]
    # --force-exclude: pre-commit names every staged file, and the project's `exclude` must still apply
    assert shlex.split(hooks["bprop-lsp"]["entry"]) == ["bprop-lsp", "check", "--force-exclude"]
    assert shlex.split(hooks["bprop-lsp-fix"]["entry"]) == ["bprop-lsp", "check", "--force-exclude", "--fix"]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, timeout=60,
                          env=_git_env()).stdout


def _git_env() -> dict[str, str]:
    return dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
                GIT_COMMITTER_EMAIL="t@example.invalid", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "muladd.py").write_text(SEED)
    (repo / "pkg" / "clean.py").write_text(CLEAN)
    (repo / "notes.txt").write_text(SEED)  # not Python: a `types: [python]` hook never sees it
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    return repo


def _run_hook(hook: dict, repo: Path) -> subprocess.CompletedProcess:
    """What pre-commit does for a `language: python` hook: entry + args + the staged files of the hook's types,
    with the hook environment's bin directory first on PATH."""
    staged = _git(repo, "diff", "--cached", "--name-only", "-z").split("\0")
    files = sorted(f for f in staged if f.endswith((".py", ".pyi")))
    argv = shlex.split(hook["entry"]) + hook.get("args", []) + files
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120)


def test_check_hook_reports_and_changes_nothing(repo: Path) -> None:
    p = _run_hook(load_hooks()["bprop-lsp"], repo)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "pkg/muladd.py:5:9: BP001" in p.stdout
    assert "notes.txt" not in p.stdout
    assert (repo / "pkg" / "muladd.py").read_text() == SEED
    assert (repo / "notes.txt").read_text() == SEED


@pytest.mark.parametrize("hook", ["bprop-lsp", "bprop-lsp-fix"])
def test_hooks_respect_exclude(repo: Path, hook: str) -> None:
    """(issue 24, item 3) pre-commit names the files; `exclude` in pyproject.toml still leaves them out."""
    (repo / "pyproject.toml").write_text('[tool.bprop-lsp]\nexclude = ["pkg/muladd.py"]\n')
    _git(repo, "add", ".")
    p = _run_hook(load_hooks()[hook], repo)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "muladd" not in p.stdout
    assert (repo / "pkg" / "muladd.py").read_text() == SEED


def test_fix_hook_fixes_the_file(repo: Path) -> None:
    hooks = load_hooks()
    p = _run_hook(hooks["bprop-lsp-fix"], repo)
    assert p.returncode == 0, p.stdout + p.stderr  # nothing left; pre-commit fails the run because files changed
    assert (repo / "pkg" / "muladd.py").read_bytes() == SEED_FIXED.encode()
    assert (repo / "pkg" / "clean.py").read_text() == CLEAN
    assert (repo / "notes.txt").read_text() == SEED
    _git(repo, "add", ".")
    again = _run_hook(hooks["bprop-lsp"], repo)
    assert again.returncode == 0, again.stdout + again.stderr


def _pre_commit() -> list[str] | None:
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        exe = shutil.which("pre-commit")
        return [exe] if exe else None
    return [sys.executable, "-m", "pre_commit"]


def test_pre_commit_try_repo(repo: Path, tmp_path: Path) -> None:
    """The real tool: pre-commit builds the hook's virtualenv from this checkout (pip install from PyPI)."""
    pc = _pre_commit()
    if pc is None:
        pytest.skip("the pre-commit tool is not installed (pip install pre-commit)")
    env = dict(_git_env(), PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    env.pop("GIT_CONFIG_GLOBAL")  # pre-commit's own git calls need no identity
    p = subprocess.run([*pc, "try-repo", str(ROOT), "bprop-lsp", "--all-files"], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 1 and "pkg/muladd.py:5:9: BP001" in p.stdout, p.stdout + p.stderr
    p = subprocess.run([*pc, "try-repo", str(ROOT), "bprop-lsp-fix", "--all-files"], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 1 and "files were modified by this hook" in p.stdout, p.stdout + p.stderr
    assert (repo / "pkg" / "muladd.py").read_bytes() == SEED_FIXED.encode()
    assert (repo / "notes.txt").read_text() == SEED
