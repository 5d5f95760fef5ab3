"""Differential fuzzing of the incremental path (issue 25): the session's findings against a fresh analysis after
every edit of sequences built from the edit families that broke it: classes of one name (copies, two factories
each defining ``class Inner``), class headers deleted or typed over (their bodies orphaned), headers typed or
pasted above orphaned indented blocks, half-deleted classes, statements moved in one whole-document change, undo,
over oracle cases, generated programs and corpus files (tests/fixtures/model_corpus.py), with the rule memo
standing in whatever the number of Cells and at its real threshold (16 Cells: sequences add plain Cells).

The default run is bounded and seeded; ``scripts/fuzz_long.py --differential --edits 100000`` is the long run.
The server is checked the same way over stdio: its pulled diagnostics against a fresh analysis after each
didChange (incremental and whole-document changes).
"""
from __future__ import annotations

import collections
import os
import random

import pytest

import fuzzlib as F

CASES = F.oracle_cases()
SEQUENCES = int(os.environ.get("BPROP_FUZZ_DIFF_SEQUENCES") or 40)


@pytest.mark.parametrize("memo_always", [True, False])
def test_session_equals_fresh_under_structural_edits(memo_always):
    stats = collections.Counter()
    edits = 0
    for i in range(SEQUENCES):
        pick = F.RandomPicker(random.Random(f"diff:{memo_always}:{i}"))
        edits += F.run_differential(pick, CASES, pick.int(4, 12), memo_always=memo_always, verify_every=5,
                                    stats=stats)
    assert edits >= SEQUENCES * 4
    # Every family was exercised.
    assert {k for k in stats if k.startswith("edit ")} >= {
        "edit dup_class", "edit factory_pair", "edit del_header", "edit header_over", "edit header_above",
        "edit paste_above_orphan", "edit half_delete", "edit swap_blocks", "edit undo", "edit orphan_in"}


@pytest.mark.parametrize("text,edits", [
    # issue 25, item 1: 14 plain Cells, then two factories each defining ``class Inner``
    ("from mindspore import nn\n" + "".join(F.PLAIN_CELL.format(i=i) for i in range(14)),
     ["factory_pair"]),
])
def test_the_families_find_the_issue_s_cases(text, edits):
    """The generators produce the issue's cases: a factory pair after 14 plain Cells gives BP001 in both paths."""
    class Fixed(F.Picker):
        def int(self, lo, hi):
            return lo

        def choice(self, seq):
            seq = list(seq)
            return "factory_pair" if "factory_pair" in seq else seq[-1]

        def bool(self, p=0.5):
            return False

    doc = F.DifferentialDoc()
    try:
        doc.check(text)
        kind, new = F.structural_edit(Fixed(), text, [])
        assert kind == "factory_pair"
        doc.check(new)
        assert "BP001" in {f.code for f in F.analyze(new, verify_fixes=False).findings}
    finally:
        doc.close()


def test_server_diagnostics_equal_fresh_under_structural_edits():
    """Over stdio: after each didChange (incremental, or the whole text), the pulled diagnostics equal a fresh
    analysis of the mirrored text."""
    import test_lsp_fuzz as L
    from bprop_lsp.engine import Settings

    encoding = "utf-16"
    server = L.start(encoding)
    compared = 0
    try:
        for i in range(3):
            pick = F.RandomPicker(random.Random(f"diff-server:{i}"))
            _, text = F.differential_sources(pick, CASES)
            if "from mindspore import nn\nclass Plain0" not in text and pick.bool(0.7):
                text = "from mindspore import nn\n" + "".join(F.PLAIN_CELL.format(i=k) for k in range(15)) + text
            uri = f"file:///diff/{i}.py"
            server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                    "text": text}})
            history: list[str] = []
            for version in range(2, 2 + 12):
                _, new = F.structural_edit(pick, text, history)
                history.append(text)
                change = L.change_for(text, new, encoding) if pick.bool(0.6) else {"text": new}
                server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                         "contentChanges": [change]})
                text = new
                answer = server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
                items = answer["result"]["items"]
                got = sorted((d.get("code"), L.json.dumps(d["range"], sort_keys=True)) for d in items
                             if d.get("source", "bprop-lsp") == "bprop-lsp" and str(d.get("code", "")).startswith("BP"))
                assert got == L.expected(text, Settings(), encoding), (version, text)
                compared += 1
            server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    finally:
        server.close()
    assert compared == 36
