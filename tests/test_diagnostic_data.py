"""Diagnostic.data: the typed object a code action reads, to and from JSON, and what it refuses."""
import json

import pytest

from bprop_lsp.lsp.diagnostic_data import DiagnosticData, FixData


def test_round_trip_through_json():
    data = DiagnosticData("BP001", 3, 7, FixData("Add the missing `dout` parameter", True, ((4, 31, 4, 31, ", dout"),)),
                          (4, 33, 4, 33, "  # noqa: BP001"), checked=True)
    assert DiagnosticData.from_json(json.loads(json.dumps(data.to_json()))) == data
    bare = DiagnosticData("BP028", None, None)
    assert DiagnosticData.from_json(json.loads(json.dumps(bare.to_json()))) == bare


@pytest.mark.parametrize("obj", [
    None, 5, "BP001", [], {}, {"code": 1},
    {"code": "BP001", "v": "3"},
    {"code": "BP001", "v": True},
    {"code": "BP001", "fix": {"title": "t", "edits": []}},
    {"code": "BP001", "fix": {"title": "t", "edits": [[0, 0, 0, 0]]}},
    {"code": "BP001", "fix": {"title": "t", "edits": [[0, -1, 0, 0, ""]]}},
    {"code": "BP001", "fix": {"title": "t", "edits": [[2, 0, 1, 0, ""]]}},  # end before start
    {"code": "BP001", "fix": {"title": "t", "safe": "yes", "edits": [[0, 0, 0, 0, ""]]}},
    {"code": "BP001", "fix": {"title": "t", "edits": [[0, 0, 0, 0, 5]]}},
    {"code": "BP001", "noqa": [0, 0, 0, 0]},
    {"code": "BP001", "fix": "all of them"},
])
def test_malformed_data_is_refused_not_raised(obj):
    assert DiagnosticData.from_json(obj) is None


def test_checked_is_only_ever_a_literal_true():
    assert DiagnosticData.from_json({"code": "BP001", "checked": "true"}).checked is False
    assert DiagnosticData.from_json({"code": "BP001", "checked": 1}).checked is False
    assert DiagnosticData.from_json({"code": "BP001", "checked": True}).checked is True
