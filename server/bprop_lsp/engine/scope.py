"""The workspace an analysis runs in: (``workspace.Workspace``, the analysed module's path), or None (one file
alone). Set by ``Workspace.scope``; read by ``Program`` when it is made (a module of no imports, below both)."""
from __future__ import annotations

from contextvars import ContextVar

CURRENT: ContextVar = ContextVar("bprop_lsp_workspace", default=None)
