"""sources.py: which files a walk yields (regular files only, .gitignore, no recursion), how they are read
(bounded, never a FIFO or device) and how fixes are written (never through a planted link, never over a change)."""
from __future__ import annotations

import os
import stat

import pytest

from bprop_lsp import sources
from bprop_lsp.gitignore import IgnoreFile, compile_pattern, parse_lines
from bprop_lsp.sources import SourceChanged, SourceError, iter_paths, read_source, write_source

SEED = "def bprop(self, x, out):\n    return (out,)\n"


@pytest.fixture(autouse=True)
def _no_user_git_config(tmp_path_factory, monkeypatch):
    """The walk reads git's global excludes file from the user's config: not the developer's own here."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)


def walk(root, **kw):
    skipped = []
    paths = list(iter_paths([str(root)], on_skip=lambda p, why, is_error: skipped.append((p, why, is_error)), **kw))
    return [os.path.relpath(p, root) for p in paths], skipped


# ------------------------------------------------------------------------------------------------ gitignore

@pytest.mark.parametrize("pattern, path, is_dir, ignored", [
    ("*.py", "a.py", False, True),
    ("*.py", "deep/er/a.py", False, True),  # no slash: any depth
    ("/top.py", "top.py", False, True),
    ("/top.py", "sub/top.py", False, False),  # leading slash: anchored
    ("sub/x.py", "sub/x.py", False, True),
    ("sub/x.py", "a/sub/x.py", False, False),  # inner slash: anchored too
    ("build/", "build", True, True),
    ("build/", "build", False, False),  # trailing slash: directories only
    ("**/gen", "a/b/gen", True, True),
    ("**/gen", "gen", True, True),
    ("a/**/z.py", "a/z.py", False, True),
    ("a/**/z.py", "a/b/c/z.py", False, True),
    ("a/**", "a/b/c.py", False, True),
    ("a/**", "a", True, False),
    ("*", "x/y.py", False, True),
    ("x/*.py", "x/y/z.py", False, False),  # * never crosses a slash
    ("te?t.py", "test.py", False, True),
    ("te?t.py", "te/t.py", False, False),
    ("[ab].py", "b.py", False, True),
    ("[!ab].py", "b.py", False, False),
    ("[!ab].py", "c.py", False, True),
    ("\\#x.py", "#x.py", False, True),
    ("\\!x.py", "!x.py", False, True),
    ("name\\ ", "name ", False, True),
])
def test_gitignore_patterns(pattern, path, is_dir, ignored):
    compiled = compile_pattern(pattern)
    assert compiled is not None
    verdict = IgnoreFile((), (compiled,)).decide(tuple(path.split("/")), is_dir)
    assert (verdict is True) is ignored


def test_gitignore_comments_blank_lines_negation_and_last_match_wins():
    patterns = parse_lines("# comment\n\n*.py\n!keep.py\n   \n")
    assert len(patterns) == 2
    f = IgnoreFile((), patterns)
    assert f.decide(("a.py",), False) is True
    assert f.decide(("keep.py",), False) is False
    assert f.decide(("a.txt",), False) is None
    # A file's patterns are relative to its folder.
    nested = IgnoreFile(("pkg",), parse_lines("/only_here.py\n"))
    assert nested.decide(("pkg", "only_here.py"), False) is True
    assert nested.decide(("pkg", "sub", "only_here.py"), False) is None


def _tree(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_walk_respects_nested_gitignore_files_like_git(tmp_path):
    (tmp_path / ".git").mkdir()
    _tree(tmp_path, {
        ".gitignore": "generated/\n*_pb2.py\n/scratch.py\nlogs/**\n!keep_pb2.py\n",
        "a.py": "", "scratch.py": "", "x_pb2.py": "", "keep_pb2.py": "",
        "generated/g.py": "", "logs/l.py": "",
        "pkg/scratch.py": "",  # /scratch.py is anchored to the root
        "pkg/.gitignore": "local.py\n!x_pb2.py\n",  # a deeper file beats a shallower one
        "pkg/local.py": "", "pkg/x_pb2.py": "", "pkg/deep/local.py": "",
        "other/local.py": "",
    })
    found, _ = walk(tmp_path)
    assert sorted(found) == ["a.py", "keep_pb2.py", "other/local.py", "pkg/scratch.py", "pkg/x_pb2.py"]
    found, _ = walk(tmp_path, respect_gitignore=False)
    assert len(found) == 11


def test_walk_of_a_subfolder_reads_the_gitignore_files_above_it_up_to_the_repository(tmp_path):
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("excluded.py\n")
    _tree(tmp_path, {".gitignore": "pkg/gen/\nignored.py\n", "pkg/gen/g.py": "", "pkg/ignored.py": "",
                     "pkg/excluded.py": "", "pkg/ok.py": ""})
    found, _ = walk(tmp_path / "pkg")
    assert found == ["ok.py"]


def test_gitignore_outside_a_repository_is_not_read_but_dot_ignore_is(tmp_path):
    # As ruff (the ignore crate, require_git): .gitignore only means something inside a git repository.
    _tree(tmp_path, {".gitignore": "a.py\n", ".ignore": "b.py\n", "a.py": "", "b.py": "", "c.py": ""})
    found, _ = walk(tmp_path)
    assert sorted(found) == ["a.py", "c.py"]


def test_dot_ignore_beats_gitignore(tmp_path):
    (tmp_path / ".git").mkdir()
    _tree(tmp_path, {".gitignore": "*.py\n", "pkg/.ignore": "!wanted.py\n", "pkg/wanted.py": "", "pkg/other.py": ""})
    assert walk(tmp_path)[0] == ["pkg/wanted.py"]


def test_nested_repository_does_not_inherit_the_outer_gitignore(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "vendor" / "lib" / ".git").mkdir(parents=True)
    _tree(tmp_path, {".gitignore": "x.py\n", "x.py": "", "vendor/lib/x.py": ""})
    assert walk(tmp_path)[0] == ["vendor/lib/x.py"]


def test_exclude_globs_still_apply(tmp_path):
    _tree(tmp_path, {"legacy/a.py": "", "new/b.py": ""})
    assert [os.path.relpath(p, tmp_path) for p in iter_paths([str(tmp_path)], ("legacy",))] == ["new/b.py"]


# ------------------------------------------------------------------------------------------------ walking

def test_walk_yields_regular_files_only_and_says_why_others_were_skipped(tmp_path):
    _tree(tmp_path, {"ok.py": SEED, "real/target.py": SEED})
    os.mkfifo(tmp_path / "fifo.py")
    os.symlink("/dev/zero", tmp_path / "zero.py")
    os.symlink("missing.py", tmp_path / "broken.py")
    os.symlink("target.py", tmp_path / "real" / "link.py")
    os.symlink("real", tmp_path / "dirlink")
    os.symlink("loop_b.py", tmp_path / "loop_a.py")
    os.symlink("loop_a.py", tmp_path / "loop_b.py")
    found, skipped = walk(tmp_path)
    assert found == ["ok.py", "real/target.py"]  # link.py is target.py: checked once, under its own name
    reasons = {os.path.basename(p): why for p, why, _ in skipped}
    assert "FIFO" in reasons["fifo.py"]
    assert "character device (through a symbolic link)" in reasons["zero.py"]
    assert "broken symbolic link" in reasons["broken.py"]
    assert "symbolic link loop" in reasons["loop_a.py"] and "symbolic link loop" in reasons["loop_b.py"]
    assert "not followed" in reasons["dirlink"]
    assert not any(is_error for _, _, is_error in skipped)


def test_walk_survives_a_symlink_loop_to_an_ancestor(tmp_path):
    _tree(tmp_path, {"pkg/a.py": SEED})
    os.symlink("..", tmp_path / "pkg" / "up")
    os.symlink(".", tmp_path / "self")
    found, _ = walk(tmp_path)
    assert found == ["pkg/a.py"]


def test_walk_is_not_recursive(tmp_path, deep_dir):
    """1,200 nested folders: a recursive walk (os.walk on Python < 3.12) overflows the stack."""
    path = deep_dir(1200)
    with open(os.path.join(path, "deep.py"), "w") as fh:
        fh.write(SEED)
    found, _ = walk(tmp_path)
    assert found == [os.path.join(*["d"] * 1200, "deep.py")]


def test_unreadable_directory_is_reported_as_an_error(tmp_path, monkeypatch):
    _tree(tmp_path, {"locked/a.py": "", "open/b.py": ""})
    real_scandir = os.scandir

    def scandir(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(sources.os, "scandir", scandir)
    found, skipped = walk(tmp_path)
    assert found == ["open/b.py"]
    assert [(os.path.basename(p), is_error) for p, _, is_error in skipped] == [("locked", True)]
    assert "cannot read directory: Permission denied" in skipped[0][1]


def test_paths_print_without_a_leading_dot_slash(tmp_path, monkeypatch):
    _tree(tmp_path, {"pkg/a.py": "", "b.py": ""})
    monkeypatch.chdir(tmp_path)
    assert list(iter_paths(["."])) == ["b.py", "pkg/a.py"]
    assert list(iter_paths(["./pkg"])) == ["pkg/a.py"]
    assert list(iter_paths(["./b.py", "b.py"])) == ["b.py"]  # each file once


def test_named_files_are_yielded_even_when_ignored(tmp_path):
    (tmp_path / ".git").mkdir()
    _tree(tmp_path, {".gitignore": "*.py\n", "a.py": ""})
    assert walk(tmp_path)[0] == []
    assert list(iter_paths([str(tmp_path / "a.py")])) == [str(tmp_path / "a.py")]


# ------------------------------------------------------------------------------------------------ reading

def test_reading_refuses_fifos_and_devices_without_opening_them(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")  # opening it for reading would block until a writer comes
    os.symlink("/dev/zero", tmp_path / "zero.py")  # reading it would never end
    with pytest.raises(SourceError, match="FIFO, not a regular file"):
        read_source(str(tmp_path / "fifo.py"))
    with pytest.raises(SourceError, match="character device, not a regular file"):
        read_source(str(tmp_path / "zero.py"))


def test_size_limit_uses_the_opened_file_and_reads_at_most_limit_plus_one(tmp_path, monkeypatch):
    p = tmp_path / "big.py"
    p.write_bytes(b"x = 1\n" * 100)
    monkeypatch.setattr(sources, "MAX_BYTES", 50)
    with pytest.raises(SourceError, match="larger than the 50-byte limit"):
        read_source(str(p))
    # A file that grows after the fstat (here: an fstat that reports it small) is still cut at limit + 1 bytes.
    real_fstat, real_read = os.fstat, os.read
    asked = []

    def small_fstat(fd):
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 10,
                               st.st_atime, st.st_mtime, st.st_ctime))

    def counting_read(fd, n):
        asked.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(sources.os, "fstat", small_fstat)
    monkeypatch.setattr(sources.os, "read", counting_read)
    with pytest.raises(SourceError, match="larger than"):
        read_source(str(p))
    assert sum(asked) <= 51


# ------------------------------------------------------------------------------------------------ writing

def _fixed(path):
    source = read_source(str(path))
    return source, source.text.replace("(self, x, out)", "(self, x, out, dout)")


def test_write_never_follows_a_link_planted_at_the_old_temporary_name(tmp_path):
    """Regression: the temporary file was `<file>.bprop-lsp.tmp`, opened with open(..., "wb") (following links)."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    src = tmp_path / "m.py"
    src.write_text(SEED)
    os.symlink(victim, tmp_path / "m.py.bprop-lsp.tmp")
    source, new = _fixed(src)
    write_source(source, new)
    assert victim.read_text() == "precious\n"
    assert not src.is_symlink() and src.read_text() == new
    assert os.readlink(tmp_path / "m.py.bprop-lsp.tmp") == str(victim)  # not ours: left alone


