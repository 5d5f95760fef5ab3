"""``bprop-lsp check``'s persistent result cache (cli/cache.py): what it replays, when it does not, and that a
hostile or broken cache folder changes nothing but speed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bprop_lsp.cli import cache as cache_mod
from bprop_lsp.cli import jobs
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
# A finding whose only fix is unsafe (BP025, None as a gradient) and one with no fix, beside the safe one.
NONE_GRAD = (
    "from mindspore import nn, ops\n\n\n"
    "class Gate(nn.Cell):\n"
    "    def construct(self, x, y):\n"
    "        return x * y\n\n"
    "    def bprop(self, x, y, out, dout):\n"
    "        return dout * y, None\n"
)
SYNTAX = "from mindspore import nn\nclass A(nn.Cell):\n    def bprop(self, x, out):\n        return (out,\n"


@pytest.fixture(autouse=True)
def _default_cache_location(monkeypatch):
    """(conftest.py points every other test's cache elsewhere: these test where it goes by default.)"""
    monkeypatch.delenv(cache_mod.ENV_VAR, raising=False)


@pytest.fixture(params=["hashed", "by-stat"])
def tree(request, tmp_path, monkeypatch):
    """The project; every test runs twice: with files too young to be trusted by their stat (as files written a
    moment ago are: each is read and hashed), and with the racy window shut (``RACY_NS = 0``: a file written
    before the run is known by its stat, as a checkout's files are)."""
    if request.param == "by-stat":
        monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(cache_mod.ENV_VAR, raising=False)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "seed.py").write_text(SEED)
    (pkg / "gate.py").write_text(NONE_GRAD)
    (pkg / "broken.py").write_text(SYNTAX)
    (pkg / "plain.py").write_text("x = 1\n")
    return tmp_path


@pytest.fixture
def analyses(monkeypatch):
    """The paths the engine analysed (in this process: -j 1)."""
    seen: list[str] = []
    real = jobs.analyze

    def counting(text, settings, **kw):
        seen.append(text)
        return real(text, settings, **kw)

    monkeypatch.setattr(jobs, "analyze", counting)
    return seen


@pytest.fixture
def reads(monkeypatch):
    """The source files read (by their path), through the one function every read of a source goes through."""
    from bprop_lsp import sources

    seen: list[str] = []
    real = sources._read_regular

    def counting(path, limit, stat_out=None):
        seen.append(os.path.basename(path))
        return real(path, limit, stat_out)

    monkeypatch.setattr(sources, "_read_regular", counting)
    return seen


def index(folder: Path) -> dict:
    return json.loads((folder / f"v{cache_mod.SCHEMA}" / cache_mod.INDEX_NAME).read_text())["files"]


def run(capsys, *argv):
    code = main(["check", "-j", "1", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def entries(folder: Path) -> list[Path]:
    return sorted((folder / f"v{cache_mod.SCHEMA}").glob("*.json"))


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "sarif", "github"])
def test_a_second_run_replays_the_first_without_analysing(capsys, tree, analyses, fmt):
    first = run(capsys, "--output-format", fmt, "pkg")
    assert first[0] == 1 and analyses, first
    analyses.clear()
    second = run(capsys, "--output-format", fmt, "pkg")
    assert analyses == []
    assert second == first
    assert "syntax error" in first[2]  # the per-file warning is replayed too


def test_the_folder_is_marked_and_ignored(capsys, tree):
    run(capsys, "pkg")
    folder = tree / cache_mod.DIR_NAME
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert "*" in (folder / ".gitignore").read_text().split()
    assert len(entries(folder)) == 3  # the three files with bprop; plain.py never reaches the engine


