"""Findings -> LSP diagnostics (everything a code action needs rides in ``Diagnostic.data``), and the
diagnostic models: push (``publishDiagnostics`` with the version) or pull (``textDocument/diagnostic`` with
result ids), decided at ``initialize``; ``workspace/diagnostic`` with work-done progress."""
from __future__ import annotations

import asyncio
import os
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls import uris

from .convert import Lines
from .noqa import noqa_edit

if TYPE_CHECKING:
    from ..engine.model import Finding
    from .server import BpropServer

SOURCE = "bprop-lsp"
WORKSPACE_POLL_S = 30.0
SEVERITY = {  # engine Severity values
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


def _edit_data(lines: Lines, span, new_text: str, encoding: str) -> list:
    r = lines.range_to_client(span, encoding)
    return [r.start.line, r.start.character, r.end.line, r.end.character, new_text]


def to_diagnostic(ls: "BpropServer", uri: str, version, finding: "Finding", lines: Lines, line_text) -> types.Diagnostic:
    caps = ls.caps
    enc = caps.position_encoding
    data = {"v": version, "code": finding.code, "fix": None, "noqa": None}
    if finding.fix is not None:
        data["fix"] = {
            "title": finding.fix.title,
            "safe": finding.fix.is_safe,
            "edits": [_edit_data(lines, e.span, e.new_text, enc) for e in finding.fix.edits],
        }
    if finding.noqa_line is not None:
        edit = noqa_edit(line_text(finding.noqa_line), finding.noqa_line, finding.code)
        if edit is not None:
            data["noqa"] = _edit_data(lines, edit[0], edit[1], enc)
    related = None
    if caps.related_information and finding.related:
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=lines.range_to_client(r.span, enc)), message=r.message)
            for r in finding.related
        ]
    return types.Diagnostic(
        range=lines.range_to_client(finding.span, enc),
        message=finding.message,
        severity=SEVERITY.get(getattr(finding.severity, "value", finding.severity), types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=finding.url) if finding.url else None,
        source=SOURCE,
        related_information=related,
        data=data,
    )


# ----------------------------------------------------------------------------- push
def publish(ls: "BpropServer", uri: str, version, diagnostics: list) -> None:
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))


# ----------------------------------------------------------------------------- pull
async def document_diagnostic(ls: "BpropServer", params: types.DocumentDiagnosticParams):
    uri = params.text_document.uri
    state = ls.store.get(uri)
    if state is None:
        # Not open (or a notebook's markdown cell): nothing of ours to report.
        return types.RelatedFullDocumentDiagnosticReport(items=[], result_id=None)
    result = await ls.scheduler.current_result(state)
    if result is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[], result_id=None)
    if params.previous_result_id is not None and params.previous_result_id == result.result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result.result_id)
    return types.RelatedFullDocumentDiagnosticReport(items=result.diagnostics, result_id=result.result_id)


# ----------------------------------------------------------------------------- workspace
def _workspace_roots(ls: "BpropServer") -> list[str]:
    roots = []
    for folder in ls.workspace.folders.values():
        path = uris.to_fs_path(folder.uri)
        if path:
            roots.append(path)
    if not roots and ls.workspace.root_path:
        roots.append(ls.workspace.root_path)
    return roots


async def workspace_diagnostic(ls: "BpropServer", params: types.WorkspaceDiagnosticParams):
    from ..sources import SourceError, decode, iter_paths
    from ..engine import analyze

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
    roots = _workspace_roots(ls)
    paths: list[str] = []
    for root in roots:
        paths.extend(iter_paths([root], ls.settings.for_uri(uris.from_fs_path(os.path.join(root, "x.py"))).exclude))
    if token is not None:
        progress.begin(token, types.WorkDoneProgressBegin(title="bprop-lsp: checking the workspace", cancellable=False,
                                                         percentage=0, message=f"0/{len(paths)} files"))
    items: list = []
    loop = asyncio.get_running_loop()
    try:
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
            try:
                st = os.stat(path)
                with open(path, "rb") as fh:
                    raw = fh.read()
            except OSError:
                continue
            settings = ls.settings.for_uri(uri)
            result_id = f"disk:{st.st_mtime_ns}:{st.st_size}:{hash(settings) & 0xFFFFFFFF:x}"
            if previous.get(uri) == result_id:
                items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, version=None, result_id=result_id))
            elif b"bprop" in raw or uri in previous:
                try:
                    text, _ = decode(raw, path)
                except SourceError:
                    continue
                analysis = await loop.run_in_executor(ls.scheduler.executor, analyze, text, settings)
                from .documents import Document

                doc = Document(uri, text, None)
                diags = [to_diagnostic(ls, uri, None, f, doc.lines(), doc.line_text) for f in analysis.findings]
                if diags or uri in previous:
                    items.append(types.WorkspaceFullDocumentDiagnosticReport(
                        uri=uri, version=None, items=diags, result_id=result_id))
            if token is not None and (i % 50 == 0 or i == len(paths) - 1):
                progress.report(token, types.WorkDoneProgressReport(
                    message=f"{i + 1}/{len(paths)} files", percentage=int(100 * (i + 1) / max(len(paths), 1))))
            await asyncio.sleep(0)  # lets $/cancelRequest in
    finally:
        if token is not None:
            progress.end(token, types.WorkDoneProgressEnd(message=f"{len(items)} file(s) reported"))
    return types.WorkspaceDiagnosticReport(items=items)