def test_write_keeps_mode_and_owner(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SEED)
    os.chmod(src, 0o640)
    if os.geteuid() == 0:
        os.chown(src, 12345, 23456)
    source, new = _fixed(src)
    write_source(source, new)
    st = os.stat(src)
    assert stat.S_IMODE(st.st_mode) == 0o640 and src.read_text() == new
    if os.geteuid() == 0:
        assert (st.st_uid, st.st_gid) == (12345, 23456)
    assert sorted(os.listdir(tmp_path)) == ["m.py"]


def test_write_through_a_symlink_fixes_the_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "m.py"
    target.write_text(SEED)
    link = tmp_path / "m.py"
    os.symlink(target, link)
    source, new = _fixed(link)
    write_source(source, new)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == new
    assert sorted(os.listdir(tmp_path / "real")) == ["m.py"]


def test_write_keeps_hard_links(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SEED)
    other = tmp_path / "other.py"
    os.link(src, other)
    source, new = _fixed(src)
    write_source(source, new)
    assert other.read_text() == new and os.stat(src).st_ino == os.stat(other).st_ino
    assert sorted(os.listdir(tmp_path)) == ["m.py", "other.py"]


def test_write_refuses_a_read_only_file(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SEED)
    os.chmod(src, 0o444)
    source, new = _fixed(src)
    with pytest.raises(SourceError, match="read-only file; not fixed"):
        write_source(source, new)
    assert src.read_text() == SEED and sorted(os.listdir(tmp_path)) == ["m.py"]