def test_a_tree_without_bprop_makes_no_cache_folder(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")
    assert run(capsys, ".")[0] == 0
    assert not (tmp_path / cache_mod.DIR_NAME).exists()


def test_files_without_bprop_are_recorded_once_the_folder_exists(capsys, tmp_path, monkeypatch, reads):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    (tmp_path / "a.py").write_text("x = 1\n")
    run(capsys, "a.py")
    assert not (tmp_path / cache_mod.DIR_NAME).exists()  # (still made only for a file with bprop)
    (tmp_path / "b.py").write_text(CLEAN)
    run(capsys, ".")
    reads.clear()
    run(capsys, "a.py")
    assert reads == []  # recorded by the run that made the folder
    (tmp_path / "c.py").write_text("y = 2\n")
    run(capsys, "c.py")  # no file with bprop in this run: the folder there is used all the same
    reads.clear()
    run(capsys, "c.py")
    assert reads == []


def test_an_edited_file_is_analysed_again(capsys, tree, analyses):
    run(capsys, "pkg")
    analyses.clear()
    (tree / "pkg" / "seed.py").write_text(CLEAN)
    code, out, _ = run(capsys, "--output-format", "concise", "pkg")
    assert analyses == [CLEAN]
    assert "seed.py" not in out and "gate.py" in out


def test_other_settings_are_other_entries(capsys, tree, analyses):
    run(capsys, "pkg")
    analyses.clear()
    code, out, _ = run(capsys, "--select", "BP025", "--output-format", "concise", "pkg")
    assert len(analyses) == 3 and "BP001" not in out and "BP025" in out
    analyses.clear()
    code, out, _ = run(capsys, "--output-format", "concise", "pkg")
    assert analyses == [] and "BP001" in out


def test_new_checker_code_is_a_new_cache(capsys, tree, analyses, monkeypatch):
    run(capsys, "pkg")
    analyses.clear()
    monkeypatch.setattr(cache_mod, "code_fingerprint", lambda: "another build")
    run(capsys, "pkg")
    assert len(analyses) == 3


def test_the_fingerprint_follows_the_package_files(tmp_path, monkeypatch):
    before = cache_mod.code_fingerprint()
    assert cache_mod.code_fingerprint() == before
    target = Path(cache_mod.__file__)
    st = os.stat(target)
    try:
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert cache_mod.code_fingerprint() != before
    finally:
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_no_cache_and_cache_dir_and_the_environment(capsys, tree, analyses, monkeypatch, tmp_path_factory):
    run(capsys, "--no-cache", "pkg")
    assert not (tree / cache_mod.DIR_NAME).exists()
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "c"
    run(capsys, "--cache-dir", str(elsewhere), "pkg")
    assert len(entries(elsewhere)) == 3 and not (tree / cache_mod.DIR_NAME).exists()
    from_env = tmp_path_factory.mktemp("env") / "c"
    monkeypatch.setenv(cache_mod.ENV_VAR, str(from_env))
    analyses.clear()
    run(capsys, "pkg")
    assert len(entries(from_env)) == 3 and len(analyses) == 3
    analyses.clear()
    run(capsys, "--no-cache", "pkg")
    assert len(analyses) == 3  # --no-cache reads nothing either


def test_the_project_root_is_the_nearest_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert cache_mod.default_directory(deep) == tmp_path / cache_mod.DIR_NAME


@pytest.mark.parametrize("junk", [b"", b"not json", b"[1, 2]", b'{"schema": 99}', b"\xff\xfe",
                                  b'{"schema": 1, "content": "x", "depends": [], "messages": [], "findings": []}',
                                  b"[" * 100000])
def test_a_corrupt_or_foreign_entry_is_ignored_and_rewritten(capsys, tree, analyses, junk):
    first = run(capsys, "pkg")
    folder = tree / cache_mod.DIR_NAME
    for entry in entries(folder):
        entry.write_bytes(junk)
    analyses.clear()
    assert run(capsys, "pkg") == first
    assert len(analyses) == 3
    for entry in entries(folder):
        assert json.loads(entry.read_text())["schema"] == cache_mod.SCHEMA


def test_an_entry_with_the_right_hash_but_wrong_shapes_is_ignored(capsys, tree, analyses):
    first = run(capsys, "pkg")
    folder = tree / cache_mod.DIR_NAME
    for entry in entries(folder):
        data = json.loads(entry.read_text())
        if data["findings"]:
            data["findings"][0]["span"] = [1, 2, "x", 4]
            entry.write_text(json.dumps(data))
    analyses.clear()
    assert run(capsys, "pkg") == first
    assert len(analyses) == 2  # seed.py and gate.py have findings; broken.py's entry (no findings) still served


def test_a_linked_cache_folder_is_not_used(capsys, tree, analyses, tmp_path_factory):
    target = tmp_path_factory.mktemp("target")
    (tree / cache_mod.DIR_NAME).symlink_to(target, target_is_directory=True)
    first = run(capsys, "pkg")
    assert first[0] == 1 and "running without a cache" in first[2]
    assert list(target.iterdir()) == []
    analyses.clear()
    assert run(capsys, "pkg")[0] == 1 and len(analyses) == 3


def test_an_entry_that_is_a_link_is_replaced_not_followed(capsys, tree, tmp_path_factory):
    first = run(capsys, "pkg")
    outside = tmp_path_factory.mktemp("outside") / "precious.txt"
    outside.write_text("keep me\n")
    for entry in entries(tree / cache_mod.DIR_NAME):
        entry.unlink()
        entry.symlink_to(outside)
    assert run(capsys, "pkg") == first
    assert outside.read_text() == "keep me\n"
    for entry in entries(tree / cache_mod.DIR_NAME):
        assert not entry.is_symlink()


def test_an_entry_that_is_a_fifo_does_not_hang(capsys, tree):
    first = run(capsys, "pkg")
    for entry in entries(tree / cache_mod.DIR_NAME):
        entry.unlink()
        os.mkfifo(entry)
    assert run(capsys, "pkg") == first


def test_an_unusable_cache_folder_warns_once_and_checks_all_the_same(capsys, tree):
    (tree / "file").write_text("")
    code, out, err = run(capsys, "--cache-dir", str(tree / "file" / "sub"), "pkg")
    assert code == 1 and "BP001" in out
    assert err.count("running without a cache") == 1


def test_fix_applies_fixes_a_cached_result_shows(capsys, tree, analyses):
    run(capsys, "pkg")
    code, out, _ = run(capsys, "--fix", "pkg")
    assert (tree / "pkg" / "seed.py").read_text() == CLEAN
    assert "Fixed 1 finding" in out
    analyses.clear()
    code, out, _ = run(capsys, "--output-format", "concise", "pkg")
    assert "seed.py" not in out  # the fixed text is checked anew, not the stale entry replayed
    assert analyses == [CLEAN]


def test_diff_and_unsafe_fixes_from_a_warm_cache(capsys, tree):
    run(capsys, "pkg")
    code, out, _ = run(capsys, "--diff", "--unsafe-fixes", "pkg")
    assert code == 1 and "+    def bprop(self, x, y, out, dout):" in out and "ops.zeros_like(y)" in out
    assert (tree / "pkg" / "seed.py").read_text() == SEED  # --diff writes nothing


def test_files_without_fixes_are_served_from_the_cache_under_fix(capsys, tree, analyses):
    run(capsys, "pkg")
    analyses.clear()
    run(capsys, "--fix", "pkg")
    # seed.py has a safe fix (re-run); gate.py's only fix is unsafe and broken.py has none: both replayed.
    assert SEED in analyses and NONE_GRAD not in analyses and SYNTAX not in analyses


def test_concurrent_runs_agree_and_leave_whole_entries(tree):
    for i in range(12):
        (tree / "pkg" / f"copy{i}.py").write_text(SEED.replace("MulAdd", f"MulAdd{i}"))
    cmd = [sys.executable, "-m", "bprop_lsp", "check", "--output-format", "concise", "pkg"]
    env = {k: v for k, v in os.environ.items() if k != cache_mod.ENV_VAR}
    procs = [subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [1] * 4
    assert len({o for o, _ in outs}) == 1
    warm = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=120)
    assert warm.stdout == outs[0][0]
    folder = tree / cache_mod.DIR_NAME
    assert len(entries(folder)) == 15
    for entry in entries(folder):
        json.loads(entry.read_text())
    assert not [p for p in (folder / f"v{cache_mod.SCHEMA}").iterdir() if p.name.endswith(".tmp")]


def test_findings_survive_the_json_round_trip(tree):
    from bprop_lsp import checker

    for text in (SEED, NONE_GRAD):
        for f in checker.analyze(text).findings:
            assert cache_mod.decode_finding(json.loads(json.dumps(cache_mod.encode_finding(f)))) == f


# -- the stat index (files.index) -----------------------------------------------------------------------------

QUIET = CLEAN  # a bprop file without findings: replayed from its stat alone
# The same number of bytes, one finding (BP014: the last parameters named (dout, out)).
SWAPPED = CLEAN.replace("out, dout):", "dout, out):")
assert len(SWAPPED) == len(QUIET) and SWAPPED != QUIET


@pytest.fixture
def trusted(tree, monkeypatch):
    """The tree with the racy window shut, plus a bprop file without findings."""
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    (tree / "pkg" / "quiet.py").write_text(QUIET)
    return tree


def test_an_unchanged_file_is_not_even_read(capsys, trusted, analyses, reads):
    first = run(capsys, "pkg")
    assert sorted(reads) == ["broken.py", "gate.py", "plain.py", "quiet.py", "seed.py"]
    reads.clear()
    analyses.clear()
    assert run(capsys, "pkg") == first
    assert analyses == []
    # Files without findings are done by their stat; those with findings are read for their text (not analysed).
    assert sorted(reads) == ["gate.py", "seed.py"]
    records = index(trusted / cache_mod.DIR_NAME)
    assert records[str(trusted / "pkg" / "plain.py")].endswith(":")  # no bprop
    assert records[str(trusted / "pkg" / "quiet.py")].endswith(":" + cache_mod.content_hash(QUIET.encode()))


def test_a_touched_file_with_the_same_bytes_is_hashed_not_analysed(capsys, trusted, analyses, reads):
    first = run(capsys, "pkg")
    quiet = trusted / "pkg" / "quiet.py"
    st = os.stat(quiet)
    os.utime(quiet, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))
    analyses.clear()
    reads.clear()
    assert run(capsys, "pkg") == first
    assert analyses == [] and "quiet.py" in reads and "plain.py" not in reads
    reads.clear()
    assert run(capsys, "pkg") == first
    assert "quiet.py" not in reads  # its new stat was recorded


