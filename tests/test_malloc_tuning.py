"""The allocator keeps the pages of document-sized blocks from one keystroke to the next (malloc_tuning.py)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")

# A keystroke's text splice on a 10,000-line file with CJK comments (a ~670 KB UCS-2 string), repeated: the page
# faults per splice, before and after tuning (page faults are counted, not time: deterministic on a loaded machine).
PROBE = r"""
import json, resource, sys
from bprop_lsp.lsp import malloc_tuning

text = ("x = 1  # 注释\n" * 30000)
def faults_per_splice():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for i in range(40):
        at = len(text) // 2
        edited = text[:at] + "y" + text[at:]  # (the old text lives on while the engine reads it)
        del edited
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 40
faults_per_splice()
default = faults_per_splice()
tuned = malloc_tuning.tune()
print(json.dumps({"default": default, "tuned": tuned, "after": faults_per_splice()}))
"""


def _probe(env_extra: dict | None = None) -> dict:
    import os

    env = dict(os.environ, **(env_extra or {}))
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout)


def test_document_sized_blocks_are_not_faulted_in_again_on_every_keystroke():
    result = _probe()
    if not result["tuned"]:
        pytest.skip("not glibc")
    # Without tuning a splice faults in ~300 pages (its two 840 KB blocks); tuned, the heap keeps them.
    assert result["after"] < 50, result


def test_tuning_can_be_turned_off():
    result = _probe({"BPROP_LSP_MALLOC_TUNING": "0"})
    assert result["tuned"] is False