def test_write_leaves_a_file_that_changed_since_it_was_read(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(SEED)
    source, new = _fixed(src)
    src.write_text(SEED + "# saved by the editor meanwhile\n")
    with pytest.raises(SourceChanged, match="changed on disk during the run"):
        write_source(source, new)
    assert src.read_text().endswith("meanwhile\n") and sorted(os.listdir(tmp_path)) == ["m.py"]
    # The same holds on the in-place path (hard-linked files).
    os.link(src, tmp_path / "twin.py")
    with pytest.raises(SourceChanged):
        write_source(source, new)
    assert src.read_text().endswith("meanwhile\n")


def test_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    src = tmp_path / "m.py"
    src.write_text(SEED)
    source, new = _fixed(src)

    def failing_replace(a, b):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sources.os, "replace", failing_replace)
    with pytest.raises(SourceError, match="No space left on device"):
        write_source(source, new)
    assert src.read_text() == SEED and sorted(os.listdir(tmp_path)) == ["m.py"]


def test_write_keeps_encoding_and_bom(tmp_path):
    src = tmp_path / "m.py"
    src.write_bytes(b"\xef\xbb\xbf" + SEED.encode())
    source, new = _fixed(src)
    write_source(source, new)
    assert src.read_bytes() == b"\xef\xbb\xbf" + new.encode()