def test_new_bytes_under_the_old_size_and_mtime_are_checked(capsys, trusted, analyses):
    run(capsys, "pkg")
    quiet = trusted / "pkg" / "quiet.py"
    st = os.stat(quiet)
    quiet.write_text(SWAPPED)
    os.utime(quiet, ns=(st.st_atime_ns, st.st_mtime_ns))  # as `cp -p`, `rsync -a` or a tar extraction leave it
    assert os.stat(quiet).st_size == st.st_size and os.stat(quiet).st_mtime_ns == st.st_mtime_ns
    analyses.clear()
    code, out, _ = run(capsys, "--output-format", "concise", "pkg")
    assert analyses == [SWAPPED] and "quiet.py" in out and "BP014" in out  # the change time told


@pytest.mark.parametrize("window", ["default", "shut"])
def test_a_rewrite_the_stat_cannot_tell_is_caught_by_the_racy_window(capsys, tree, analyses, monkeypatch, window):
    """A file system whose stat shows only size and mtime (coarse time stamps, no change time or inode worth
    comparing): a file rewritten in the same tick with the same size looks unchanged. Files younger than
    RACY_NS at the run's start are never recorded, so the rewrite is read and checked; with the window shut
    the stale result would be replayed (what the window is for)."""
    monkeypatch.setattr(cache_mod, "signature", lambda st: f"{st.st_size}:{st.st_mtime_ns}")
    if window == "shut":
        monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    else:
        monkeypatch.setattr(cache_mod, "RACY_NS", 2 * 10**9)
    quiet = tree / "pkg" / "quiet.py"
    quiet.write_text(QUIET)
    run(capsys, "pkg")
    st = os.stat(quiet)
    quiet.write_text(SWAPPED)
    os.utime(quiet, ns=(st.st_atime_ns, st.st_mtime_ns))
    analyses.clear()
    code, out, _ = run(capsys, "--output-format", "concise", "pkg")
    if window == "default":
        assert SWAPPED in analyses and "BP014" in out
    else:
        assert analyses == [] and "BP014" not in out


