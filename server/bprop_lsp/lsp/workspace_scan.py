"""``workspace/diagnostic``: the files of the workspace folders on disk (open documents from their own results),
with work-done progress and a long poll.

A workspace is untrusted input: walking and reading run in threads, never on the event loop, and only regular
files within the CLI's size limit are read (a FIFO named ``x.py`` would block a read for ever, a link
``x.py -> /dev/zero`` would never end). What is skipped is reported in the log, once per set of skipped files.

A file's analysis runs in the scan's child process (scan_process.py, scan_child.py): its parse, its collections
and the freeing of its tree never hold a keystroke up (in process they held the GIL for 150-720 ms at a time). A
file the child ends on (killed, crashed) is logged and not checked again until it changes; a file the engine fails
on is logged and skipped; the scan goes on.
"""
from __future__ import annotations

import asyncio
import logging
import os
import stat
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls import uris

from ..sources import MAX_BYTES, SourceError, iter_paths, read_source
from .diagnostics import to_diagnostic
from .documents import Document
from .scan_process import ChildDied

if TYPE_CHECKING:
    from .server import BpropServer

log = logging.getLogger(__name__)
WORKSPACE_POLL_S = 30.0
SKIPPED_SHOWN = 20


@dataclass
class DiskFile:
    result_id: str | None = None
    text: str | None = None
    skipped: str | None = None  # why the file was not read


def _roots(ls: "BpropServer") -> list[str]:
    roots = []
    for folder in ls.workspace.folders.values():
        path = uris.to_fs_path(folder.uri)
        if path:
            roots.append(path)
    if not roots and ls.workspace.root_path:
        roots.append(ls.workspace.root_path)
    return roots


def list_files(roots: list[tuple[str, tuple[str, ...]]]) -> tuple[list[str], list[str]]:
    """The Python files under each (root, exclude patterns), and what could not be walked (worker thread)."""
    paths: list[str] = []
    problems: list[str] = []

    def skipped(path: str, reason: str, is_error: bool) -> None:
        # The walk's reasons read "a FIFO, not a regular file; skipped": said the way read_file says it.
        if "not a regular file" in reason:
            reason = f"not a regular file ({reason.split(',')[0]})"
        problems.append(f"{path}: {reason}")

    for root, exclude in roots:
        try:
            paths.extend(iter_paths([root], exclude, on_skip=skipped))
        except (OSError, RecursionError) as exc:
            problems.append(f"{root}: cannot walk: {exc.__class__.__name__}: {exc}")
    return paths, problems


def read_file(path: str, settings_hash: int, previous_id: str | None) -> DiskFile:
    """One workspace file, read only when it is a regular file within the size limit (worker thread)."""
    try:
        st = os.stat(path)  # follows links: a link to a device or a FIFO is what it points to
    except OSError as exc:
        return DiskFile(skipped=f"{path}: cannot read: {exc.strerror or exc}")
    if not stat.S_ISREG(st.st_mode):
        return DiskFile(skipped=f"{path}: not a regular file")
    if st.st_size > MAX_BYTES:
        return DiskFile(skipped=f"{path}: {st.st_size / 1e6:.1f} MB is larger than the "
                                f"{MAX_BYTES // (1024 * 1024)} MiB limit")
    result_id = f"disk:{st.st_mtime_ns}:{st.st_size}:{settings_hash & 0xFFFFFFFF:x}"
    if previous_id == result_id:
        return DiskFile(result_id)
    try:
        source = read_source(path)
    except SourceError as exc:
        return DiskFile(skipped=str(exc))
    return DiskFile(result_id, source.text)


def _analyse(text: str, settings, pause=None):
    """A workspace file's findings, without fixes, in the server's process (when no scan process can be started;
    ``scan_child.analyse_file`` is the same analysis, unpaused, in the child). ``pause()`` is called every few
    thousand tokens of the parse, before each rule and after each finding (``engine/preempt.py``): it waits while
    the analysis worker has work, so a keystroke does not share the interpreter with a large file's analysis (the
    GIL would halve it)."""
    from ..checker import RULES
    from ..engine import analyze, polled

    # No fix checks: a closed file's fixes are offered (and checked) once it is opened.
    analysis = analyze(text, settings, rules=polled(RULES, pause), verify_fixes=False, with_syntax_errors=False,
                       pause=pause)
    analysis.findings = [replace(f, fix=None) for f in analysis.findings]
    return analysis


