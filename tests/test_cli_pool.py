"""The process pool gives the serial run's output byte for byte; one file's internal error never ends the run;
the progress bar shows only on a terminal, outside CI and without -q."""
from __future__ import annotations

import io
import multiprocessing
import os
import subprocess
import sys

import pytest

from bprop_lsp.cli import jobs
from bprop_lsp.cli.jobs import POOL_MIN_FILES, Progress
from bprop_lsp.cli.main import main

SEED = (
    "from mindspore import nn\n\n\n"
    "class MulAdd(nn.Cell):\n"
    "    def construct(self, x, y):\n"
    "        return 2 * x + y\n\n"
    "    def bprop(self, x, y, out):\n"
    "        return 2 * out, out\n"
)
CLEAN = SEED.replace("(self, x, y, out)", "(self, x, y, out, dout)")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _corpus(root, n=24):
    for i in range(n):
        sub = root / f"pkg{i % 3}"
        sub.mkdir(exist_ok=True)
        if i % 5 == 0:
            text = CLEAN
        elif i % 7 == 0:
            text = SEED + "\ndef broken(:\n    pass\n"  # a syntax-error warning on stderr
        else:
            text = SEED.replace("MulAdd", f"MulAdd{i}")
        (sub / f"m{i:02d}.py").write_text(text)
    (root / "pkg1" / "bad.py").write_bytes(b"\x00binary")  # an error on stderr