def test_remember_keeps_only_files_older_than_the_racy_window(tmp_path):
    cache = cache_mod.ResultCache(tmp_path / "c", fingerprint="fp")
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    st = os.stat(path)
    cache.remember(str(path), st, "")
    assert cache.known(str(path), st) is None  # written a moment ago: only its bytes can tell
    cache.started_ns = max(st.st_mtime_ns, st.st_ctime_ns) + cache_mod.RACY_NS + 1
    cache.remember(str(path), st, "")
    assert cache.known(str(path), st) == ""
    cache.started_ns = max(st.st_mtime_ns, st.st_ctime_ns) + cache_mod.RACY_NS
    other = cache_mod.ResultCache(tmp_path / "c", fingerprint="fp")
    other.started_ns = cache.started_ns
    other.remember(str(path), st, "")
    assert other.known(str(path), st) is None  # exactly at the window's edge: not trusted


@pytest.mark.parametrize("junk", [b"", b"not json", b"[]", b'{"schema": 99, "needle": "bprop", "files": {}}',
                                  b'{"schema": 1, "needle": "other", "files": {}}', b"[" * 100000, "records"])
def test_a_corrupt_or_foreign_index_is_ignored_and_rewritten(capsys, trusted, analyses, reads, junk):
    first = run(capsys, "pkg")
    path = trusted / cache_mod.DIR_NAME / f"v{cache_mod.SCHEMA}" / cache_mod.INDEX_NAME
    if junk == "records":  # records of the wrong shapes, or a digest that is not one, for real stats
        records = json.loads(path.read_text())
        for i, (name, record) in enumerate(sorted(records["files"].items())):
            sig = record.rsplit(":", 1)[0]
            records["files"][name] = [sig, sig + ":zz", sig + ":" + "A" * 40, sig.split(":"), None][i % 5]
        junk = json.dumps(records).encode()
    path.write_bytes(junk)
    reads.clear()
    assert run(capsys, "pkg") == first
    assert len(reads) == 5  # every file read again
    assert index(trusted / cache_mod.DIR_NAME)  # and recorded again


