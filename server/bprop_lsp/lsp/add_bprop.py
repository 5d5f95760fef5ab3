"""The "Add a custom bprop to <Cell>" refactoring, offered on the ``def construct`` line of a Cell without a bprop.

Inserts after construct ``def bprop(self, <inputs>, out, dout):`` returning one ``zeros_like(<input>)`` per input
(spelled with the file's own ``mindspore.ops`` import; ``from mindspore import ops`` is added at the top of the
imports when there is none). Clients that take LSP 3.18 snippet edits get tab stops on the gradients.
"""
from __future__ import annotations

import asyncio

from lsprotocol import types

from .edits import workspace_edit

KIND = types.CodeActionKind.RefactorRewrite
# How many lines of the requested range are looked at for a ``construct`` (a lightbulb request is one line).
MAX_LINES = 200


def _mentions_construct(doc, first: int, last: int) -> bool:
    return any("construct" in doc.line_text(line) for line in range(first, min(last, first + MAX_LINES) + 1))


def _plan(state, text: str, lines: tuple[int, int]):
    # The document's own session: the parse is the one its analysis already made (no re-parse when unchanged).
    return state.engine_session().plan_skeletons(text, lines=lines)


async def actions(ls, state, rng: types.Range) -> list[types.CodeAction]:
    doc = state.doc
    if not _mentions_construct(doc, rng.start.line, rng.end.line):
        return []
    version, text = doc.version, doc.text
    plan = await asyncio.get_running_loop().run_in_executor(ls.scheduler.executor, _plan, state, text,
                                                            (rng.start.line, rng.end.line))
    if doc.version != version or doc.text is not text or state.closed:
        return []
    enc = ls.caps.position_encoding
    lines = doc.lines()
    out = []
    for skeleton in plan.skeletons:
        at = lines.to_client(skeleton.insert_at, enc)
        where = types.Range(start=at, end=at)
        edits: list = []
        if plan.import_edit is not None:
            edits.append(types.TextEdit(range=lines.range_to_client(plan.import_edit.span, enc),
                                        new_text=plan.import_edit.new_text))
        if ls.caps.snippet_edits:
            edits.append(types.SnippetTextEdit(range=where, snippet=types.StringValue(skeleton.text(snippet=True))))
        else:
            edits.append(types.TextEdit(range=where, new_text=skeleton.text()))
        out.append(types.CodeAction(
            title=f"Add a custom bprop to {skeleton.owner}",
            kind=KIND,
            edit=workspace_edit(ls, doc.uri, version, edits),
        ))
    return out
