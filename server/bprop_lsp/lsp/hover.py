"""``textDocument/hover``: on a custom bprop's name, the signature MindSpore calls it with, what it passes to
each parameter, and the rule docs for any finding there; on one of its parameters, what MindSpore passes to that
one; on any finding's range, its rule's docs; on a code in a ``# noqa: BPxxx`` comment, that rule's docs. The docs come from the rule classes (they work offline)."""
from __future__ import annotations

import re

from lsprotocol import types

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.model import Position


def _contains(span, pos: "Position") -> bool:
    return span.start <= pos <= span.end


def _rule(code: str):
    try:
        from ..rules import RULES_BY_CODE
    except Exception:  # noqa: BLE001 - the docs are extra; the finding's message is still shown
        return None
    return RULES_BY_CODE.get(code)


def _rule_doc(code: str, markdown: bool = False) -> str:
    rule = _rule(code)
    if rule is None:
        return ""
    parts = [rule.summary]
    if getattr(rule, "mindspore_says", ""):
        parts.append(f"MindSpore says: {rule.mindspore_says}")
    if getattr(rule, "fix_title", None):
        parts.append(f"Fix: {rule.fix_title}.")
    command = f"bprop-lsp rule {code}"
    parts.append(f"Examples: run {'`' + command + '`' if markdown else command}")
    return "\n\n".join(parts)


def _finding_text(f, markdown: bool) -> list[str]:
    out = []
    head = f"{f.code} {f.name} ({f.severity.value})"
    out.append((f"**{head}**" if markdown else head) + f": {f.message}")
    doc = _rule_doc(f.code, markdown)
    if doc:
        out.append("")
        out.append(doc)
    if f.url:
        out.append("")
        out.append(f"[{f.code} documentation]({f.url})" if markdown else f.url)
    return out


def render_findings(findings, markdown: bool) -> str:
    out: list[str] = []
    for i, f in enumerate(findings):
        if i:
            out.append("\n---\n" if markdown else "\n")
        out.extend(_finding_text(f, markdown))
    return "\n".join(out)


def render_rule(code: str, markdown: bool) -> str | None:
    rule = _rule(code)
    if rule is None:
        return None
    head = f"{rule.code} {rule.name}"
    url = rule.url()
    link = f"[{rule.code} documentation]({url})" if markdown else url
    return "\n\n".join([f"**{head}**" if markdown else head, _rule_doc(code, markdown), link])


def noqa_code_at(line: str, column: int) -> tuple[str, int, int] | None:
    """The rule code of a ``# noqa: BPxxx`` comment under ``column`` (code, start column, end column)."""
    from .noqa import CODES

    for m in CODES.finditer(line):
        if not m.start("codes") <= column <= m.end("codes"):
            continue
        for code in re.finditer(r"[A-Za-z]+\d+", m.group("codes")):
            start, end = m.start("codes") + code.start(), m.start("codes") + code.end()
            if start <= column <= end:
                return code.group().upper(), start, end
    return None


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
        out.extend(_finding_text(f, markdown))
    return "\n".join(out)


def parameter_at(info, line_text: str, pos: "Position"):
    """(parameter, what MindSpore passes, span) for the bprop parameter under ``pos`` (from the inlay hints'
    positions: each ``← x`` hint stands right after its parameter's name), else None."""
    from ..engine.model import Position, Span

    for hint in info.hints:
        if not hint.label.startswith("← ") or hint.position.line != pos.line:
            continue
        end = hint.position.column
        start = end
        while start > 0 and (line_text[start - 1].isalnum() or line_text[start - 1] == "_"):
            start -= 1
        if start < end and start <= pos.column <= end:
            return line_text[start:end], hint, Span(Position(pos.line, start), Position(pos.line, end))
    return None


def render_parameter(info, name: str, hint, markdown: bool) -> str:
    code = (lambda s: f"`{s}`") if markdown else (lambda s: s)
    title = f"bprop of {info.owner}" if info.kind == "cell" else "bprop of an ops.Custom op"
    out = [f"{code(name)} {hint.label}" + (f": {hint.tooltip}" if hint.tooltip else "")]
    if info.expected is not None:
        out += ["", f"{title}: MindSpore calls it as {code('bprop(' + ', '.join(info.expected) + ')')}"]
    return "\n".join(out)


async def hover(ls, params: types.HoverParams):
    state = ls.store.get(params.text_document.uri)
    if state is None:
        return None
    bprops = await ls.scheduler.bprops_of(state)
    result = await ls.scheduler.current_result(state)  # (fresh: the one the bprops are of, unless edited since)
    if result is None:
        return None
    enc = ls.caps.position_encoding
    lines = state.doc.lines()
    pos = lines.from_client(params.position, enc)
    markdown = ls.caps.hover_markdown

    def answer(value: str, span) -> types.Hover:
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText,
                                         value=value),
            range=lines.range_to_client(span, enc),
        )

    for info in bprops:
        if not _contains(info.name_span, pos):
            continue
        findings = [f for f in result.analysis.findings if f.span.start.line == info.name_span.start.line
                    or _contains(f.span, info.name_span.start)]
        return answer(render(info, findings, markdown), info.name_span)
    line_text = state.doc.line_text(pos.line)
    for info in bprops:
        found = parameter_at(info, line_text, pos)
        if found is not None:
            return answer(render_parameter(info, found[0], found[1], markdown), found[2])
    noqa = noqa_code_at(line_text, pos.column)
    if noqa is not None:
        from ..engine.model import Position, Span

        text = render_rule(noqa[0], markdown)
        if text is not None:
            return answer(text, Span(Position(pos.line, noqa[1]), Position(pos.line, noqa[2])))
    under = [f for f in result.analysis.findings if _contains(f.span, pos)]
    if under:
        narrowest = min(under, key=lambda f: (f.span.end.line - f.span.start.line, f.span.end.column - f.span.start.column))
        return answer(render_findings(under, markdown), narrowest.span)
    return None
