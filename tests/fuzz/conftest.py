"""Hypothesis profiles of the fuzz suite.

* ``bprop-fuzz`` (default): fixed seed (``derandomize=True``), modest example counts per test; the whole
  ``tests/fuzz`` directory runs in well under a minute.
* ``bprop-fuzz-long``: random seeds and ``BPROP_FUZZ_EXAMPLES`` examples per test (default 2000), selected by
  ``BPROP_FUZZ_PROFILE=bprop-fuzz-long`` or by setting ``BPROP_FUZZ_EXAMPLES``. ``scripts/fuzz_long.py`` is the
  other long mode: a plain random driver that counts edits (e.g. 100,000) against a time budget.

The LSP-level tests (test_lsp_fuzz.py) scale with ``BPROP_FUZZ_LSP_OPS`` (random operations per encoding, default
120), ``BPROP_FUZZ_LSP_CYCLES`` (open/close cycles of the memory check, default 300; the issue's 10,000 in the
long run), ``BPROP_FUZZ_LSP_HUGE_MB`` (default 5; 50 in the long run) and ``BPROP_FUZZ_LSP_SEED``.

The profiles are registered here and applied per test (``fuzzlib.fuzz_settings``), never loaded globally, so
other test directories that use Hypothesis keep their own settings.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzzlib  # noqa: E402

fuzzlib.register_profiles()
