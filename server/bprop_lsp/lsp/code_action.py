"""``textDocument/codeAction``: a preferred quick fix per fixable diagnostic, "Disable BPxxx for this line",
"Add a custom bprop to <Cell>" on a construct (add_bprop.py), and ``source.fixAll.bprop-lsp`` (its edit computed lazily by ``codeAction/resolve`` when the client can)."""
from __future__ import annotations

from lsprotocol import types

from . import add_bprop
from .diagnostics import SOURCE
from .edits import text_edit, workspace_edit

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
KINDS = [types.CodeActionKind.QuickFix, add_bprop.KIND, FIX_ALL]
OPTIONS = types.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=True)


def _wants(only: list | None, kind: str) -> bool:
    if not only:
        return True
    return any(kind == k or kind.startswith(f"{k}.") for k in (str(getattr(o, "value", o)) for o in only))


def _data(diagnostic: types.Diagnostic) -> dict | None:
    data = diagnostic.data
    if isinstance(data, dict) and "code" in data:
        return data
    return None


def _data_from_result(result, diagnostic: types.Diagnostic) -> dict | None:
    """The server's own copy of the diagnostic's data (fixes checked; also for clients that drop ``data``)."""
    if result is None:
        return None
    for d in result.diagnostics:
        if d.range == diagnostic.range and (diagnostic.code is None or d.code == diagnostic.code):
            return d.data
    return None


def _maybe_ours(diagnostic: types.Diagnostic) -> bool:
    # Some clients (Vim's ALE) send the context diagnostics back without ``source`` or ``data``.
    if diagnostic.source is not None:
        return diagnostic.source == SOURCE
    return diagnostic.code is None or (isinstance(diagnostic.code, str) and diagnostic.code.startswith("BP"))


def _overlaps(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and \
        (b.start.line, b.start.character) <= (a.end.line, a.end.character)


async def code_action(ls, params: types.CodeActionParams):
    if not ls.caps.code_action_literals:
        return None
    uri = params.text_document.uri
    state = ls.store.get(uri)
    if state is None:
        return None
    version, revision = state.doc.version, state.doc.revision
    only = params.context.only
    actions: list[types.CodeAction] = []
    ours = [d for d in params.context.diagnostics if _maybe_ours(d)]
    if _wants(only, types.CodeActionKind.QuickFix.value) and (ours or not params.context.diagnostics):
        result = await ls.scheduler.verified_result(state)
        if result is None or state.doc.revision != revision:
            return None  # the document changed meanwhile; the client asks again
        if not params.context.diagnostics:
            # A client that sends no context: the diagnostics under the requested range.
            ours = [d for d in result.diagnostics if _overlaps(d.range, params.range)]
        noqa_actions = []
        for diagnostic in ours:
            client_data = _data(diagnostic)
            if client_data is not None and (client_data.get("v") != version
                                            or client_data.get("rev", revision) != revision):
                continue  # from an older version of the text: its edits no longer apply
            data = _data_from_result(result, diagnostic)
            if data is None:
                continue
            fix = data.get("fix")
            if fix:
                actions.append(types.CodeAction(
                    title=f"{fix['title']} ({data['code']})",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=bool(fix.get("safe", True)),
                    edit=workspace_edit(ls, uri, version, [text_edit(e) for e in fix["edits"]]),
                ))
            if data.get("noqa"):
                noqa_actions.append(types.CodeAction(
                    title=f"Disable {data['code']} for this line",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    edit=workspace_edit(ls, uri, version, [text_edit(data["noqa"])]),
                ))
        actions.extend(noqa_actions)
    if _wants(only, add_bprop.KIND.value):
        actions.extend(await add_bprop.actions(ls, state, params.range))
        if state.doc.version != version:
            return None
    lazy = ls.caps.code_action_resolve_edit
    # Without resolve support the edit must be computed now (the engine's fix_all re-analyses the file),
    # so such clients get fix-all only when they ask for the kind, not on every lightbulb request.
    if (only and _wants(only, FIX_ALL)) or (not only and lazy and _has_safe_fix(state)):
        action = types.CodeAction(title="bprop-lsp: fix all auto-fixable problems", kind=FIX_ALL,
                                  data={"uri": uri, "version": version, "rev": revision})
        if not lazy:
            from .code_action_resolve import fix_all_edit

            edit = await fix_all_edit(ls, state, version)
            if edit is None or state.doc.revision != revision:
                return actions or None
            action.edit = edit
        actions.append(action)
    return actions or None


def _has_safe_fix(state) -> bool:
    result = state.result
    if result is None:
        return False
    return any(f.fix is not None and f.fix.is_safe for f in result.analysis.findings)
