"""Quick fixes for bprop-lsp diagnostics: the finding's own fix (preferred when safe) and "Disable BPxxx for this
line", both read from the diagnostic's data (diagnostic_data.py): the client's copy when it can be trusted, the
server's otherwise."""
from __future__ import annotations

from lsprotocol import types

from .diagnostic_data import DiagnosticData
from .diagnostics import SOURCE
from .edits import text_edit, workspace_edit

KIND = types.CodeActionKind.QuickFix


def maybe_ours(diagnostic: types.Diagnostic) -> bool:
    # Some clients (Vim's ALE) send the context diagnostics back without ``source`` or ``data``.
    if diagnostic.source is not None:
        return diagnostic.source == SOURCE
    return diagnostic.code is None or (isinstance(diagnostic.code, str) and diagnostic.code.startswith("BP"))


def overlaps(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and \
        (b.start.line, b.start.character) <= (a.end.line, a.end.character)


def client_data(diagnostic: types.Diagnostic, version, revision) -> tuple[bool, DiagnosticData | None]:
    """(outdated, trusted) for the data the client sent back: outdated when it is our data of another text (its
    edits no longer apply); trusted, the data itself, when a code action can use it as is: well-formed, of this
    very text, and its fix checked before it was published."""
    data = DiagnosticData.from_json(diagnostic.data)
    if data is None:
        return False, None
    if data.version != version or (data.revision is not None and data.revision != revision):
        return True, None
    if not data.checked or data.revision != revision or (diagnostic.code is not None and diagnostic.code != data.code):
        return False, None
    return False, data


def server_data(result, diagnostic: types.Diagnostic) -> DiagnosticData | None:
    """The server's own copy of the diagnostic's data (fixes checked; also for clients that drop ``data``)."""
    if result is None:
        return None
    for d in result.diagnostics:
        if d.range == diagnostic.range and (diagnostic.code is None or d.code == diagnostic.code):
            return DiagnosticData.from_json(d.data)
    return None


def actions(ls, uri: str, version, diagnostic: types.Diagnostic, data: DiagnosticData) -> tuple[list, list]:
    """(fix actions, noqa actions) for one diagnostic."""
    fixes, noqa = [], []
    if data.fix is not None:
        fixes.append(types.CodeAction(
            title=f"{data.fix.title} ({data.code})",
            kind=KIND,
            diagnostics=[diagnostic],
            is_preferred=data.fix.safe,
            edit=workspace_edit(ls, uri, version, [text_edit(e) for e in data.fix.edits]),
        ))
    if data.noqa is not None:
        noqa.append(types.CodeAction(
            title=f"Disable {data.code} for this line",
            kind=KIND,
            diagnostics=[diagnostic],
            edit=workspace_edit(ls, uri, version, [text_edit(data.noqa)]),
        ))
    return fixes, noqa