# ------------------------------------------------------------------------------------------------ gitignore engines

from hypothesis import given, settings, strategies as st  # noqa: E402

_PATTERN_BITS = st.sampled_from(["a", "b", "é", "/", "*", "**", "?", "[a-b]", "[!a]", "[z-a]", "\\*", ".py", "!"])
_NAME_BITS = st.sampled_from(["a", "b", "é", "z", "*", ".py", "/"])


def _naive(patterns, parts, is_dir):
    rel = "/".join(parts).encode()
    for pattern in reversed(patterns):
        if not (pattern.dir_only and not is_dir) and pattern.matches(rel, rel.rpartition(b"/")[2]):
            return not pattern.negated
    return None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_PATTERN_BITS, min_size=1, max_size=6).map("".join), min_size=1, max_size=6),
       st.lists(st.lists(_NAME_BITS, min_size=1, max_size=6).map("".join), min_size=1, max_size=8),
       st.booleans())
def test_gitignore_engines_agree(lines, names, is_dir):
    """One regular expression per ignore file (the last matching line's alternative wins), one per pattern, and
    the bit-parallel matcher give the same answers."""
    from bprop_lsp import gitignore

    fast = parse_lines("\n".join(lines))
    old = gitignore.MAX_REGEX_STARS
    gitignore.MAX_REGEX_STARS = -1
    try:
        bits = parse_lines("\n".join(lines))
    finally:
        gitignore.MAX_REGEX_STARS = old
    assert all(p.regex is None for p in bits)
    for name in names:
        parts = tuple(p for p in name.split("/") if p) or ("x",)
        expected = _naive(fast, parts, is_dir)
        assert IgnoreFile((), fast).decide(parts, is_dir) is expected
        assert IgnoreFile((), bits).decide(parts, is_dir) is expected
        assert _naive(bits, parts, is_dir) is expected


def test_a_pattern_with_many_stars_takes_linear_time(tmp_path):
    """A backtracking regular expression for `*a*a*a*a*a*a*a*a*b` tries C(n, 8) splits of a long name that
    almost matches: a hostile tree could stall the walk (and the server's workspace scan) for hours."""
    import subprocess
    import sys

    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*a*a*b.py\n")
    (tmp_path / ("a" * 200 + ".py")).write_text("")
    code = (f"from bprop_lsp.sources import iter_paths; import sys; "
            f"sys.exit(len(list(iter_paths([{str(tmp_path)!r}]))) != 1)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)


def test_an_entry_that_turns_regular_between_listing_and_stat_is_yielded(tmp_path, monkeypatch):
    """A listing said "not a regular file" (d_type unknown or the entry replaced meanwhile), its stat says regular:
    the walk yields it (it raised NameError once the walk kept each file's identity)."""
    _tree(tmp_path, {"a.py": SEED})
    real_scandir = os.scandir

    class Entry:
        def __init__(self, entry):
            self._entry, self.name, self.path = entry, entry.name, entry.path

        def is_dir(self, follow_symlinks=True):
            return self._entry.is_dir(follow_symlinks=follow_symlinks)

        def is_file(self, follow_symlinks=True):
            return False

        def is_symlink(self):
            return False

        def stat(self, follow_symlinks=True):
            return self._entry.stat(follow_symlinks=follow_symlinks)

        def inode(self):
            return self._entry.inode()

    class Listing:
        def __init__(self, path):
            self._it = real_scandir(path)

        def __enter__(self):
            return (Entry(e) for e in self._it)

        def __exit__(self, *exc):
            self._it.close()

    monkeypatch.setattr(sources.os, "scandir", Listing)
    assert walk(tmp_path)[0] == ["a.py"]