async def workspace_diagnostic(ls: "BpropServer", params: types.WorkspaceDiagnosticParams):
    previous = {p.uri: p.value for p in (params.previous_result_ids or [])}
    if previous and getattr(ls, "_workspace_generation", None) == ls.scheduler.generation:
        # A client that re-asks as soon as it has an answer (VS Code long-polls): hold the request until
        # something changes (or a while passes, for files changed on disk), instead of re-walking the
        # workspace in a loop. $/cancelRequest ends the wait.
        await ls.scheduler.wait_for_change(WORKSPACE_POLL_S)
    ls._workspace_generation = ls.scheduler.generation
    token = params.work_done_token
    progress = ls.work_done_progress
    if token is None and ls.caps.work_done_progress:
        token = str(uuid.uuid4())
        try:
            await asyncio.wait_for(progress.create_async(token), 5)
        except Exception:  # noqa: BLE001 - progress is a nicety; the diagnostics matter
            token = None
    roots = [(root, ls.settings.for_folder(uris.from_fs_path(os.path.join(root, "x.py"))).excludes)
             for root in _roots(ls)]
    if token is not None:
        progress.begin(token, types.WorkDoneProgressBegin(title="bprop-lsp: checking the workspace", cancellable=False,
                                                         percentage=0, message="listing files"))
    items: list = []
    # path -> result id of each file the scan's process ended on: not sent to a process again until it changes.
    crashed = ls.__dict__.setdefault("_workspace_crashed", {})
    try:
        paths, skipped = await asyncio.to_thread(list_files, roots)
        for i, path in enumerate(paths):
            uri = uris.from_fs_path(path)
            state = ls.store.get(uri)
            if state is not None:
                result = await ls.scheduler.current_result(state)
                if result is not None:
                    if previous.get(uri) == result.result_id:
                        items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(
                            uri=uri, version=state.doc.version, result_id=result.result_id))
                    else:
                        items.append(types.WorkspaceFullDocumentDiagnosticReport(
                            uri=uri, version=state.doc.version, items=result.diagnostics, result_id=result.result_id))
                continue
            settings = ls.settings.for_uri(uri)
            disk = await asyncio.to_thread(read_file, path, hash(settings), previous.get(uri))
            if disk.skipped is not None:
                skipped.append(disk.skipped)
            elif disk.text is None:
                items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(
                    uri=uri, version=None, result_id=disk.result_id))
            elif crashed.get(path) == disk.result_id:
                skipped.append(f"{path}: not checked: the workspace check's process ended while checking it "
                               f"(checked again once the file changes)")
            elif "bprop" in disk.text or uri in previous:
                findings = None
                try:
                    findings = await ls.scheduler.scan_file(disk.text, settings, path, _analyse)
                except ChildDied as exc:
                    crashed[path] = disk.result_id
                    ls.log_error(f"bprop-lsp: {path}: {exc}; the file is not checked until it changes")
                    skipped.append(f"{path}: not checked: {exc}")
                except Exception as exc:  # noqa: BLE001 - one file the engine fails on must not end the scan
                    log.exception("the workspace check of %s failed", path)
                    skipped.append(f"{path}: not checked: the check failed: {exc.__class__.__name__}: {exc}")
                if findings is not None:
                    doc = Document(uri, disk.text, None)
                    diags = [to_diagnostic(ls, uri, None, f, doc.lines(), doc.line_text) for f in findings]
                    if diags or uri in previous:
                        items.append(types.WorkspaceFullDocumentDiagnosticReport(
                            uri=uri, version=None, items=diags, result_id=disk.result_id))
            if token is not None and (i % 50 == 0 or i == len(paths) - 1):
                progress.report(token, types.WorkDoneProgressReport(
                    message=f"{i + 1}/{len(paths)} files", percentage=int(100 * (i + 1) / max(len(paths), 1))))
        _report_skipped(ls, skipped)
    finally:
        if token is not None:
            progress.end(token, types.WorkDoneProgressEnd(message=f"{len(items)} file(s) reported"))
    return types.WorkspaceDiagnosticReport(items=items)


def _report_skipped(ls: "BpropServer", skipped: list[str]) -> None:
    key = frozenset(skipped)
    if not skipped or getattr(ls, "_workspace_skipped", None) == key:
        return  # nothing new: the long poll re-scans after every change
    ls._workspace_skipped = key
    shown = "; ".join(skipped[:SKIPPED_SHOWN])
    if len(skipped) > SKIPPED_SHOWN:
        shown += f"; and {len(skipped) - SKIPPED_SHOWN} more"
    ls.log_warning(f"bprop-lsp: the workspace check skipped {len(skipped)} file(s): {shown}")
