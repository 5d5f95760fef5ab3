"""The workspace model in the server: the project's modules as the engine's ``Workspace`` reads them, with the open
documents' texts laid over the files on disk.

* An open document is analysed as its module of the project (``scope``): a base class imported from another module
  is read there (the other open document's text, else the file).
* When an open document changes (or opens, or closes) or a watched file changes on disk
  (``workspace/didChangeWatchedFiles``), every *other* open document whose findings depend on that file (the
  workspace's record of what its analysis consulted: ``Workspace.dependents``) is analysed again: its diagnostics
  are re-published (push clients), or the client is asked to pull again (``workspace/diagnostic/refresh``) — and
  only those documents. A document that depends on nothing that changed is left alone.

* The project's files are indexed (the words of their import statements: what the mode from an entry script is
  searched for with, ``Workspace.importers``) in the background, on the scan's thread, giving way whenever the
  analysis worker has work, with ``$/progress`` when the client supports it: a document's first diagnostics do
  not wait for it (until it is done, a mode only another module could tell is unknown), and the documents that
  asked meanwhile are analysed again once it is.

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


INDEX_DELAY_S = 0.1  # from the workspace's creation (a document opened) to the start of its index


def _log_failure(task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("indexing the workspace failed", exc_info=task.exception())


class Projects:
    def __init__(self, ls):
        self.ls = ls
        self._workspace = None
        self._roots: list[str] = []
        self.index_task = None  # the background index of the current workspace (tests wait on it)

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
            self._workspace = Workspace(self._roots, index_later=True)
            if old is not None:
                self._workspace.take_overlays(old)
            self._start_index(self._workspace)
        return self._workspace

    # -- the background index ---------------------------------------------------------------------------------
    def _start_index(self, workspace) -> None:
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:  # (no event loop: nothing to wait on, index now)
            workspace.build_index()
            return
        self.index_task = loop.create_task(self._index(workspace))
        self.index_task.add_done_callback(_log_failure)

    async def _index(self, workspace) -> None:
        import asyncio
        import time
        import uuid

        from lsprotocol import types

        from . import worker as prio

        ls = self.ls
        progress = ls.work_done_progress
        token = None
        if ls.caps.work_done_progress:
            token = str(uuid.uuid4())
            try:
                await asyncio.wait_for(progress.create_async(token), 5)
            except Exception:  # noqa: BLE001 - progress is a nicety; the index matters
                token = None
        loop = asyncio.get_running_loop()
        if token is not None:
            progress.begin(token, types.WorkDoneProgressBegin(title="bprop-lsp: indexing the workspace",
                                                             cancellable=False, percentage=0))

        def report(done: int, total: int) -> None:
            if token is not None:
                loop.call_soon_threadsafe(progress.report, token, types.WorkDoneProgressReport(
                    message=f"{done}/{total} files", percentage=int(100 * done / max(total, 1))))

        t0 = time.perf_counter()
        scheduler = ls.scheduler
        # The documents opened with the workspace get their first analyses first: those are queued a moment after
        # the didOpen that made the workspace, and the index, once started, gives way only between files.
        await asyncio.sleep(INDEX_DELAY_S)
        try:
            job = scheduler.scan_executor.submit(workspace.build_index, report, scheduler.executor.wait_idle,
                                                 priority=prio.SCAN)
            waiting = await asyncio.wrap_future(job)
        finally:
            if token is not None:
                progress.end(token, types.WorkDoneProgressEnd(
                    message=f"{len(workspace.python_files())} files indexed"))
        log.info("indexed %d files of the workspace in %.0f ms", len(workspace.python_files()),
                 (time.perf_counter() - t0) * 1e3)
        if workspace is not self._workspace or not waiting:
            return
        states = [s for s in list(ls.store.states.values()) if not s.closed and _path(s.doc.uri) in waiting]
        for state in states:
            ls.store.inputs_changed(state)
            log.info("%s: the workspace is indexed, analysing it again", state.doc.uri)
            scheduler.schedule(state)
        if states and ls.caps.pull_diagnostics and ls.caps.diagnostic_refresh:
            try:
                ls.workspace_diagnostic_refresh(None)
            except Exception:  # noqa: BLE001
                log.exception("workspace/diagnostic/refresh failed")

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
