"""``textDocument/hover`` on a custom bprop's name: the signature MindSpore calls it with, what it passes to
each parameter, and the rule docs for any finding there."""
from __future__ import annotations

from lsprotocol import types

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.model import Position


def _contains(span, pos: "Position") -> bool:
    return span.start <= pos <= span.end


def _rule_doc(code: str) -> str:
    try:
        from ..rules import RULES_BY_CODE
    except Exception:  # noqa: BLE001 - the docs are extra; the finding's message is still shown
        return ""
    rule = RULES_BY_CODE.get(code)
    if rule is None:
        return ""
    parts = [rule.summary]
    if getattr(rule, "mindspore_says", ""):
        parts.append(f"MindSpore says: {rule.mindspore_says}")
    if getattr(rule, "fix_title", None):
        parts.append(f"Fix: {rule.fix_title}.")
    return "\n\n".join(parts)


def render(info, findings, markdown: bool) -> str:
    code = (lambda s: f"`{s}`") if markdown else (lambda s: s)
    out = []
    title = f"bprop of {info.owner}" if info.kind == "cell" else "bprop of an ops.Custom op"
    if info.expected is not None:
        out.append(f"{'**' if markdown else ''}{title}{'**' if markdown else ''}: MindSpore calls it as "
                   f"{code('bprop(' + ', '.join(info.expected) + ')')}")
    else:
        out.append(f"{title}: the inputs MindSpore passes are not known statically")
    if info.roles:
        out.append("")
        for param, role in info.roles:
            out.append(f"- {code(param)} ← {role}")
        if info.expected is not None:
            given = len(info.roles) + (1 if info.expected and info.expected[0] == "self" else 0)
            for name in info.expected[given:]:
                out.append(f"- (missing) ← {code(name)}")
    for f in findings:
        out.append("\n---\n" if markdown else "\n")
        head = f"{f.code} {f.name} ({f.severity.value})"
        out.append((f"**{head}**" if markdown else head) + f": {f.message}")
        doc = _rule_doc(f.code)
        if doc:
            out.append("")
            out.append(doc)
        if f.url:
            out.append("")
            out.append(f"[{f.code} documentation]({f.url})" if markdown else f.url)
    return "\n".join(out)


async def hover(ls, params: types.HoverParams):
    state = ls.store.get(params.text_document.uri)
    if state is None:
        return None
    result = await ls.scheduler.current_result(state)
    if result is None:
        return None
    enc = ls.caps.position_encoding
    lines = state.doc.lines()
    pos = lines.from_client(params.position, enc)
    for info in result.analysis.bprops:
        if not _contains(info.name_span, pos):
            continue
        findings = [f for f in result.analysis.findings if f.span.start.line == info.name_span.start.line
                    or _contains(f.span, info.name_span.start)]
        markdown = ls.caps.hover_markdown
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText,
                                         value=render(info, findings, markdown)),
            range=lines.range_to_client(info.name_span, enc),
        )
    return None
