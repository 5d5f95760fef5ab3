"""The workspace model in the server: the project's modules as the engine's ``Workspace`` reads them, with the open
documents' texts laid over the files on disk.

* An open document is analysed as its module of the project (``scope``): a base class imported from another module
  is read there (the other open document's text, else the file).
* When an open document changes (or opens, or closes) or a watched file changes on disk
  (``workspace/didChangeWatchedFiles``), every *other* open document whose findings depend on that file (the
  workspace's record of what its analysis consulted: ``Workspace.dependents``) is analysed again: its diagnostics
  are re-published (push clients), or the client is asked to pull again (``workspace/diagnostic/refresh``) — and
  only those documents. A document that depends on nothing that changed is left alone.

Nothing is imported or run; the folders modules are named from are the workspace folders and each document's
project folder (its ``pyproject.toml`` or ``.git``: ``[tool.bprop-lsp] src``, ``src/`` layouts).
"""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def _path(uri: str) -> str | None:
    if not uri.startswith("file:"):
        return None
    from pygls import uris

    return uris.to_fs_path(uri)


class Projects:
    def __init__(self, ls):
        self.ls = ls
        self._workspace = None
        self._roots: list[str] = []

    def _ensure(self, path: str | None):
        from ..engine import Workspace, project_root

        roots = [p for p in (_path(f) for f in getattr(self.ls.settings, "folders", [])) if p]
        if path is not None:
            project = project_root(path)
            if project is not None:
                roots.append(str(project))
        if self._workspace is None or any(r not in self._roots for r in roots):
            for r in roots:
                if r not in self._roots:
                    self._roots.append(r)
            old = self._workspace
            self._workspace = Workspace(self._roots)
            if old is not None:
                self._workspace.take_overlays(old)
        return self._workspace

    def scope(self, state) -> dict:
        """The keyword arguments of ``DocumentSession.analyse`` for ``state``'s document (its module of the
        project), or none (a document with no file path: untitled, a notebook cell)."""
        path = _path(state.doc.uri) if state.doc.notebook_uri is None else None
        if path is None:
            return {}
        workspace = self._ensure(path)
        if not workspace.roots:
            return {}
        return {"workspace": workspace, "path": path}

    # -- what changed -----------------------------------------------------------------------------------------
    def opened(self, state) -> None:
        self.changed(state)

    def changed(self, state) -> None:
        """``state``'s text changed (or it opened): it overrides its file; its dependents are analysed again."""
        path = _path(state.doc.uri)
        if path is None or state.doc.notebook_uri is not None:
            return
        self._ensure(path).set_overlay(path, state.doc.text)
        self._refresh(path, besides=state)

    def closed(self, uri: str) -> None:
        path = _path(uri)
        if path is None or self._workspace is None:
            return
        self._workspace.drop_overlay(path)
        self._refresh(path)

    def watched(self, uris) -> None:
        """Files changed on disk (``workspace/didChangeWatchedFiles``)."""
        if self._workspace is None:
            return
        for uri in uris:
            path = _path(uri)
            if path is None or not path.endswith((".py", ".pyi")):
                continue
            self._workspace.invalidate(path)
            self._refresh(path)

    def _refresh(self, path: str, besides=None) -> None:
        workspace = self._workspace
        if workspace is None:
            return
        states = {p: s for s in list(self.ls.store.states.values()) if s is not besides and not s.closed
                  for p in [_path(s.doc.uri)] if p is not None}
        dependents = workspace.dependents(path, states)
        if not dependents:
            return
        for p in dependents:
            state = states[p]
            # (the document's inputs changed, not its text: a new revision, so its result is no longer fresh)
            self.ls.store.inputs_changed(state)
            log.info("%s depends on %s: analysing it again", state.doc.uri, path)
            self.ls.scheduler.schedule(state)
        if self.ls.caps.pull_diagnostics and self.ls.caps.diagnostic_refresh:
            try:
                self.ls.workspace_diagnostic_refresh(None)
            except Exception:  # noqa: BLE001
                log.exception("workspace/diagnostic/refresh failed")
