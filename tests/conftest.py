"""Fixtures shared by the unit tests."""
from __future__ import annotations

import os

import pytest


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
