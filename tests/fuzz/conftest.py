"""Hypothesis profiles of the fuzz suite.

* ``bprop-fuzz`` (default): fixed seed (``derandomize=True``), modest example counts per test; the whole
  ``tests/fuzz`` directory runs in well under a minute.
* ``bprop-fuzz-long``: random seeds and ``BPROP_FUZZ_EXAMPLES`` examples per test (default 2000), selected by
  ``BPROP_FUZZ_PROFILE=bprop-fuzz-long`` or by setting ``BPROP_FUZZ_EXAMPLES``. ``scripts/fuzz_long.py`` is the
  other long mode: a plain random driver that counts edits (e.g. 100,000) against a time budget.

The profiles are registered here and applied per test (``fuzzlib.fuzz_settings``), never loaded globally, so
other test directories that use Hypothesis keep their own settings.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzzlib  # noqa: E402

fuzzlib.register_profiles()
