"""Open documents: text kept by the server itself (LSP line splitting, exact incremental edits).

pygls' own text store splits lines with ``str.splitlines`` (which also breaks at form feeds, U+2028 …) and
rebuilds the whole text line by line on every change; this store applies an edit as one slice of the
text and keeps line starts, so an edit costs one copy of the text plus a scan for line breaks.
"""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from .convert import Lines, column_from_client

# The line breaks LSP (and the engine, engine/text.py) recognise; form feeds and U+2028 are ordinary text.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Document:
    def __init__(self, uri: str, text: str, version: int | None, language_id: str = "python",
                 notebook_uri: str | None = None):
        self.uri = uri
        self.version = version
        self.language_id = language_id
        self.notebook_uri = notebook_uri
        self._set_text(text)

    @property
    def settings_uri(self) -> str:
        """Where settings are looked up: a notebook cell takes its notebook's (the cell URI is no file path)."""
        return self.notebook_uri or self.uri

    def _set_text(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            starts = [0]
            starts.extend(m.end() for m in LINE_BREAK.finditer(self.text))
            self._starts = starts
        return self._starts

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line_text(self, line: int) -> str:
        starts = self.starts
        if line < 0 or line >= len(starts):
            return ""
        start = starts[line]
        if line + 1 < len(starts):
            end = starts[line + 1]
            end -= 2 if self.text[end - 2:end] == "\r\n" else 1
        else:
            end = len(self.text)
        return self.text[start:end]

    def lines(self) -> Lines:
        return Lines(self.line_text)

    def offset(self, pos: types.Position, encoding: str) -> int:
        """Offset into ``text`` of a client position (clamped as the spec asks: past the end -> the end)."""
        starts = self.starts
        if pos.line >= len(starts):
            return len(self.text)
        if pos.line < 0:
            return 0
        return starts[pos.line] + column_from_client(self.line_text(pos.line), pos.character, encoding)

    def apply_change(self, change: Any, encoding: str) -> None:
        if isinstance(change, types.TextDocumentContentChangePartial) or getattr(change, "range", None) is not None:
            start = self.offset(change.range.start, encoding)
            end = self.offset(change.range.end, encoding)
            if end < start:
                start, end = end, start
            self._set_text(self.text[:start] + change.text + self.text[end:])
        else:
            self._set_text(change.text)


@dataclass
class Result:
    """One analysis of one document version under one set of settings, converted for the client."""

    version: int | None
    settings: Any
    analysis: Any
    diagnostics: list
    result_id: str
    # Whether every fix in ``analysis`` was re-parsed and re-checked (done after the diagnostics went out).
    verified: bool = True
    checking: bool = False


@dataclass
class DocState:
    doc: Document
    result: Result | None = None
    task: asyncio.Task | None = None
    verify_task: asyncio.Task | None = None
    analysed_once: bool = False
    dirty: bool = False
    last_start: float = -1e9
    waiters: list = field(default_factory=list)
    closed: bool = False


class DocumentStore:
    def __init__(self):
        self.states: dict[str, DocState] = {}
        # notebook uri -> (version, cell document uris in order)
        self.notebooks: dict[str, list[str]] = {}

    def open(self, doc: Document) -> DocState:
        old = self.states.get(doc.uri)
        if old is not None:
            old.closed = True
            if old.task is not None:
                old.task.cancel()
        state = DocState(doc)
        self.states[doc.uri] = state
        return state

    def get(self, uri: str) -> DocState | None:
        return self.states.get(uri)

    def close(self, uri: str) -> DocState | None:
        state = self.states.pop(uri, None)
        if state is not None:
            state.closed = True
            for task in (state.task, state.verify_task):
                if task is not None and not task.done():
                    task.cancel()
            for fut in state.waiters:
                if not fut.done():
                    fut.set_result(None)  # waiters re-check and see the document closed
        return state
