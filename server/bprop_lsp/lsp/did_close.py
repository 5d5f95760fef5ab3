"""``textDocument/didClose``: forget the document and its parse tree; clear pushed diagnostics."""
from __future__ import annotations

import asyncio
import gc
import sys

from lsprotocol import types

from .diagnostics import publish


def close_document(ls, uri: str) -> None:
    state = ls.store.close(uri)
    if state is None:
        return
    ls.scheduler.bump()
    ls.projects.closed(uri)
    if state.session is not None:
        # On the analysis thread, after whatever analysis of the document is running there.
        try:
            ls.scheduler.executor.submit(state.session.close)
        except RuntimeError:  # shutting down
            pass
    if not ls.caps.pull_diagnostics:
        publish(ls, uri, None, [])
    if state.analysed_once or state.too_large:
        _release_frozen_trees()  # (a text over the size limit: its pages go back to the OS too)


_pending_collect: asyncio.TimerHandle | None = None


def _release_frozen_trees() -> None:
    """Open documents' trees are frozen out of the collector (scheduler.py); a closed one must be collectable.

    Unfreeze now, collect and freeze the survivors again once closing has settled (one full collection per
    burst of closes, not per close).
    """
    global _pending_collect
    gc.unfreeze()
    if _pending_collect is not None:
        _pending_collect.cancel()

    def collect_and_freeze():
        gc.collect()
        gc.freeze()
        _trim_heap()

    _pending_collect = asyncio.get_running_loop().call_later(1.0, collect_and_freeze)


def collection_pending() -> bool:
    """True between a close and the collection that follows it: freezing then would freeze the closed
    documents' garbage with the live trees, and a burst of opens and closes would never free anything."""
    return _pending_collect is not None and not _pending_collect.cancelled() and \
        _pending_collect.when() > asyncio.get_running_loop().time()


def _trim_heap() -> None:
    """Give freed heap pages back to the OS (glibc keeps them otherwise: parse trees and texts of closed
    documents are freed, but the process size would only ever grow over a long session).

    glibc's ``malloc_trim`` is looked up in the process's own symbols (``CDLL(None)``, as malloc_tuning.py does),
    never with ``ctypes.util.find_library``: where ``ldconfig -p`` does not answer (NixOS, Guix, musl) that runs
    ``gcc``, ``cc`` or ``ld`` found on PATH, and the server runs wherever the editor started it, perhaps with
    ``.`` on PATH: a workspace's own program. Another libc has no ``malloc_trim``: nothing is done."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL(None)
                libc.gnu_get_libc_version  # noqa: B018 - glibc only
                _malloc_trim = libc.malloc_trim
                _malloc_trim.argtypes = (ctypes.c_size_t,)
                _malloc_trim.restype = ctypes.c_int
            except (OSError, AttributeError):
                _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim = None


def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
    close_document(ls, params.text_document.uri)
