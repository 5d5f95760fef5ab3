"""Engine positions (code points) <-> LSP positions in the negotiated encoding (UTF-8, UTF-16 or UTF-32).

The engine counts columns in code points (Python ``str`` indices) on lines split at ``\\r\\n``, ``\\r`` and
``\\n`` only — exactly how LSP splits lines — so only columns need converting, and only on lines that
hold something other than ASCII.
"""
from __future__ import annotations

from lsprotocol import types

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the engine is imported on first use (server start-up stays short)
    from ..engine.model import Position, Span

UTF8 = types.PositionEncodingKind.Utf8.value
UTF16 = types.PositionEncodingKind.Utf16.value
UTF32 = types.PositionEncodingKind.Utf32.value


def _units(ch: str, encoding: str) -> int:
    o = ord(ch)
    if encoding == UTF16:
        return 2 if o > 0xFFFF else 1
    if encoding == UTF8:
        return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
    return 1


def column_to_client(line: str, column: int, encoding: str) -> int:
    """Code-point ``column`` of ``line`` -> client units (clamped to the line)."""
    column = min(max(column, 0), len(line))
    if encoding == UTF32:
        return column
    head = line[:column]
    if head.isascii():
        return column
    if encoding == UTF8:
        return len(head.encode("utf-8", "surrogatepass"))
    return column + sum(1 for ch in head if ord(ch) > 0xFFFF)


def column_from_client(line: str, units: int, encoding: str) -> int:
    """Client units on ``line`` -> code-point column (clamped; a position inside a character rounds down)."""
    units = max(units, 0)
    if encoding == UTF32 or line.isascii():
        return min(units, len(line))
    seen = 0
    for i, ch in enumerate(line):
        size = _units(ch, encoding)
        if seen + size > units:
            return i
        seen += size
    return len(line)


class Lines:
    """Line access for converting positions; built from the document text once per version."""

    def __init__(self, line_text):
        self._line_text = line_text  # callable: line number -> text without terminator (or "" past the end)

    def to_client(self, pos: "Position", encoding: str) -> types.Position:
        return types.Position(line=pos.line, character=column_to_client(self._line_text(pos.line), pos.column, encoding))

    def range_to_client(self, span: "Span", encoding: str) -> types.Range:
        return types.Range(start=self.to_client(span.start, encoding), end=self.to_client(span.end, encoding))

    def from_client(self, pos: types.Position, encoding: str) -> "Position":
        from ..engine.model import Position

        return Position(pos.line, column_from_client(self._line_text(pos.line), pos.character, encoding))
