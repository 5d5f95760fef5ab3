"""``source.fixAll.bprop-lsp``: every safe fix at once. Its edit is computed by ``codeAction/resolve`` only when
the user picks the action, for clients that can resolve it; at once otherwise."""
from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified

from .convert import Lines
from .diagnostics import SOURCE
from .edits import minimal_edits, workspace_edit

KIND = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"


async def action(ls, state, *, explicitly_asked: bool, version, revision) -> types.CodeAction | None | bool:
    """The fix-all action (None: not offered; False: the document changed while its edit was computed)."""
    lazy = ls.caps.code_action_resolve_edit
    if lazy and explicitly_asked:
        # Asked for by kind (a fix-all on save, usually right after an edit): offered only when the text as it is
        # now has a safe fix, so the analysis of that text is awaited. Its diagnostics are then published before
        # this answer goes out, which matters: lsp-mode 8 (Debian 12's) drops every message that arrives in the
        # same read as the answer to a request it waits for, so a publish written just after the answer to its
        # fix-all-on-save request was lost and the fixed finding stayed on screen (tests/editors/test_emacs.py).
        result = await ls.scheduler.current_result(state)
        if result is None or state.doc.revision != revision:
            return False
        if not _has_safe_fix(state):
            return None
    # Without resolve support the edit must be computed now (the engine's fix_all re-analyses the file),
    # so such clients get fix-all only when they ask for the kind, not on every lightbulb request.
    elif not (explicitly_asked or (lazy and _has_safe_fix(state))):
        return None
    result = types.CodeAction(title="bprop-lsp: fix all auto-fixable problems", kind=KIND,
                              data={"uri": state.doc.uri, "version": version, "rev": revision})
    if not lazy:
        edit = await fix_all_edit(ls, state, version)
        if edit is None or state.doc.revision != revision:
            return False
        result.edit = edit
    return result


def _has_safe_fix(state) -> bool:
    result = state.result
    if result is None:
        return False
    return any(f.fix is not None and f.fix.is_safe for f in result.analysis.findings)


def _fix_all_edits(text: str, settings, lines: Lines, encoding: str) -> list[types.TextEdit]:
    from ..checker import fix_all

    fixed, _count = fix_all(text, settings)
    return [types.TextEdit(range=lines.range_to_client(span, encoding), new_text=new)
            for span, new in minimal_edits(text, fixed)]


async def fix_all_edit(ls, state, version) -> types.WorkspaceEdit | None:
    doc = state.doc
    edits = await ls.scheduler.run(_fix_all_edits, doc.text, ls.settings.for_uri(doc.settings_uri), doc.lines(),
                                   ls.caps.position_encoding)
    if not edits:
        return None
    return workspace_edit(ls, doc.uri, version, edits)


async def resolve(ls, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    state = ls.store.get(data.get("uri", ""))
    if state is None or action.edit is not None:
        return action
    doc = state.doc
    if data.get("version") != doc.version or data.get("rev", doc.revision) != doc.revision:
        raise JsonRpcContentModified(f"{doc.uri} changed since the action was offered")
    version, revision, text = doc.version, doc.revision, doc.text
    edits = await ls.scheduler.run(_fix_all_edits, text, ls.settings.for_uri(doc.settings_uri), doc.lines(),
                                   ls.caps.position_encoding)
    if state.doc is not doc or doc.revision != revision:
        raise JsonRpcContentModified(f"{doc.uri} changed while the fixes were computed")
    action.edit = workspace_edit(ls, doc.uri, version, edits)
    return action
