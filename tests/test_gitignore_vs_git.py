"""The walk's gitignore matcher against git itself: for each pattern of a table of awkward ones (reversed ranges,
unclosed ``[``, ``?`` against multibyte names, ``**``, negation, trailing spaces, escapes, directory-only patterns,
POSIX classes), the files ``git ls-files --others --exclude-standard`` lists are the files the walk yields, through
both of the matcher's engines (regular expressions, and the bit-parallel one for patterns with many ``*``).

git is run only from a fixed path, with HOME and XDG_CONFIG_HOME in a temporary folder and no system config."""
from __future__ import annotations

import os
import subprocess

import pytest

from bprop_lsp import gitignore
from bprop_lsp.sources import iter_paths

GIT = next((p for p in ("/usr/bin/git", "/usr/local/bin/git", "/opt/homebrew/bin/git") if os.access(p, os.X_OK)), None)
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed at a fixed path (/usr/bin/git, ...)")

# (the .gitignore's text, the files of the tree)
CASES = [
    ('x[a-D].py\n', ['xb.py', 'xB.py', 'xa.py', 'y.py']),
    ('[z-a].py\n', ['a.py', 'z.py', 'm.py']),
    ('[!z-a].py\n', ['a.py', 'z.py', 'ab.py']),
    ('[z-ab].py\n', ['a.py', 'b.py', 'z.py']),
    ('a[bc.py\n', ['a[bc.py', 'ab.py', 'abc.py']),
    ('a[.py\n', ['a[.py', 'a.py']),
    ('?.py\n', ['a.py', 'é.py', 'ab.py']),
    ('??.py\n', ['é.py', 'ab.py', 'a.py']),
    ('[é].py\n', ['é.py', 'e.py']),
    ('[!a].py\n', ['é.py', 'a.py', 'b.py']),
    ('**/foo.py\n', ['foo.py', 'a/foo.py', 'a/b/foo.py']),
    ('a/**/b.py\n', ['a/b.py', 'a/x/b.py', 'a/x/y/b.py', 'b.py']),
    ('a/**\n', ['a/b.py', 'a/x/b.py', 'ab.py']),
    ('**\n!*.py\n', ['a.py', 'd/a.py']),
    ('*.py\n!keep.py\n', ['a.py', 'keep.py', 'd/keep.py']),
    ('d/\n!d/keep.py\n', ['d/keep.py', 'd/a.py', 'e.py']),
    ('d/*\n!d/keep.py\n', ['d/keep.py', 'd/a.py']),
    ('a.py \n', ['a.py', 'a.py ']),
    ('a.py\\ \n', ['a.py', 'a.py ']),
    ('\\#a.py\n', ['#a.py', 'a.py']),
    ('#a.py\n', ['#a.py']),
    ('\\!a.py\n', ['!a.py', 'a.py']),
    ('d/\n', ['d/a.py', 'x/d/a.py', 'd.py']),
    ('/d/\n', ['d/a.py', 'x/d/a.py']),
    ('d\n', ['d/a.py', 'x/d/a.py', 'd.py']),
    ('x/d\n', ['x/d/a.py', 'y/x/d/a.py']),
    ('*.py/\n', ['a.py', 'b.py/c.py']),
    ('[[:alpha:]].py\n', ['a.py', '1.py', 'ab.py']),
    ('[[:digit:]x].py\n', ['1.py', 'x.py', 'a.py']),
    ('[[:nope:]].py\n', ['a.py', '[.py', ':.py']),
    ('[\\]].py\n', ['].py', '\\.py']),
    ('[a\\-z].py\n', ['-.py', 'b.py', 'a.py']),
    ('[]a].py\n', ['].py', 'a.py']),
    ('[!]a].py\n', ['].py', 'b.py']),
    ('a\\\n', ['a\\', 'a.py']),
    ('*\\\\.py\n', ['a\\.py', 'a.py']),
    ('a*b*.py\n', ['ab.py', 'axxbyy.py', 'a/b.py']),
    ('***.py\n', ['a.py', 'd/a.py']),
    ('a/***/b.py\n', ['a/b.py', 'a/x/b.py']),
    ('/**/c.py\n', ['c.py', 'x/c.py']),
    ('foo**.py\n', ['foo.py', 'fooxx.py', 'foo/x.py']),
    ('!\n', ['a.py']),
    ('/\n', ['a.py']),
    ('\\\n', ['a.py']),
    ('  a.py\n', ['a.py', '  a.py']),
    ('a.py\r\n', ['a.py']),
    ('A.py\n', ['a.py', 'A.py']),
    ('d/**/\n', ['d/a.py', 'd/e/a.py']),
    ('**/d/\n', ['d/a.py', 'x/d/a.py']),
    ('[a-]\n', ['a', '-', 'b']),
    ('[a-].py\n', ['a.py', '-.py', 'b.py']),
    ('[-a].py\n', ['a.py', '-.py', 'b.py']),
    ('[!-].py\n', ['a.py', '-.py']),
    ('[^a].py\n', ['a.py', 'b.py']),
    ('x[\n', ['x[', 'x']),
    ('x[]\n', ['x[]', 'x']),
    ('*[/]b.py\n', ['a/b.py', 'ab.py']),
    ('a?b.py\n', ['a/b.py', 'axb.py']),
    ('ab**/c.py\n', ['ab/c.py', 'abx/y/c.py', 'abx/c.py', 'c.py']),
    ('a?**/c.py\n', ['ab/c.py', 'abx/y/c.py', 'abx/c.py']),
    ('*a*a*a*b.py\n', ['aaab.py', 'xaxaxab.py', 'aab.py']),
    ('**/a/**/b/**/c.py\n', ['a/b/c.py', 'x/a/y/b/z/c.py', 'a/c.py']),
    ('[a-c-e].py\n', ['b.py', '-.py', 'd.py', 'e.py']),
    ('[[:x].py\n', ['[.py', ':.py', 'x.py', 'a.py']),
    ('[[:].py\n', ['[.py', ':.py']),
    ('[[::]].py\n', ['[.py', ':.py']),
    ('[[:space:]]a.py\n', [' a.py', 'xa.py']),
    ('d/*/\n', ['d/e/a.py', 'd/a.py']),
    ('*/\n', ['d/a.py', 'a.py']),
    ('\\*.py\n', ['*.py', 'a.py']),
    ('a.py\\\\ \n', ['a.py\\', 'a.py']),
    ('a.py\\  \n', ['a.py ', 'a.py  ']),
    ('\ufeffa.py\n', ['a.py'])
]


