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
    parts = _client_parts(uri, finding, lines, line_text, caps.position_encoding, caps.related_information)
    return _assemble(finding, parts, version, revision, checked)


def _elsewhere(related, enc: str) -> types.Location:
    """A related location in another file of the workspace (``Related.path``): its URI, the range in the client's
    encoding from that file's lines as on disk (its open text may differ: the range is where the module's text,
    as analysed, had it)."""
    from pygls import uris

    try:
        with open(related.path, encoding="utf-8") as f:
            split = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        split = []
    lines = Lines(lambda i: split[i] if 0 <= i < len(split) else "")
    return types.Location(uri=uris.from_fs_path(related.path) or related.path,
                          range=lines.range_to_client(related.span, enc))


def _client_parts(uri: str, finding: "Finding", lines: Lines, line_text, enc: str, related_information: bool):
    """Everything of a diagnostic but its ``data`` version fields: (range, related, fix data, noqa data)."""
    fix = noqa = None
    if finding.fix is not None:
        fix = FixData(finding.fix.title, finding.fix.is_safe,
                      tuple(_edit_data(lines, e.span, e.new_text, enc) for e in finding.fix.edits))
    if finding.noqa_line is not None:
        edit = noqa_edit(line_text(finding.noqa_line), finding.noqa_line, finding.code)
        if edit is not None:
            noqa = _edit_data(lines, edit[0], edit[1], enc)
    related = None
    if related_information and finding.related:
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=lines.range_to_client(r.span, enc)) if r.path is None
                else _elsewhere(r, enc), message=r.message)
            for r in finding.related
        ]
    return lines.range_to_client(finding.span, enc), related, fix, noqa


def _assemble(finding: "Finding", parts: tuple, version, revision, checked: bool) -> types.Diagnostic:
    rng, related, fix, noqa = parts
    # "rev": the server's identity of the text (documents.py): a client's diagnostic of other text with the
    # same version number gets no fix.
    data = DiagnosticData(finding.code, version, revision, fix, noqa, checked or fix is None)
    return types.Diagnostic(
        range=rng,
        message=finding.message,
        severity=SEVERITY.get(getattr(finding.severity, "value", finding.severity), types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=finding.url) if finding.url else None,
        source=SOURCE,
        related_information=list(related) if related is not None else None,
        data=data.to_json(),
    )


class Conversions:
    """A document's findings in client form, kept from one analysis to the next.

    A keystroke leaves most findings as they were; converting one costs more than its analysis share (positions
    re-counted in the client's units on every line it touches, a noqa edit worked out, a dozen LSP objects). A
    finding's client form depends on the finding (a frozen value: span, message, fix, related spans, noqa line),
    the position encoding, whether the client takes related information, the URI, and the text of the lines its
    conversion read (a column past a non-ASCII character, a line end for the noqa edit): kept under the first
    four, it is used again only while each of those lines reads the same. Only the version fields of ``data``
    are new each time. Entries of findings the last conversion did not see are dropped.
    """

    def __init__(self):
        self._kept: dict = {}

    def convert(self, ls: "BpropServer", uri: str, version, findings, line_text, revision: int | None, *,
                checked: bool) -> list[types.Diagnostic]:
        caps = ls.caps
        enc, related_information = caps.position_encoding, caps.related_information
        texts: dict[int, str] = {}

        def text_of(line: int) -> str:  # each line read once per conversion
            text = texts.get(line)
            if text is None:
                text = texts[line] = line_text(line)
            return text

        kept, self._kept = self._kept, {}
        out = []
        for finding in findings:
            key = (finding, enc, related_information, uri)
            entry = kept.get(key) or self._kept.get(key)
            if entry is None or any(text_of(line) != text for line, text in entry[0]):
                read: dict[int, str] = {}

                def reading(line: int, read=read) -> str:
                    text = read[line] = text_of(line)
                    return text

                parts = _client_parts(uri, finding, Lines(reading), reading, enc, related_information)
                entry = (tuple(read.items()), parts)
            self._kept[key] = entry
            out.append(_assemble(finding, entry[1], version, revision, checked))
        return out


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