@pytest.mark.parametrize("fmt", ["full", "json", "concise"])
def test_pool_output_is_identical_to_the_serial_run(tmp_path, fmt):
    _corpus(tmp_path)
    runs = []
    for jobs_flag in ("1", "2"):
        proc = subprocess.run([sys.executable, "-m", "bprop_lsp", "check", "--no-color", "--output-format", fmt,
                               "-j", jobs_flag, "."], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        runs.append((proc.returncode, proc.stdout, proc.stderr))
    assert runs[0] == runs[1]
    assert runs[0][0] == 2 and "pkg1/bad.py: binary file" in runs[0][2] and "syntax error" in runs[0][2]


def test_pool_fix_equals_serial_fix(tmp_path):
    for name in ("serial", "pool"):
        (tmp_path / name).mkdir()
        _corpus(tmp_path / name)
    results = {}
    for name, jobs_flag in (("serial", "1"), ("pool", "2")):
        proc = subprocess.run([sys.executable, "-m", "bprop_lsp", "check", "--fix", "-j", jobs_flag, "."],
                              cwd=tmp_path / name, capture_output=True, text=True, timeout=120)
        tree = {p.relative_to(tmp_path / name).as_posix(): p.read_bytes() for p in sorted((tmp_path / name).rglob("*.py"))}
        results[name] = (proc.returncode, proc.stdout, proc.stderr, tree)
    assert results["serial"] == results["pool"]
    assert results["pool"][3]["pkg0/m03.py"] == CLEAN.replace("MulAdd", "MulAdd3").encode()


class _FakePool:
    """Stands in for jobs._Pool: records what it was given and checks the files itself, in submission order."""

    started: list = []

    def __init__(self, workers):
        self.alive, self.order, self.inflight = True, [], {}
        _FakePool.started.append(self)

    @classmethod
    def start(cls, workers):
        return cls(workers)

    def busy(self):
        return False

    def feed(self, job_list, pending, deliver, *, block):
        if block:  # the walk is over: everything pending, largest first
            while pending:
                _, i, source = jobs.heapq.heappop(pending)
                self.order.append(i)
                deliver(i, jobs.check_source(job_list[i], source))

    def close(self):
        pass

    def unfinished(self):
        return []


def _job(path):
    return jobs.Job(str(path), jobs.Settings(), jobs.Options())


def test_pool_is_used_only_for_enough_files_with_a_bprop(tmp_path, monkeypatch):
    _FakePool.started = []
    monkeypatch.setattr(jobs, "_Pool", _FakePool)
    plain = []
    for i in range(40):
        plain.append(tmp_path / f"plain{i}.py")
        plain[-1].write_text("def f(x):\n    return x\n" * 50)
    seeds = []
    for i in range(POOL_MIN_FILES + 2):
        seeds.append(tmp_path / f"seed{i}.py")
        seeds[-1].write_text(SEED + "\n# padding\n" * (60 * (i + 1)))
    # Files without a custom bprop never reach a pool (nor the engine), however many.
    jobs.run_jobs([_job(p) for p in plain], 4, lambda i, r: None)
    assert _FakePool.started == []
    # Too few files with one.
    jobs.run_jobs([_job(p) for p in plain + seeds[:POOL_MIN_FILES - 1]], 4, lambda i, r: None)
    assert _FakePool.started == []
    # -j 1: never.
    jobs.run_jobs([_job(p) for p in plain + seeds], 1, lambda i, r: None)
    assert _FakePool.started == []
    # Enough: the pool gets only the files with a bprop, the largest first; results come back in the jobs' order.
    seen = []
    all_jobs = [_job(p) for p in seeds[:2] + plain + seeds[2:]]
    results = jobs.run_jobs(all_jobs, 4, lambda i, r: seen.append(i))
    (pool,) = _FakePool.started
    assert sorted(pool.order) == [0, 1, 42, 43] and pool.order == [43, 42, 1, 0]
    assert seen == list(range(len(all_jobs)))
    assert [r.path for r in results] == [j.path for j in all_jobs]
    assert all(r.checked and not r.error for r in results)
    assert [len(r.findings) for r in results] == [1, 1] + [0] * 40 + [1, 1]


def test_files_without_bprop_are_still_read_and_decoded(tmp_path):
    """An unreadable or undecodable file is an error whether or not it has a custom bprop in it."""
    (tmp_path / "latin1.py").write_bytes("# coding: latin-1\nname = 'caf\xe9'\n".encode("latin-1"))
    (tmp_path / "bad_utf8.py").write_bytes(b"x = 1\ny = '\xff'\n")
    (tmp_path / "bad_first_line.py").write_bytes(b"# \xff\nx = 1\n")
    (tmp_path / "nul.py").write_bytes(b"x = 1\x00\n")
    (tmp_path / "bad_cookie.py").write_bytes(b"# coding: nonesuch\nx = 1\n")
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbfx = 1\n")
    # UTF-16 behind a coding declaration: "bprop" is in the text but not in the bytes as ASCII.
    (tmp_path / "utf16.py").write_bytes(b"# coding: utf-16\n")
    names = sorted(p.name for p in tmp_path.iterdir())
    results = jobs.run_jobs([_job(tmp_path / n) for n in names], 1, lambda i, r: None)
    by_name = dict(zip(names, results))
    for name in ("latin1.py", "bom.py"):
        assert not by_name[name].error and by_name[name].checked, name
    for name in ("bad_utf8.py", "bad_first_line.py", "nul.py", "bad_cookie.py"):
        assert by_name[name].error and by_name[name].messages, name
        expected = jobs.check_file(_job(tmp_path / name))
        assert by_name[name].messages == expected.messages  # the message a full read gives
    assert by_name["utf16.py"].error == jobs.check_file(_job(tmp_path / "utf16.py")).error


def test_read_source_if_finds_bprop_in_text_of_any_encoding(tmp_path):
    from bprop_lsp.sources import read_source_if

    p = tmp_path / "m.py"
    p.write_bytes("# -*- coding: utf-7 -*-\n# +AGI-prop\n".encode("ascii"))
    assert b"bprop" not in p.read_bytes()
    source = read_source_if(str(p), "bprop")
    assert source is not None and "bprop" in source.text
    p.write_text("x = 1  # 中文\n", encoding="utf-8")
    assert read_source_if(str(p), "bprop") is None
    p.write_text("x = 1  # 中文 bprop\n", encoding="utf-8")
    assert read_source_if(str(p), "bprop").text == "x = 1  # 中文 bprop\n"


def test_a_tree_without_bprop_never_imports_the_engine(tmp_path):
    for i in range(30):
        (tmp_path / f"m{i}.py").write_text("def f(x):\n    return x\n")
    code = ("import sys; from bprop_lsp.cli.main import main; rc = main(['check', '-q', sys.argv[1]]); "
            "print(rc, sorted(m for m in sys.modules if m.startswith(('parso', 'bprop_lsp.engine', 'bprop_lsp.rules'))))")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    # The engine package's own module is a table of names loaded on first use; only the settings model (and the
    # settings definition it is read from) is loaded, the light module naming the workspace's roots, and the one
    # reading a file's import words for the cache (a regular expression: no parse).
    assert proc.stdout.strip() == ("0 ['bprop_lsp.engine', 'bprop_lsp.engine.import_lines', "
                                   "'bprop_lsp.engine.options', 'bprop_lsp.engine.roots', "
                                   "'bprop_lsp.engine.settings']"), \
        proc.stderr


def test_a_run_without_a_pool_a_pyproject_or_output_formats_imports_none_of_them(tmp_path):
    # Start-up is a third of a run over a tree where no file has a custom bprop: what such a run does not use
    # (the process pool, a TOML parser, JSON, diffs, temporary files) is imported where it is used.
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text("def f(x):\n    return x\n")
    heavy = ("concurrent", "multiprocessing", "tomllib", "json", "difflib", "tempfile")
    code = ("import sys; from bprop_lsp.cli.main import main; rc = main(['check', '-q', '--isolated', sys.argv[1]]); "
            f"print(rc, sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r}))")
    # (A first run: no result cache folder yet. Once one exists, its index is read, JSON with it: cli/cache.py.)
    env = {**os.environ, "BPROP_LSP_CACHE_DIR": str(tmp_path / "no-cache-yet")}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60,
                          env=env)
    assert proc.stdout.strip() == "0 []", proc.stderr
    assert not (tmp_path / "no-cache-yet").exists()