@pytest.fixture
def isolated_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1",
           "PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    return env


def _repo(root, files: dict[str, str], env) -> None:
    subprocess.run([GIT, "init", "-q", str(root)], env=env, check=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="", encoding="utf-8") as fh:
            fh.write(text)


def git_lists(root, env) -> list[str]:
    out = subprocess.run([GIT, "ls-files", "--others", "--exclude-standard", "-z"], cwd=root, env=env,
                         capture_output=True, check=True).stdout
    return sorted(p for p in out.decode("utf-8", "surrogateescape").split("\0") if p.endswith((".py", ".pyi")))


def walk_lists(root) -> list[str]:
    return sorted(os.path.relpath(p, root) for p in iter_paths([str(root)]))


@pytest.mark.parametrize("engine", ["regex", "bits"])
@pytest.mark.parametrize("text, names", CASES, ids=[repr(t) for t, _ in CASES])
def test_walk_ignores_what_git_ignores(tmp_path, isolated_home, monkeypatch, engine, text, names):
    if engine == "bits":
        monkeypatch.setattr(gitignore, "MAX_REGEX_STARS", -1)
    root = tmp_path / "repo"
    _repo(root, {".gitignore": text, **{name: "" for name in names}}, isolated_home)
    assert walk_lists(root) == git_lists(root, isolated_home)


