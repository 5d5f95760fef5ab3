"""The process pool gives the serial run's output byte for byte; one file's internal error never ends the run;
the progress bar shows only on a terminal, outside CI and without -q."""
from __future__ import annotations

import io
import multiprocessing
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


def test_pool_is_used_only_for_enough_files(tmp_path, monkeypatch):
    used = []
    monkeypatch.setattr(jobs, "_run_pool", lambda *a: used.append(len(a[1])))
    job = jobs.Job(str(tmp_path / "x.py"), jobs.Settings(), jobs.Options())
    jobs.run_jobs([job] * (POOL_MIN_FILES - 1), 4, lambda i, r: None)
    assert used == []
    jobs.run_jobs([job] * POOL_MIN_FILES, 4, lambda i, r: None)
    assert used == [POOL_MIN_FILES]
    jobs.run_jobs([job] * 20, 1, lambda i, r: None)
    assert used == [POOL_MIN_FILES]


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
    assert f"{boom}: internal error in bprop-lsp (please report): RuntimeError: rule exploded" in err
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


def test_default_workers_leave_busy_cpus_alone(monkeypatch):
    monkeypatch.setattr(jobs.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(jobs.os, "getloadavg", lambda: (0.2, 0.5, 0.5))
    assert jobs.default_workers() == 4
    monkeypatch.setattr(jobs.os, "getloadavg", lambda: (2.4, 1.0, 1.0))
    assert jobs.default_workers() == 2
    monkeypatch.setattr(jobs.os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    assert jobs.default_workers() == 1