@pytest.mark.parametrize("workers", [1, 2])
def test_internal_error_in_one_file_is_reported_and_the_run_goes_on(capsys, tmp_path, monkeypatch, workers):
    if workers > 1 and multiprocessing.get_start_method() != "fork":
        pytest.skip("the patched analyze reaches pool workers only when they are forked")
    real_analyze = jobs.analyze

    def analyze(text, settings=None, **kw):
        if "Boom" in text:
            raise RuntimeError("rule exploded")
        return real_analyze(text, settings, **kw)

    monkeypatch.setattr(jobs, "analyze", analyze)  # the pool forks, so its workers see this too
    for i in range(12):
        (tmp_path / f"m{i:02d}.py").write_text(SEED.replace("MulAdd", "Boom") if i == 3 else SEED)
    code, out, err = run(capsys, "check", "--output-format", "concise", "-j", str(workers), str(tmp_path))
    assert code == 2
    boom = tmp_path / "m03.py"
    assert f"{boom}: internal error in bprop-lsp (please report it at " in err
    assert "/issues): RuntimeError: rule exploded" in err
    assert out.count("BP001") == 11 and "m03.py:" not in out


def test_no_progress_bar_when_stderr_is_not_a_terminal(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(Progress, "DELAY_S", 0.0)
    _corpus(tmp_path, 10)
    _, _, err = run(capsys, "check", "-j", "1", str(tmp_path))
    assert "\r" not in err and "/10 files" not in err


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal_only_outside_ci_and_quiet(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    tty = FakeTTY()
    assert Progress.wanted(tty, quiet=False)
    assert not Progress.wanted(tty, quiet=True)
    assert not Progress.wanted(io.StringIO(), quiet=False)
    monkeypatch.setenv("CI", "true")
    assert not Progress.wanted(tty, quiet=False)

    monkeypatch.setattr(Progress, "DELAY_S", 0.0)
    bar = Progress(4, tty, True)
    for _ in range(4):
        bar.advance()
    assert "4/4 files" in tty.getvalue() and tty.getvalue().startswith("\r[")
    bar.clear()
    assert tty.getvalue().endswith("\r\x1b[2K")
    # A short run draws nothing.
    monkeypatch.setattr(Progress, "DELAY_S", 60.0)
    quiet = FakeTTY()
    short = Progress(4, quiet, True)
    short.advance()
    short.clear()
    assert quiet.getvalue() == ""


def test_default_workers_use_every_cpu_until_the_machine_is_saturated(monkeypatch):
    monkeypatch.setattr(jobs.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(jobs.os, "getloadavg", lambda: (0.2, 0.5, 0.5))
    assert jobs.default_workers() == 4
    monkeypatch.setattr(jobs.os, "getloadavg", lambda: (2.4, 1.0, 1.0))  # (our own previous run, maybe)
    assert jobs.default_workers() == 4
    monkeypatch.setattr(jobs.os, "getloadavg", lambda: (6.0, 6.0, 6.0))  # two CPUs' worth beyond the four
    assert jobs.default_workers() == 2
    monkeypatch.setattr(jobs.os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    assert jobs.default_workers() == 1


def test_github_output_checks_no_fixes_and_prints_the_same(tmp_path, monkeypatch, capsys):
    """The github format shows no fixes: its run skips the fix checks, with the same findings and warnings."""
    _corpus(tmp_path, 12)
    (tmp_path / "pkg0" / "match.py").write_text(SEED + "\n\ndef f(x):\n    match x:\n        case 1:\n            return x\n")
    calls = []
    real_analyze = jobs.analyze

    def analyze(text, settings=None, **kw):
        calls.append(kw.get("verify_fixes", True))
        return real_analyze(text, settings, **kw)

    monkeypatch.setattr(jobs, "analyze", analyze)
    code, out, err = run(capsys, "check", "--output-format", "github", "-j", "1", str(tmp_path))
    assert calls and not any(calls)
    assert code == 2 and "syntax error" in err and "match.py" not in err
    names = sorted(str(p) for p in tmp_path.rglob("*.py"))
    checked = jobs.run_jobs([_job(n) for n in names], 1, lambda i, r: None)
    expected = []
    for r in checked:
        expected.extend(f"file={r.path},line={f.span.start.line + 1},col={f.span.start.column + 1}," for f in r.findings)
    assert calls[-1] is True  # the default options check fixes
    assert [line.split(",endLine")[0].split("title=bprop-lsp (")[1].split(",", 1)[1] + ","
            for line in out.splitlines()] == expected
    assert [m for r in checked for m in r.messages] == [line for line in err.splitlines() if line.startswith("bprop-lsp: ")]