def test_precedence_of_nested_files_info_exclude_and_global_excludes_is_gits(tmp_path, isolated_home):
    root = tmp_path / "repo"
    excludes = tmp_path / "home" / "my-excludes"
    excludes.write_text("*_global.py\n!kept_global.py\nlocal_*.py\n")
    (tmp_path / "home" / ".gitconfig").write_text(f"[core]\n\texcludesFile = {excludes}\n")
    _repo(root, {
        ".gitignore": "!local_kept.py\n*_info.py\n",
        "sub/.gitignore": "!x_info.py\nkept_global.py\n",
        "a_global.py": "", "kept_global.py": "", "sub/kept_global.py": "", "local_x.py": "", "local_kept.py": "",
        "x_info.py": "", "sub/x_info.py": "", "info_only.py": "", "ok.py": "",
    }, isolated_home)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("info_only.py\n!a_global.py\n")
    assert walk_lists(root) == git_lists(root, isolated_home)
    assert "ok.py" in walk_lists(root) and "a_global.py" in walk_lists(root)


@pytest.mark.parametrize("where", ["xdg", "home-default"])
def test_default_global_excludes_file_is_gits(tmp_path, isolated_home, monkeypatch, where):
    if where == "home-default":
        monkeypatch.delenv("XDG_CONFIG_HOME")
        isolated_home = {k: v for k, v in isolated_home.items() if k != "XDG_CONFIG_HOME"}
    ignore = tmp_path / "home" / ".config" / "git" / "ignore"
    ignore.parent.mkdir(parents=True)
    ignore.write_text("scratch_*.py\n")
    root = tmp_path / "repo"
    _repo(root, {"scratch_1.py": "", "ok.py": ""}, isolated_home)
    assert walk_lists(root) == git_lists(root, isolated_home) == ["ok.py"]


CONFIGS = [
    "[core]\n\texcludesFile = /x/plain\n",
    "[Core]\n  ExcludesFile=/x/case # a comment\n",
    '[core]\n\texcludesfile = "/x/with space" ; comment\n',
    '[core]\n\texcludesfile = /x/a\\\n/b\n',
    '[core]\n\texcludesfile = "/x/esc\\"aped\\\\"\n',
    "[core \"sub\"]\n\texcludesfile = /x/sub\n[core]\nexcludesfile = /x/after-sub\n",
    "[core]\n\texcludesfile = /x/first\n[user]\n\texcludesfile = /x/user\n[core]\n\texcludesfile = /x/last\n",
    "[core.sub]\n\texcludesfile = /x/dotted\n",
    "[core] excludesfile = /x/same-line\n",
    "# only a comment\n[core]\n\tautocrlf = false\n",
    "[core]\n\texcludesfile = /x/trailing   \t\n",
]


@pytest.mark.parametrize("text", CONFIGS)
def test_core_excludes_file_is_read_from_config_files_as_git_reads_it(tmp_path, isolated_home, text):
    path = tmp_path / "config"
    path.write_text(text)
    proc = subprocess.run([GIT, "config", "--file", str(path), "--get", "core.excludesfile"], env=isolated_home,
                          capture_output=True, text=True)
    git_value = proc.stdout[:-1] if proc.returncode == 0 else None
    assert gitignore._config_value(str(path), "core", "excludesfile") == git_value


def test_a_core_excludes_file_without_a_value_is_no_path(tmp_path):
    # (git itself stops: "missing value for 'core.excludesfile'"; the walk uses the default file.)
    path = tmp_path / "config"
    path.write_text("[core]\n\texcludesfile\n")
    assert gitignore._config_value(str(path), "core", "excludesfile") is None


@pytest.mark.parametrize("text", ["?.py\n", "??.py\n", "[!a].py\n", "[\x80-\xff].py\n", "*\xff*.py\n"])
def test_names_that_are_not_utf8_are_matched_byte_by_byte_as_git_does(tmp_path, isolated_home, text):
    root = tmp_path / "repo"
    _repo(root, {}, isolated_home)
    with open(root / ".gitignore", "wb") as fh:
        fh.write(text.encode("latin-1"))
    for name in (b"\xff.py", b"\xe9\xe9.py", b"a.py", b"\xc3\xa9.py"):
        with open(os.path.join(os.fsencode(root), name), "wb"):
            pass
    out = subprocess.run([GIT, "ls-files", "--others", "--exclude-standard", "-z"], cwd=root, env=isolated_home,
                         capture_output=True, check=True).stdout
    expected = sorted(os.fsdecode(p) for p in out.split(b"\0") if p.endswith(b".py"))
    assert walk_lists(root) == expected
