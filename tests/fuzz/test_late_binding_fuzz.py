"""The late-binding probes (tests/fixtures/probes/cases/p22_*.py: a bprop bound after the class statement, and
GRAPH's parameter counting) under random edit sequences: the engine fuzz's properties (test_engine_fuzz.py), an
incremental document equal to a fresh analysis after every edit included."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import fuzzlib as F
from bprop_lsp.engine import Settings
from test_engine_fuzz import EDIT, MODES, run_sequence

PROBES = sorted((Path(__file__).parent.parent / "fixtures" / "probes" / "cases").glob("p22_*.py"))


@pytest.mark.parametrize("path", PROBES, ids=[p.stem for p in PROBES])
@F.fuzz_settings(3)
@given(edits=st.lists(EDIT, min_size=1, max_size=6), settings=MODES)
def test_late_binding_probe_under_random_edits(path, edits, settings):
    run_sequence(path.read_text(encoding="utf-8"), edits, settings, final_fix_all=False)


@pytest.mark.parametrize("path", PROBES, ids=[p.stem for p in PROBES])
def test_late_binding_probe_as_is(path):
    F.check_document(path.read_text(encoding="utf-8"), Settings(), fix_all_check=True)
