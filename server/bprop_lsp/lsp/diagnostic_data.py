"""What a bprop-lsp diagnostic carries in ``Diagnostic.data``: everything a code action needs (the fix's edits
and title, the noqa edit), already in the client's position encoding, and the text it belongs to.

A code action trusts the client's copy, as ruff's server does, when it is well-formed, of the document's current
text (version and the server's revision of the text) and its fix was checked (re-parsed and re-checked before it
was published). Otherwise (a client that drops ``data``, a diagnostic published before its fix was checked)
the server's own copy is used.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# [start line, start character, end line, end character, new text], in the client's encoding.
EditData = tuple[int, int, int, int, str]


@dataclass(frozen=True)
class FixData:
    title: str
    safe: bool
    edits: tuple[EditData, ...]


@dataclass(frozen=True)
class DiagnosticData:
    code: str
    version: int | None  # the document version the diagnostic is of (None: a file the client has not opened)
    revision: int | None  # the server's identity of that text (a reused version number gets no fix)
    fix: FixData | None = None
    noqa: EditData | None = None
    checked: bool = False  # whether ``fix`` was re-parsed and re-checked before publishing

    def to_json(self) -> dict[str, Any]:
        fix = None
        if self.fix is not None:
            fix = {"title": self.fix.title, "safe": self.fix.safe, "edits": [list(e) for e in self.fix.edits]}
        return {"code": self.code, "v": self.version, "rev": self.revision, "fix": fix,
                "noqa": list(self.noqa) if self.noqa is not None else None, "checked": self.checked}

    @classmethod
    def from_json(cls, obj: Any) -> "DiagnosticData | None":
        """The data a client sent back, or None when it is not ours or not well-formed (never an exception)."""
        if not isinstance(obj, dict) or not isinstance(obj.get("code"), str):
            return None
        version, revision = obj.get("v"), obj.get("rev")
        if not (version is None or _is_int(version)) or not (revision is None or _is_int(revision)):
            return None
        fix = None
        raw_fix = obj.get("fix")
        if raw_fix is not None:
            if not isinstance(raw_fix, dict) or not isinstance(raw_fix.get("title"), str) \
                    or not isinstance(raw_fix.get("safe", True), bool) or not isinstance(raw_fix.get("edits"), list):
                return None
            edits = tuple(_edit(e) for e in raw_fix["edits"])
            if not edits or any(e is None for e in edits):
                return None
            fix = FixData(raw_fix["title"], raw_fix.get("safe", True), edits)
        noqa = None
        if obj.get("noqa") is not None:
            noqa = _edit(obj["noqa"])
            if noqa is None:
                return None
        checked = obj.get("checked", False)
        return cls(obj["code"], version, revision, fix, noqa, checked is True)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _edit(item: Any) -> EditData | None:
    if not isinstance(item, (list, tuple)) or len(item) != 5:
        return None
    *numbers, text = item
    if not all(_is_int(n) and 0 <= n < 2**31 for n in numbers) or not isinstance(text, str):
        return None
    if (numbers[0], numbers[1]) > (numbers[2], numbers[3]):
        return None
    return (numbers[0], numbers[1], numbers[2], numbers[3], text)
