"""glibc's allocator told to keep the memory of a document-sized block for the next keystroke.

Every keystroke allocates a few blocks the size of the document's text (the edited text, its slices; a
10,000-line file with comments in two languages is a 670 KB UCS-2 string). glibc returns the top of its heap to
the system as soon as more than twice the largest block freed so far lies free there (its dynamic trim
threshold), which two such blocks freed together always exceed: the next keystroke faults every page of them
in again (~300 page faults, 0.3-0.7 ms of a keystroke, a third of what the server adds to the engine). With a
fixed threshold of a few document texts the pages stay mapped; blocks under ``MMAP_THRESHOLD`` come from the heap.

Linux with glibc only (elsewhere nothing is changed); ``BPROP_LSP_MALLOC_TUNING=0`` leaves glibc's defaults.
"""
from __future__ import annotations

import ctypes
import logging
import os
import sys

log = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 8 * 1024 * 1024  # blocks up to this size come from the heap (a 50,000-line UCS-2 text: ~3.5 MB)
TRIM_THRESHOLD = 16 * 1024 * 1024  # free memory kept at the top of the heap before it is given back


def tune() -> bool:
    """Set the thresholds (once, at start-up); whether they were set."""
    if os.environ.get("BPROP_LSP_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - glibc only: another libc's mallopt means other things
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # (Setting either turns glibc's dynamic thresholds off: both are set.)
    ok = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    if not ok:
        log.info("mallopt refused the thresholds: glibc's defaults stay")
    return ok
