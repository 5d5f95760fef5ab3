"""Findings -> LSP diagnostics (everything a code action needs rides in ``Diagnostic.data``), and the
diagnostic models: push (``publishDiagnostics`` with the version) or pull (``textDocument/diagnostic`` with
result ids), decided at ``initialize`` (``workspace/diagnostic``: workspace_scan.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from .convert import Lines
from .diagnostic_data import DiagnosticData, FixData
from .noqa import noqa_edit

if TYPE_CHECKING:
    from ..engine.model import Finding
    from .server import BpropServer

SOURCE = "bprop-lsp"
SEVERITY = {  # engine Severity values
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


def _edit_data(lines: Lines, span, new_text: str, encoding: str) -> tuple:
    r = lines.range_to_client(span, encoding)
    return (r.start.line, r.start.character, r.end.line, r.end.character, new_text)


def to_diagnostic(ls: "BpropServer", uri: str, version, finding: "Finding", lines: Lines, line_text,
                  revision: int | None = None, *, checked: bool = False) -> types.Diagnostic:
    """``checked``: the finding's fix (if any) was re-parsed and re-checked, so a code action may trust the
    client's copy of the data (diagnostic_data.py)."""
    caps = ls.caps
    enc = caps.position_encoding
    fix = noqa = None
    if finding.fix is not None:
        fix = FixData(finding.fix.title, finding.fix.is_safe,
                      tuple(_edit_data(lines, e.span, e.new_text, enc) for e in finding.fix.edits))
    if finding.noqa_line is not None:
        edit = noqa_edit(line_text(finding.noqa_line), finding.noqa_line, finding.code)
        if edit is not None:
            noqa = _edit_data(lines, edit[0], edit[1], enc)
    # "rev": the server's identity of the text (documents.py): a client's diagnostic of other text with the
    # same version number gets no fix.
    data = DiagnosticData(finding.code, version, revision, fix, noqa, checked or fix is None)
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
        data=data.to_json(),
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
