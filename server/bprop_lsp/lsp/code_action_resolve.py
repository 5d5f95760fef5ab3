"""``codeAction/resolve``: compute the fix-all edit only when the user picks the action."""
from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified

from .convert import Lines
from .edits import minimal_edits, workspace_edit


def _fix_all_edits(text: str, settings, lines: Lines, encoding: str) -> list[types.TextEdit]:
    from ..engine import fix_all

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
