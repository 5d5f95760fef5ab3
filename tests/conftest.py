"""Fixtures shared by the unit tests."""
from __future__ import annotations

import os

import pytest

# The labelled programs under fixtures/ are MindSpore programs, read as text by the tests: never collected, even
# where a name matches pytest's patterns (``*_test.py``, a probe of a test module's mode).
collect_ignore_glob = ["fixtures/*"]


@pytest.fixture
def deep_dir(tmp_path):
    """``make(depth)`` nests that many folders under tmp_path; they are removed bottom-up afterwards (pytest's own
    clean-up, shutil.rmtree, is recursive and would overflow on them)."""
    made: list[str] = []

    def make(depth: int) -> str:
        path = str(tmp_path)
        for _ in range(depth):
            path = os.path.join(path, "d")
            os.mkdir(path)
            made.append(path)
        return path

    yield make
    for folder in reversed(made):
        for name in os.listdir(folder):
            if not os.path.isdir(os.path.join(folder, name)):
                os.unlink(os.path.join(folder, name))
        os.rmdir(folder)


@pytest.fixture(autouse=True, scope="session")
def _result_cache_out_of_the_checkout(tmp_path_factory):
    """``check`` run by a test (in process or as a subprocess) keeps its result cache in a scratch folder, not in
    ``.bprop_lsp_cache`` at the checkout's root (the nearest pyproject.toml of a test run from the repository).
    Tests of where the cache goes (tests/test_cli_cache.py) unset the variable themselves."""
    os.environ.setdefault("BPROP_LSP_CACHE_DIR", str(tmp_path_factory.mktemp("bprop_lsp_cache")))
    yield
