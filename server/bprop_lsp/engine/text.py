"""Line/column bookkeeping and edit application on plain ``str`` text."""
from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate
from typing import Iterable

from .model import Edit, Position, Span

# The line breaks both LSP and parso recognise; form feeds and U+2028 are ordinary text.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines without their terminators; a trailing break yields a final empty line (as LSP counts)."""
    return LINE_BREAK.split(text)


class LineIndex:
    """Maps between code-point offsets and (line, column) positions."""

    def __init__(self, text: str, lines: list[str] | None = None):
        """``lines``: ``text`` already split with the line breaks kept (the parser's lines), to not split again."""
        self.text = text
        self._lines = lines
        self._starts: list[int] | None = None
        # (index, delta): the starts from that index on lie ``delta`` further than ``_starts`` says (a move
        # ``replaced`` has not applied: typing in one line moves every line below it, once per keystroke). The
        # list may be shared with the index this one was patched from: it is never changed in place.
        self._shift: tuple[int, int] | None = None

    @property
    def starts(self) -> list[int]:
        """Offset of the start of each line (read on first use: a line count or one line's text needs no table)."""
        if self._shift is not None:
            at, delta = self._shift
            base = self._starts
            self._starts, self._shift = [*base[:at], *map(delta.__add__, base[at:])], None
        if self._starts is None:
            text, lines = self.text, self._lines
            if lines is not None:
                starts = list(accumulate(map(len, lines), initial=0))  # (map: a third faster than a generator)
                starts.pop()  # where the last line ends is not a line start
            elif "\r" in text:
                starts = [0]
                starts.extend(m.end() for m in LINE_BREAK.finditer(text))
            else:  # the common case, in C: ~10x faster than the regex on a large file
                starts = [0, *accumulate(len(line) + 1 for line in text.split("\n")[:-1])]
            self._starts = starts
        return self._starts

    def line_start(self, line: int) -> int:
        """Offset of the start of ``line`` (an index into ``starts``), without applying a pending move."""
        if self._shift is None:
            return self.starts[line]
        at, delta = self._shift
        start = self._starts[line]
        return start + delta if (line if line >= 0 else line + len(self._starts)) >= at else start

    def _lines_up_to(self, offset: int) -> int:
        """How many line starts are at or before ``offset`` (``bisect_right(starts, offset)``)."""
        if self._shift is None:
            return bisect_right(self.starts, offset)
        at, delta = self._shift
        base = self._starts
        if at < len(base) and offset >= base[at] + delta:
            return bisect_right(base, offset - delta, at)
        return bisect_right(base, offset, 0, at)

    def replaced(self, start: int, end: int, new_text: str, *, result: str | None = None) -> "LineIndex":
        """The index of this text with ``[start, end)`` replaced by ``new_text``: its line table patched, not built
        again over every line, when this one's is built and neither text has a ``\r`` (then every line break
        is a ``\n``: the starts up to the edit stay, those inside it go, ``new_text``'s come in and the rest
        move by the change in length). An edit within one line only records the move of the lines below it,
        applied when the whole table is asked for: typing along a line in a 10,000-line file patches nothing.
        ``result``: the new text, when the caller has it already."""
        text = result if result is not None else self.text[:start] + new_text + self.text[end:]
        index = LineIndex(text)
        if self._starts is None or "\r" in new_text or "\r" in self.text:
            return index
        first = self._lines_up_to(start)  # the starts at or before ``start`` stay
        last = self._lines_up_to(end)  # those up to ``end`` follow a "\n" the edit removed
        delta = len(new_text) - (end - start)
        if first == last and "\n" not in new_text:
            if self._shift is not None and self._shift[0] != first:
                self.starts  # noqa: B018 - a move pending from another line: apply it (once) first
            moved = (self._shift[1] if self._shift is not None else 0) + delta
            index._starts = self._starts
            index._shift = (first, moved) if moved else None
            return index
        old = self.starts
        inserted = []
        at = new_text.find("\n")
        while at != -1:
            inserted.append(start + at + 1)
            at = new_text.find("\n", at + 1)
        index._starts = [*old[:first], *inserted, *(map(delta.__add__, old[last:]) if delta else old[last:])]
        return index

    def offset(self, pos: Position) -> int:
        line = min(max(pos.line, 0), self.line_count - 1)
        start = self.line_start(line)
        end = self.line_end(line)
        return min(start + max(pos.column, 0), end)

    def line_end(self, line: int) -> int:
        """Offset of the end of ``line``'s content (before its terminator)."""
        if line + 1 < self.line_count:
            nxt = self.line_start(line + 1)
            if self.text[nxt - 2 : nxt] == "\r\n":
                return nxt - 2
            return nxt - 1
        return len(self.text)

    def position(self, offset: int) -> Position:
        line = self._lines_up_to(offset) - 1
        return Position(line, offset - self.line_start(line))

    def line_text(self, line: int) -> str:
        return self.text[self.line_start(line) : self.line_end(line)]

    @property
    def line_count(self) -> int:
        if self._starts is None:
            if self._lines is not None:
                return len(self._lines)  # (the parser's lines: a count of a large text's "\n" costs ~0.8 ms)
            count = self.__dict__.get("_line_count")
            if count is None and "\r" not in self.text:
                count = self.__dict__["_line_count"] = self.text.count("\n") + 1  # what the table would hold
            if count is not None:
                return count
        return len(self.starts) if self._shift is None else len(self._starts)

    def newline(self) -> str:
        """The file's dominant line terminator, for text a fix inserts."""
        m = LINE_BREAK.search(self.text)
        return m.group(0) if m else "\n"


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (positions refer to the original text)."""
    index = LineIndex(text)
    resolved = sorted(
        ((index.offset(e.span.start), index.offset(e.span.end), e.new_text) for e in edits),
        key=lambda t: (t[0], t[1]),
    )
    out: list[str] = []
    cursor = 0
    for start, end, new_text in resolved:
        if start < cursor:
            raise ValueError("overlapping edits")
        out.append(text[cursor:start])
        out.append(new_text)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def span_of_offsets(index: LineIndex, start: int, end: int) -> Span:
    return Span(index.position(start), index.position(end))


# ---------------------------------------------------------------------------------------------- line diffs
_MATCH_CELLS = 40_000  # a gap of a x b lines with no anchor is matched by difflib up to this many pairs


def line_opcodes(old: list, new: list) -> list[tuple[str, int, int, int, int]]:
    """``difflib.SequenceMatcher(None, old, new).get_opcodes()``-shaped opcodes in time about linear in the lines.

    ``SequenceMatcher`` is quadratic to cubic in the lines between the first and the last change, and a fix-all
    of many findings changes lines all over a file (400 findings: 6 s, 800: over a minute). Here: the common
    prefix and suffix are skipped at C speed; a middle of as many lines in both is compared line by line (the
    shape of nearly every fix: a line rewritten in place); otherwise the lines that occur once in both middles
    and in the same order (patience diff's anchors) split it into gaps, each matched the same way, with
    difflib only for a gap small enough, and as one replaced block past that.
    """
    n_old, n_new = len(old), len(new)
    prefix, suffix = common_ends(old, new, 0, n_old, 0, n_new)
    ops: list[tuple[str, int, int, int, int]] = []
    if prefix:
        ops.append(("equal", 0, prefix, 0, prefix))
    _middle(old, new, prefix, n_old - suffix, prefix, n_new - suffix, ops, anchored=False)
    if suffix:
        ops.append(("equal", n_old - suffix, n_old, n_new - suffix, n_new))
    return _merged(ops)


def common_ends(old: list, new: list, a1: int, a2: int, b1: int, b2: int) -> tuple[int, int]:
    """Lengths of the common prefix and suffix of ``old[a1:a2]`` and ``new[b1:b2]`` (compared in slices first:
    a list slice compares at C speed)."""
    limit = min(a2 - a1, b2 - b1)
    step = 256
    prefix = 0
    while prefix + step <= limit and old[a1 + prefix:a1 + prefix + step] == new[b1 + prefix:b1 + prefix + step]:
        prefix += step
    while prefix < limit and old[a1 + prefix] == new[b1 + prefix]:
        prefix += 1
    room = limit - prefix
    suffix = 0
    while suffix + step <= room and old[a2 - suffix - step:a2 - suffix] == new[b2 - suffix - step:b2 - suffix]:
        suffix += step
    while suffix < room and old[a2 - suffix - 1] == new[b2 - suffix - 1]:
        suffix += 1
    return prefix, suffix


def _middle(old: list, new: list, a1: int, a2: int, b1: int, b2: int, ops: list, *, anchored: bool) -> None:
    """Opcodes for ``old[a1:a2]`` -> ``new[b1:b2]``, whose first and last lines differ (appended to ``ops``)."""
    if a1 == a2 and b1 == b2:
        return
    if a1 == a2:
        ops.append(("insert", a1, a2, b1, b2))
        return
    if b1 == b2:
        ops.append(("delete", a1, a2, b1, b2))
        return
    if a2 - a1 == b2 - b1:
        # Line i of one is line i of the other: runs of equal and of replaced lines.
        i = a1
        offset = b1 - a1
        while i < a2:
            j = i
            if old[i] == new[i + offset]:
                while j < a2 and old[j] == new[j + offset]:
                    j += 1
                ops.append(("equal", i, j, i + offset, j + offset))
            else:
                while j < a2 and old[j] != new[j + offset]:
                    j += 1
                ops.append(("replace", i, j, i + offset, j + offset))
            i = j
        return
    if not anchored:
        anchors = _anchors(old, new, a1, a2, b1, b2)
        if anchors:
            i, j = a1, b1
            for ai, bj in (*anchors, (a2, b2)):
                _gap(old, new, i, ai, j, bj, ops)
                if ai < a2:
                    ops.append(("equal", ai, ai + 1, bj, bj + 1))
                i, j = ai + 1, bj + 1
            return
    if (a2 - a1) * (b2 - b1) <= _MATCH_CELLS:
        import difflib

        matcher = difflib.SequenceMatcher(None, old[a1:a2], new[b1:b2], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            ops.append((tag, a1 + i1, a1 + i2, b1 + j1, b1 + j2))
        return
    ops.append(("replace", a1, a2, b1, b2))


def _gap(old: list, new: list, a1: int, a2: int, b1: int, b2: int, ops: list) -> None:
    """A stretch between two anchors: its common ends, and the middle matched without looking for anchors again
    (the lines unique in the whole middle were the anchors; the gap's own unique lines are rarely worth it)."""
    prefix, suffix = common_ends(old, new, a1, a2, b1, b2)
    if prefix:
        ops.append(("equal", a1, a1 + prefix, b1, b1 + prefix))
    _middle(old, new, a1 + prefix, a2 - suffix, b1 + prefix, b2 - suffix, ops, anchored=True)
    if suffix:
        ops.append(("equal", a2 - suffix, a2, b2 - suffix, b2))


def _anchors(old: list, new: list, a1: int, a2: int, b1: int, b2: int) -> list[tuple[int, int]]:
    """(i, j) of the lines that occur exactly once in ``old[a1:a2]`` and once in ``new[b1:b2]``, the longest
    run of them in the same order in both (patience sorting: O(n log n))."""
    from bisect import bisect_left

    seen: dict = {}
    for i in range(a1, a2):
        line = old[i]
        seen[line] = -1 if line in seen else i
    in_new: dict = {}
    for j in range(b1, b2):
        line = new[j]
        if seen.get(line, -1) >= 0:
            in_new[line] = -1 if line in in_new else j
    pairs = sorted((seen[line], j) for line, j in in_new.items() if j >= 0)
    if not pairs:
        return []
    # Longest increasing subsequence of the j's (pairs are in i order).
    tails: list[int] = []  # tails[k]: the smallest j ending an increasing run of length k + 1
    tail_at: list[int] = []  # index in pairs of that j
    back: list[int] = []
    for k, (_, j) in enumerate(pairs):
        pos = bisect_left(tails, j)
        back.append(tail_at[pos - 1] if pos else -1)
        if pos == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[pos] = j
            tail_at[pos] = k
    out = []
    k = tail_at[-1]
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    out.reverse()
    return out


def _merged(ops: list) -> list[tuple[str, int, int, int, int]]:
    """Adjacent opcodes of the same tag joined (empty ones dropped); two adjacent changes of different kinds are
    one ``replace``, as difflib reports them."""
    out: list = []
    for op in ops:
        tag, i1, i2, j1, j2 = op
        if i1 == i2 and j1 == j2:
            continue
        if out:
            ptag, p1, p2, q1, q2 = out[-1]
            if ptag == tag or (ptag != "equal" and tag != "equal"):
                if ptag != tag:
                    tag = "replace"
                out[-1] = (tag, p1, i2, q1, j2)
                continue
        out.append((tag, i1, i2, j1, j2))
    return out