def test_the_index_is_never_written_through_a_link(capsys, trusted, tmp_path_factory):
    first = run(capsys, "pkg")
    outside = tmp_path_factory.mktemp("outside") / "precious.txt"
    outside.write_text("keep me\n")
    path = trusted / cache_mod.DIR_NAME / f"v{cache_mod.SCHEMA}" / cache_mod.INDEX_NAME
    path.unlink()
    path.symlink_to(outside)
    assert run(capsys, "pkg") == first
    assert outside.read_text() == "keep me\n" and not path.is_symlink()
    assert index(trusted / cache_mod.DIR_NAME)


def test_runs_over_other_folders_keep_each_others_records(capsys, trusted):
    (trusted / "other").mkdir()
    (trusted / "other" / "more.py").write_text(QUIET)
    run(capsys, "pkg")
    run(capsys, "other")
    records = index(trusted / cache_mod.DIR_NAME)
    assert str(trusted / "other" / "more.py") in records and str(trusted / "pkg" / "quiet.py") in records


def test_an_index_written_meanwhile_by_another_run_is_merged(tmp_path):
    folder = tmp_path / "c"
    a, b = (cache_mod.ResultCache(folder, fingerprint="fp") for _ in range(2))
    for cache, name in ((a, "a.py"), (b, "b.py")):
        path = tmp_path / name
        path.write_text("x = 1\n")
        cache.started_ns = time_ns_after(path)
        assert cache._ready()
        cache.remember(str(path), os.stat(path), "")
    a.close()
    b.close()  # b read no index (there was none): it merges a's
    assert set(index(folder)) == {str(tmp_path / "a.py"), str(tmp_path / "b.py")}


