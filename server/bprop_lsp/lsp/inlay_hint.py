"""``textDocument/inlayHint``: in a custom bprop, after each parameter what MindSpore passes to it (``← x``,
``← out``, ``← dout``) and after each returned gradient the input it belongs to (``→ x``).

Off by default (setting ``inlayHints``); the capability is always advertised (static registration, the pygls
way) and a disabled document answers an empty list. ``workspace/inlayHint/refresh`` after a settings change
makes the client ask again.
"""
from __future__ import annotations

import logging

from lsprotocol import types

log = logging.getLogger(__name__)

OPTIONS = types.InlayHintOptions(resolve_provider=False)


async def inlay_hint(ls, params: types.InlayHintParams) -> list[types.InlayHint] | None:
    uri = params.text_document.uri
    state = ls.store.get(uri)
    if state is None:
        return []
    enabled = ls.settings.editor_for_uri(state.doc.settings_uri).inlay_hints
    _remember(ls, uri, enabled)
    if not enabled:
        return []
    bprops = await ls.scheduler.bprops_of(state)
    enc = ls.caps.position_encoding
    lines = state.doc.lines()
    start = lines.from_client(params.range.start, enc)
    end = lines.from_client(params.range.end, enc)
    hints = []
    for info in bprops:
        for hint in info.hints:
            if not start <= hint.position <= end:
                continue
            hints.append(types.InlayHint(
                position=lines.to_client(hint.position, enc),
                label=hint.label,
                kind=types.InlayHintKind.Parameter if hint.label.startswith("←") else None,
                tooltip=hint.tooltip or None,
                padding_left=True,
            ))
    return hints


def _remember(ls, uri: str, enabled: bool) -> None:
    answered = ls.settings.inlay_hints_answered
    answered[uri] = enabled
    if len(answered) > 2 * len(ls.store.states) + 16:  # forget closed documents
        for gone in [u for u in answered if ls.store.get(u) is None]:
            del answered[gone]


def refresh(ls) -> None:
    """After a settings change: ask the client to re-request inlay hints if they were turned on or off for a
    document it has asked about (not on every change: each refresh makes the client re-ask for every visible
    document)."""
    if not ls.caps.inlay_hint_refresh:
        return
    answered = ls.settings.inlay_hints_answered
    changed = False
    for uri, was in list(answered.items()):
        state = ls.store.get(uri)
        if state is None:
            del answered[uri]
        elif ls.settings.editor_for_uri(state.doc.settings_uri).inlay_hints != was:
            changed = True
    if not changed:
        return
    try:
        ls.workspace_inlay_hint_refresh(None)
    except Exception:  # noqa: BLE001 - a refresh is a nicety; the next request gets the new setting anyway
        log.exception("workspace/inlayHint/refresh failed")
