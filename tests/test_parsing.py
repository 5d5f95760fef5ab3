"""ParsedDocument's parse of a changing document: the line splitter, and the member-level splice (an edit inside
one member of a top-level class re-parses only that member) giving exactly the tree of a fresh parse."""
from __future__ import annotations

import itertools
import random

from parso.utils import split_lines as parso_split_lines

from bprop_lsp.engine.parsing import split_lines

NASTY = ["", "\n", "\r", "\r\n", "a", "a\n", "a\r", "a\r\n", "\n\n", "\r\r\n", "\x0c", "\x0c\n", "a\x0c", "a\x0cb\n",
         "\x0c\x0c\n\x0c", "x\x0b\x1c\x1d\x1e\x85y\n", "a\u2028b\u2029c\n", "\u2028", "中\u2028文\r\n", "😀\n\x0c",
         "a\r\nb\rc\nd", "  \t\n\t\x0c\n", "\n\x0c", "\x85", "\r\x0c\n", "def f():\n    pass\n"]


def test_split_lines_equals_parsos():
    for text in NASTY:
        assert split_lines(text) == parso_split_lines(text, keepends=True), repr(text)
    pieces = ["a", "\n", "\r", "\r\n", "\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029", "中", " "]
    for n in range(1, 4):
        for combo in itertools.product(pieces, repeat=n):
            text = "".join(combo)
            assert split_lines(text) == parso_split_lines(text, keepends=True), repr(text)
    rnd = random.Random(3)
    for _ in range(2000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randrange(12)))
        assert split_lines(text) == parso_split_lines(text, keepends=True), repr(text)
