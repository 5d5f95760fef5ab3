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