def time_ns_after(path: Path) -> int:
    st = os.stat(path)
    return max(st.st_mtime_ns, st.st_ctime_ns) + cache_mod.RACY_NS + 1


def test_an_entry_is_replayed_only_while_its_dependencies_are_unchanged(capsys, trusted, analyses):
    first = run(capsys, "pkg")
    base = trusted / "pkg" / "base_dep.txt"
    base.write_text("class Base: ...\n")
    folder = trusted / cache_mod.DIR_NAME
    for entry in entries(folder):
        data = json.loads(entry.read_text())
        data["depends"] = [[str(base), cache_mod.content_hash(base.read_bytes())]]
        entry.write_text(json.dumps(data))
    analyses.clear()
    assert run(capsys, "pkg") == first
    assert analyses == []
    base.write_text("class Base: pass\n")  # another size: another stat, another hash
    assert run(capsys, "pkg") == first
    assert len(analyses) == 4  # every file with bprop depended on it


def test_fix_and_diff_check_what_they_write_with_files_known_by_stat(capsys, trusted, analyses):
    run(capsys, "pkg")
    code, out, _ = run(capsys, "--diff", "pkg")
    assert "+    def bprop(self, x, y, out, dout):" in out
    assert (trusted / "pkg" / "seed.py").read_text() == SEED
    analyses.clear()
    run(capsys, "--fix", "pkg")
    assert (trusted / "pkg" / "seed.py").read_text() == CLEAN and SEED in analyses
    analyses.clear()
    code, out, _ = run(capsys, "--output-format", "concise", "pkg")
    assert "seed.py" not in out and analyses == [CLEAN]  # the written file is checked anew


def test_an_index_behind_a_linked_cache_folder_is_not_read(capsys, tree, monkeypatch, tmp_path_factory):
    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    elsewhere = tmp_path_factory.mktemp("planted") / "c"
    first = run(capsys, "--cache-dir", str(elsewhere), "pkg")
    for entry in entries(elsewhere):  # every result says "no findings", every file "no bprop"
        data = json.loads(entry.read_text())
        data["findings"], data["messages"] = [], []
        entry.write_text(json.dumps(data))
    path = elsewhere / f"v{cache_mod.SCHEMA}" / cache_mod.INDEX_NAME
    records = json.loads(path.read_text())
    records["files"] = {k: v.rsplit(":", 1)[0] + ":" for k, v in records["files"].items()}
    path.write_text(json.dumps(records))
    assert run(capsys, "--cache-dir", str(elsewhere), "pkg")[0] == 0  # (what a planted folder could do)
    (tree / cache_mod.DIR_NAME).symlink_to(elsewhere, target_is_directory=True)
    code, out, err = run(capsys, "pkg")
    assert (code, out) == first[:2] and "running without a cache" in err


# -- folder listings ---------------------------------------------------------------------------------------------

@pytest.fixture
def listed(monkeypatch):
    """The folders listed (os.scandir) by their name."""
    seen: list[str] = []
    real = os.scandir

    def counting(path="."):
        seen.append(os.path.basename(os.fspath(path)))
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    return seen


def test_an_unchanged_folder_is_not_listed_again(capsys, trusted, listed, analyses):
    (trusted / "pkg" / "sub").mkdir()
    (trusted / "pkg" / "sub" / "deep.py").write_text(SEED)
    first = run(capsys, "pkg")
    assert {"pkg", "sub"} <= set(listed)
    listed.clear()
    analyses.clear()
    assert run(capsys, "pkg") == first
    assert "pkg" not in listed and "sub" not in listed and analyses == []


def test_files_added_removed_or_renamed_in_a_known_folder_are_seen(capsys, trusted, listed):
    run(capsys, "pkg")
    (trusted / "pkg" / "added.py").write_text(SEED.replace("MulAdd", "Added"))
    (trusted / "pkg" / "gate.py").unlink()
    (trusted / "pkg" / "seed.py").rename(trusted / "pkg" / "renamed.py")
    listed.clear()
    code, out, _ = run(capsys, "--output-format", "concise", "pkg")
    assert "pkg" in listed
    assert "added.py" in out and "renamed.py" in out and "gate.py" not in out and "seed.py:" not in out


