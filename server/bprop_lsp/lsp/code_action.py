"""``textDocument/codeAction``: gathers the quick fixes and "Disable BPxxx for this line" (quick_fix.py),
"Add a custom bprop to <Cell>" on a construct (add_bprop.py) and ``source.fixAll.bprop-lsp`` (fix_all.py)."""
from __future__ import annotations

from lsprotocol import types

from . import add_bprop, fix_all, quick_fix

KINDS = [quick_fix.KIND, add_bprop.KIND, fix_all.KIND]
OPTIONS = types.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=True)


def _wants(only: list | None, kind: str) -> bool:
    if not only:
        return True
    return any(kind == k or kind.startswith(f"{k}.") for k in (str(getattr(o, "value", o)) for o in only))


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
    ours = [d for d in params.context.diagnostics if quick_fix.maybe_ours(d)]
    if _wants(only, quick_fix.KIND.value) and (ours or not params.context.diagnostics):
        # The client's copy of each diagnostic's data when it is of this text and its fix was checked (no wait);
        # else the server's, once the current result's fixes are checked.
        chosen = []
        for diagnostic in ours:
            outdated, trusted = quick_fix.client_data(diagnostic, version, revision)
            if not outdated:  # (data of an older version of the text: its edits no longer apply)
                chosen.append((diagnostic, trusted))
        if not params.context.diagnostics or any(data is None for _, data in chosen):
            result = await ls.scheduler.verified_result(state)
            if result is None or state.doc.revision != revision:
                return None  # the document changed meanwhile; the client asks again
            if not params.context.diagnostics:
                # A client that sends no context: the diagnostics under the requested range.
                chosen = [(d, None) for d in result.diagnostics if quick_fix.overlaps(d.range, params.range)]
            chosen = [(d, data if data is not None else quick_fix.server_data(result, d)) for d, data in chosen]
        noqa_actions = []
        for diagnostic, data in chosen:
            if data is None:
                continue
            fixes, noqa = quick_fix.actions(ls, uri, version, diagnostic, data)
            actions.extend(fixes)
            noqa_actions.extend(noqa)
        actions.extend(noqa_actions)
    if _wants(only, add_bprop.KIND.value):
        actions.extend(await add_bprop.actions(ls, state, params.range))
        if state.doc.version != version:
            return None
    if _wants(only, fix_all.KIND) or not only:
        action = await fix_all.action(ls, state, explicitly_asked=bool(only), version=version, revision=revision)
        if action is False:
            return actions or None  # the document changed meanwhile
        if action is not None:
            actions.append(action)
    return actions or None
