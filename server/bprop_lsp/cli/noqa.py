"""``check --add-noqa``: a ``# noqa: CODE`` comment on the line each finding's ``noqa_line`` names (ruff's
``--add-noqa``): codes join an existing ``# noqa: ...`` there, a bare ``# noqa`` is left as it is, another comment
gets the directive in front of it (``# noqa: BP001 # why``)."""
from __future__ import annotations

import io
import re
import tokenize

NOQA = re.compile(r"#\s*noqa(?P<colon>:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)


def _comments(text: str) -> dict[int, tuple[int, str]]:
    """0-based line -> (column, text) of the comment that ends it, read with the tokenizer (never a ``#`` in a
    string)."""
    found: dict[int, tuple[int, str]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                found[tok.start[0] - 1] = (tok.start[1], tok.string)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # what was read before the problem stands
    return found


def add_noqa(text: str, findings) -> tuple[str, int]:
    """``text`` with the directives added and how many lines got one (or a new code in one)."""
    wanted: dict[int, list[str]] = {}
    for f in findings:
        line = f.noqa_line if f.noqa_line is not None else f.span.start.line
        codes = wanted.setdefault(line, [])
        if f.code not in codes:
            codes.append(f.code)
    if not wanted:
        return text, 0
    lines = text.splitlines(keepends=True)
    comments = _comments(text)
    added = 0
    for line, codes in sorted(wanted.items()):
        if line >= len(lines):
            continue
        raw = lines[line]
        body = raw.rstrip("\r\n")
        ending = raw[len(body):]
        comment = comments.get(line)
        if comment is not None:
            col, comment_text = comment
            m = NOQA.match(comment_text)
            if m and not m.group("colon"):
                continue  # a bare noqa already silences every code
            if m:
                have = re.split(r"[\s,]+", m.group("codes").strip())
                new = [c for c in codes if c.upper() not in {h.upper() for h in have}]
                if not new:
                    continue
                directive = f"# noqa: {', '.join(have + new)}"
                body = body[:col] + directive + comment_text[m.end():]
            else:
                body = body[:col] + f"# noqa: {', '.join(codes)} " + comment_text
        else:
            body = body.rstrip() + f"  # noqa: {', '.join(codes)}"
        lines[line] = body + ending
        added += 1
    return "".join(lines), added
