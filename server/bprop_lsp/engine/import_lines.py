"""The words of a file's import statements, read from its bytes without parsing (``import_words``): what the
workspace's importer index searches (``workspace.py``), and what the CLI's cache keeps per file (``cli/cache.py``).
No other engine module is imported here: a run over files without ``bprop`` computes them without loading parso."""
from __future__ import annotations

import re

_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_IMPORT_STARTS = (b"from ", b"from\t", b"import ", b"import\t")


def import_words(raw: bytes) -> frozenset[bytes]:
    """The words of the lines of ``raw`` that start an import statement and spell ``import`` (a parenthesised
    from-import to its ``)``): found by searching for ``import`` (fast), not by reading every line."""
    parts = []
    i = raw.find(b"import")
    while i >= 0:
        start = raw.rfind(b"\n", 0, i) + 1
        end = raw.find(b"\n", i)
        if end < 0:
            end = len(raw)
        line = raw[start:end].lstrip(b" \t")
        if line.startswith(_IMPORT_STARTS):
            if b"(" in line and b")" not in line:
                close = raw.find(b")", end)
                end = close if close >= 0 else end
                line = raw[start:end]
            parts.append(line)
        i = raw.find(b"import", end)
    if not parts:
        return frozenset()
    return frozenset(_IDENTIFIER.findall(b"\n".join(parts)))