def test_a_folder_with_a_link_or_a_fifo_is_listed_every_time(capsys, trusted, listed):
    (trusted / "pkg" / "alias.py").symlink_to(trusted / "pkg" / "seed.py")
    (trusted / "odd").mkdir()
    os.mkfifo(trusted / "odd" / "pipe.py")
    first = run(capsys, "pkg", "odd")
    listed.clear()
    second = run(capsys, "pkg", "odd")
    assert second == first and "a FIFO" in second[2]
    assert "pkg" in listed and "odd" in listed


def test_an_ignore_file_edited_in_place_applies_in_a_known_folder(capsys, trusted):
    (trusted / ".git").mkdir()
    (trusted / "pkg" / ".gitignore").write_text("nothing.py\n")
    code, out, _ = run(capsys, "--output-format", "concise", "pkg")
    assert "gate.py" in out
    with open(trusted / "pkg" / ".gitignore", "r+") as f:  # in place: the folder's own stat does not change
        f.write("gate.py   \n")
    code, out, _ = run(capsys, "--output-format", "concise", "pkg")
    assert "gate.py" not in out and "seed.py" in out


def test_a_listing_record_of_another_shape_is_ignored(capsys, trusted, listed):
    first = run(capsys, "pkg")
    path = trusted / cache_mod.DIR_NAME / f"v{cache_mod.SCHEMA}" / cache_mod.INDEX_NAME
    records = json.loads(path.read_text())
    key = os.path.join(str(trusted / "pkg"), "")
    sig = records["files"][key].split(":")[:6]
    for bad in (":".join(sig) + ":q1:x.py", ":".join(sig) + ":fz:x.py", ":".join(sig) + ":d:", ["x"]):
        records["files"][key] = bad
        path.write_text(json.dumps(records))
        listed.clear()
        assert run(capsys, "pkg") == first
        assert "pkg" in listed


def test_a_walk_from_kept_listings_yields_what_a_fresh_walk_does(tmp_path, monkeypatch):
    """Nested repositories (a .git folder and a .git file), ignore files, a virtual environment, .pyi files, data
    files, deep folders: the walk from listings kept by an earlier walk yields the same paths, in the same order."""
    from bprop_lsp import sources

    monkeypatch.setattr(cache_mod, "RACY_NS", 0)
    root = tmp_path / "root"
    for folder in ("a/b/c", "a/venv/lib", "sub/x", "wt/y", "ignored/z", "data"):
        (root / folder).mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("ignored/\n*.gen.py\n")
    (root / "sub" / ".git").mkdir()
    (root / "sub" / ".gitignore").write_text("x/skip.py\n")
    (root / "wt" / ".git").write_text("gitdir: /elsewhere\n")  # a worktree's .git is a file
    (root / "a" / ".ignore").write_text("b/c/hidden.py\n")
    (root / "a" / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    names = ["a/one.py", "a/b/two.pyi", "a/b/c/three.py", "a/b/c/hidden.py", "a/venv/lib/v.py", "sub/x/keep.py",
             "sub/x/skip.py", "wt/y/w.py", "ignored/z/i.py", "top.gen.py", "top.py", "data/d.txt", "data/e.json"]
    for name in names:
        (root / name).write_text("x = 1\n")

    def walk(listings):
        return list(sources.iter_paths([str(root)], listings=listings))

    fresh = walk(None)
    assert "a/b/c/hidden.py" not in " ".join(fresh) and not any("venv" in p or "ignored" in p for p in fresh)
    cache = cache_mod.ResultCache(tmp_path / "c", fingerprint="fp")
    assert walk(cache) == fresh
    assert cache._index_new  # listings were kept
    assert cache._ready()
    cache.close()
    again = cache_mod.ResultCache(tmp_path / "c", fingerprint="fp")
    calls: list[str] = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": calls.append(path) or real(path))
    assert walk(again) == fresh
    assert calls == []  # every folder from its kept listing
