"""Open documents: text kept by the server itself (LSP line splitting, exact incremental edits).

pygls' own text store splits lines with ``str.splitlines`` (which also breaks at form feeds, U+2028 …) and
rebuilds the whole text line by line on every change; this store applies an edit as one slice of the
text and keeps line starts, so an edit costs one copy of the text plus a scan for line breaks.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from ..sources import MAX_BYTES
from .convert import Lines, column_from_client
from .diagnostics import Conversions

log = logging.getLogger(__name__)


def oversize(text: str) -> int | None:
    """The UTF-8 size of ``text`` when it is over the analysis limit (the CLI's, ``sources.MAX_BYTES``), else None."""
    if len(text) * 4 <= MAX_BYTES:
        return None  # cheap: no encoding needed
    size = len(text) if len(text) > MAX_BYTES else len(text.encode("utf-8", "surrogatepass"))
    return size if size > MAX_BYTES else None


class Document:
    def __init__(self, uri: str, text: str, version: int | None, language_id: str = "python",
                 notebook_uri: str | None = None):
        self.uri = uri
        self.version = version
        # The server's own identity of the text (DocumentStore.touch): bumped by every open and change, so a
        # client that reuses a version number for new text never gets results (or fixes) of the old text.
        self.revision = 0
        self.language_id = language_id
        self.notebook_uri = notebook_uri
        self._set_text(text)

    @property
    def settings_uri(self) -> str:
        """Where settings are looked up: a notebook cell takes its notebook's (the cell URI is no file path)."""
        return self.notebook_uri or self.uri

    def _set_text(self, text: str) -> None:
        self.text = text
        self._index = None

    @property
    def index(self):
        """The engine's line index of the text (built on first use, once per version)."""
        if self._index is None:
            from ..engine.text import LineIndex

            self._index = LineIndex(self.text)
        return self._index

    @property
    def line_count(self) -> int:
        return self.index.line_count

    def line_text(self, line: int) -> str:
        if line < 0 or line >= self.line_count:
            return ""
        return self.index.line_text(line)

    def lines(self) -> Lines:
        return Lines(self.line_text)

    def offset(self, pos: types.Position, encoding: str) -> int:
        """Offset into ``text`` of a client position (clamped as the spec asks: past the end -> the end)."""
        index = self.index
        if pos.line >= index.line_count:
            return len(self.text)
        if pos.line < 0:
            return 0
        return index.line_start(pos.line) + column_from_client(self.line_text(pos.line), pos.character, encoding)

    def apply_change(self, change: Any, encoding: str) -> None:
        if isinstance(change, types.TextDocumentContentChangePartial) or getattr(change, "range", None) is not None:
            start = self.offset(change.range.start, encoding)
            end = self.offset(change.range.end, encoding)
            if end < start:
                start, end = end, start
            # The new text's line index patched from this one's (built for the offsets above, and for the last
            # result's positions): a keystroke does not rebuild the line table of the whole document.
            index = self.index.replaced(start, end, change.text)
            self.text, self._index = index.text, index
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
    revision: int = 0
    # Why there are no findings without analysing (the analysis raised; the document is too large).
    skipped: str | None = None


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
    too_large: bool = False
    # The engine's per-document state (parse tree, per-statement facts): created on first use, closed with the
    # document. Used from the analysis worker thread only.
    session: object | None = None
    # The findings of the last result in client form, for the next result (diagnostics.Conversions).
    conversions: Conversions = field(default_factory=Conversions)

    def engine_session(self):
        if self.session is None:
            from ..checker import DocumentSession  # the engine loads lazily: server start-up stays short

            self.session = DocumentSession(self.doc.uri)
        return self.session


class DocumentStore:
    def __init__(self):
        self.states: dict[str, DocState] = {}
        # notebook uri -> (version, cell document uris in order)
        self.notebooks: dict[str, list[str]] = {}
        self._revisions = itertools.count(1)

    def open(self, doc: Document) -> DocState:
        """Store ``doc``. A second open of an open URI replaces its text in the same state: requests waiting on
        the document (a pull diagnostic, a code action) get the new text's result instead of waiting for ever."""
        doc.revision = next(self._revisions)
        state = self.states.get(doc.uri)
        if state is None:
            state = self.states[doc.uri] = DocState(doc)
            return state
        log.info("%s opened again: replacing its text", doc.uri)
        for task in (state.task, state.verify_task):
            if task is not None and not task.done():
                task.cancel()
        state.task = state.verify_task = None
        state.doc, state.result, state.dirty, state.too_large = doc, None, False, False
        return state

    def touch(self, state: DocState, version: int | None) -> None:
        """The document's text changed (already applied) and is now ``version``."""
        doc = state.doc
        if version is not None and doc.version is not None and version <= doc.version:
            log.warning("%s: version %s after %s with new text (a client bug): treated as a new version",
                        doc.uri, version, doc.version)
        doc.version = version
        doc.revision = next(self._revisions)

    def inputs_changed(self, state: DocState) -> None:
        """What the document's findings depend on changed, not its text (another module it reads: projects.py):
        a new revision, so its result is no longer fresh."""
        state.doc.revision = next(self._revisions)

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
