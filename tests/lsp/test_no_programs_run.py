"""A workspace cannot make the server run a program (issue 25, item 6): releasing a closed document's memory
looks glibc's ``malloc_trim`` up in the process itself, never with ``ctypes.util.find_library`` (which runs
``gcc``/``cc``/``ld`` from PATH where ``ldconfig -p`` does not answer: NixOS, Guix, musl)."""
from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
import textwrap

import pytest

from bprop_lsp.lsp import did_close


def test_trim_heap_looks_nothing_up_and_runs_nothing(monkeypatch):
    calls = []
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: calls.append(("find_library", name)))
    real_popen = subprocess.Popen

    def popen(*args, **kwargs):
        calls.append(("Popen", args))
        return real_popen(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(did_close, "_malloc_trim", None)
    did_close._trim_heap()
    did_close._trim_heap()
    assert calls == []
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None).gnu_get_libc_version  # noqa: B018
        except AttributeError:
            assert did_close._malloc_trim is False  # another libc: nothing to call
        else:
            assert did_close._malloc_trim  # glibc: found in the process's own symbols


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ctypes.util's ldconfig/gcc search is Linux's")
def test_no_program_on_path_runs_where_ldconfig_fails(tmp_path):
    """A fresh server process with ``.`` first on PATH, in a folder holding ``gcc``, ``cc``, ``ld`` and ``ldconfig``
    that leave a mark, and ``ldconfig -p`` failing as on NixOS: closing a document runs none of them."""
    marks = tmp_path / "marks"
    for name in ("gcc", "cc", "ld", "ldconfig", "objdump", "x86_64-linux-gnu-gcc"):
        script = tmp_path / name
        script.write_text(f"#!/bin/sh\necho {name} >> {marks}\nexit 1\n")
        script.chmod(0o755)
    probe = textwrap.dedent("""
        import ctypes.util, subprocess
        real = subprocess.Popen
        def failing_ldconfig(args, *a, **k):
            if isinstance(args, (list, tuple)) and args and str(args[0]).endswith("ldconfig"):
                raise OSError("no ldconfig here")  # as where ldconfig -p does not answer
            return real(args, *a, **k)
        subprocess.Popen = failing_ldconfig
        from bprop_lsp.lsp import did_close
        did_close._trim_heap()
        print("ok", bool(did_close._malloc_trim))
    """)
    env = {**os.environ, "PATH": os.pathsep.join([".", "", os.environ.get("PATH", "")])}
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok")
    assert not marks.exists(), marks.read_text()
