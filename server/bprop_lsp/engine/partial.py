"""Parse only the top-level statements that can matter, for a one-shot analysis (the CLI; issue 10).

Most of a model file is Cells, configs and helpers that no rule reads: parsing them with parso is most of what
``bprop-lsp check`` costs. Here a text is split into its top-level statements by a lexer made of C-speed regexes
(strings, comments, backslash continuations and brackets respected), the statements that can affect a finding are
found by a closure over the names they mention and bind, and every other statement's code lines are turned into
comments before parso parses the text:

* every kept statement keeps its lines and columns, so spans and fixes are those of the real text;
* the text stays the same words in the same places (only ``#`` added in front of code lines), so whatever the
  engine reads from the whole text (``jit`` anywhere, how often a name occurs, ``# noqa``, a class name's
  mentions) reads the same; only the tree lacks the commented statements.

A statement is kept when it is an import, mentions a trigger (``bprop``, ``Custom``, ``set_context`` …), or is
linked to a kept one through a name (see ``_closure``). When anything is unsure (an unterminated string, a form
feed, a 3.12 f-string, a tree that does not parse cleanly, a fix that edits a commented line …) the caller gets
None and parses the whole text: being conservative only costs speed. ``tests/test_partial.py`` and the engine
fuzz compare every finding (span, message, severity, fix edits) with a full parse's.
"""
from __future__ import annotations

import bisect
import itertools
import keyword
import re
from dataclasses import dataclass

# A string (any prefix: the letters before the quote are read separately), a comment, a backslash continuation, or
# a quote no string starts at (unterminated: unsure). Raw strings tokenize like others: a backslash keeps the quote.
# (Bodies as unrolled loops, ``[^"\\]*(?:\\.[^"\\]*)*``: a character class per run, not an alternation per character.)
_LEXEME = re.compile(r"""
  [^"'\#\\]*  # what lies before (a run matched at C speed: most of the text)
  (?: (?P<string> "{3}[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"{3}
              | '{3}[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'{3}
              | "[^"\\\n]*(?:\\.[^"\\\n]*)*"
              | '[^'\\\n]*(?:\\.[^'\\\n]*)*' )
  | (?P<comment> \#[^\n]* )
  | (?P<continuation> \\\r?\n )
  | (?P<stray> ["'\\] )
  | (?P<end> \Z ) )  # (so that the run before the end is matched once, not retried from every position)
""", re.S | re.X)
# Characters this splitter does not model the way Python's tokenizer does (a ``\r`` line break not part of
# ``\r\n``, form feeds resetting indentation, a BOM, NUL): such a text is parsed in full.
_UNSURE_CHARS = re.compile("\r(?!\n)|[\f\v\x00\ufeff]")
_STATEMENT_START = re.compile(r"^\S", re.M)
# A col-0 line that continues the statement above it.
_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")
_IMPORT = re.compile(r"(?:import|from)\b")
_DEF_NAME = re.compile(r"(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
_WORD = re.compile(r"\w+")

# Substrings that make a statement matter by themselves: every rule is about a custom bprop (cells, ``ops.Custom``,
# ``bprop_getters`` and other registries through ``.register``, ``custom_vjp``); ``set_context`` decides the mode
# of the whole file; ``type(`` can build a Cell; imports anywhere feed ``Program.imports``; ``__future__``,
# ``global`` and ``nonlocal`` depend on more than their statement. (Found with ``str.find``: a regex alternation
# tries every branch at every position.)
_TRIGGERS = ("bprop", "Custom", "custom_vjp", "set_context", ".register", "__future__", "global", "nonlocal",
             "import", "type")
# A ``@jit`` function that takes a gradient decides the mode of every cell it reaches through any assignment in the
# file (analysis._reaches): such a file is parsed in full.
_JIT = re.compile(r"jit|ms_function")
_GRADIENT = re.compile(r"grad|Grad|vjp|jvp|TrainOneStep")
# Gradient transforms: ``grad(net)(x)`` is a call of whatever ``net`` is bound to.
_TRANSFORM = re.compile(r"grad|vjp|GradOperation")
# Syntax CPython parses and parso may not (``match``/``case``, ``except*``, PEP 646 ``a[*b]`` and ``*args: *Ts``,
# 3.12's ``type X = …`` and ``def f[T]``): a full parse has errors there that may disturb the statements around,
# so such a text is parsed in full (the text starts with a line break for the first line's sake).
# (Several patterns, each starting with a rare character: one alternation is tried at every position.)
_PARSO_LAGS = (re.compile(r"\n[ \t]*(?:match|case|type)\b"), re.compile(r"except[ \t]*\*"),
               re.compile(r"[\[:][ \t]*\*"))
_GENERIC_DEF_REV = re.compile(r"\[[ \t]*\w+[ \t]+(?:fed|ssalc)(?!\w)")  # ``def f[`` reversed

# The regexes below run over a statement's code reversed: a pattern starting with a rare character (``=``, ``(``)
# is scanned for at C speed, where one starting with ``\w`` is tried at every letter.
# ``name =`` (not ``==``, ``<=``, ``+=`` …, not ``.name =``): what ``Program.assignments`` holds, over-approximated.
# Groups: the name (reversed), the line break before it if it is first on its line, and the character before it
# when that is ``(``, ``,``, ``:`` or ``.``: a keyword argument or default (``f(a=1)``), a tuple element, an
# annotation (``a: int = 1``) or an attribute, none of which binds the name (see ``_binds``).
_ASSIGNED_REV = re.compile(r"=(?<!==)(?![=!<>+\-*/%&|^@:])\s*(\w+)[ \t]*(\n?)\s*([(,:.]?)")
# ``def name``/``class name`` at any depth (not reversed: ``d`` and ``c`` are rare enough).
_ANY_DEF = re.compile(r"(?:def|class)[ \t]+(\w+)")
# ``name(``: a call of a bare name (reversed; not an attribute call, not a ``def``/``class`` header).
_CALLED_REV = re.compile(r"\([ \t]*(\w+)(?![ \t]*(?:\.|fed\b|ssalc\b))")
_COMPOUND = re.compile(r"[ \t]*(?:for|if|elif|while|with|except|else|try|finally|case|match|async)\b")
_ANNOTATED = re.compile(r"(?:.*[(,])?[ \t]*[^\W\d]\w*[ \t]*")


@dataclass
class Statement:
    """One top-level statement: lines ``[first, end)`` (0-based; ``end`` is the next statement's first line, so
    the comments and blank lines after it are in its range) and what it binds and reads, as far as words tell."""

    first: int
    end: int
    start: int  # text offset of its first line
    text: str
    code: str  # ``text`` with strings and comments blanked (same lines)
    kind: str  # "import" | "def" (class, def, decorated) | "other"
    top: frozenset  # names it binds at module level (over-approximated)
    binds: frozenset  # names it binds at any depth (over-approximated)
    calls: frozenset  # bare names it calls (over-approximated)
    transforms: bool  # mentions a gradient transform
    trigger: bool  # holds a word that makes it matter by itself (``_TRIGGERS``)
    _words: frozenset | None = None
    _code_words: frozenset | None = None
    _certain: frozenset | None = None

    @property
    def words(self) -> frozenset:
        """Every identifier in it, strings and comments included."""
        if self._words is None:
            self._words = frozenset(_WORD.findall(self.text))
        return self._words

    @property
    def code_words(self) -> frozenset:
        """The identifiers of its code (what it can read)."""
        if self._code_words is None:
            self._code_words = frozenset(_WORD.findall(self.code))
        return self._code_words

    @property
    def certain(self) -> frozenset:
        """Names it certainly binds (an under-approximation): ``def``/``class`` names and ``name =`` lines."""
        if self._certain is None:
            self._certain = _bindings(self.code)[1]
        return self._certain


def split_statements(text: str) -> list[tuple[int, int]] | None:
    """The top-level statements of ``text`` as 0-based line ranges ``[first, end)`` covering every line from the
    first statement on (a statement's range runs to the next statement's first line); None when unsure."""
    split = _split(text)
    return None if split is None else split[0]


def _split(text: str) -> tuple[list[tuple[int, int]], str] | None:
    """``split_statements`` and the text's code: strings and comments blanked, continuations broken, the lines
    where they were."""
    if _UNSURE_CHARS.search(text):
        return None
    unsure = []

    def blank(m: re.Match) -> str:
        kind = m.lastgroup
        at = m.start(kind)
        before = text[m.start():at]
        if kind == "string":
            s = m.group(kind)
            if not _fstring_ok(text, at, s):
                unsure.append(at)
            n = s.count("\n")
            # The lines a string spans start inside it: never a statement's start.
            return before + ('""' + "\n " * n if n else '""')
        if kind == "comment" or kind == "end":
            return before
        if kind == "continuation":
            return before + " \n "  # the next line continues this one
        unsure.append(at)
        return m.group()

    code = _LEXEME.sub(blank, text)
    if unsure:
        return None
    starts: list[int] = []
    depth = 0
    prev = 0
    line = 0
    for m in _STATEMENT_START.finditer(code):
        at = m.start()
        segment = code[prev:at]
        depth += (segment.count("(") + segment.count("[") + segment.count("{")
                  - segment.count(")") - segment.count("]") - segment.count("}"))
        line += segment.count("\n")
        prev = at
        if depth < 0:
            return None
        if depth or (starts and _CLAUSE.match(code, at)):
            continue
        starts.append(line)
    segment = code[prev:]
    depth += (segment.count("(") + segment.count("[") + segment.count("{")
              - segment.count(")") - segment.count("]") - segment.count("}"))
    if depth:
        return None
    total = line + segment.count("\n") + 1
    ranges = []
    for i, first in enumerate(starts):
        ranges.append((first, starts[i + 1] if i + 1 < len(starts) else total))
    # A decorator's statement is the decorated def or class below it.
    merged: list[tuple[int, int]] = []
    lines = None
    for first, end in ranges:
        if merged:
            prev_first = merged[-1][0]
            if lines is None:
                lines = text.split("\n")
            if lines[prev_first].startswith("@") and _decorators_only(lines, merged[-1]):
                merged[-1] = (prev_first, end)
                continue
        merged.append((first, end))
    return merged, code


def _decorators_only(lines: list[str], span: tuple[int, int]) -> bool:
    """Whether the statement in ``span`` is still only decorators (its own def/class comes later)."""
    first, end = span
    return not any(_DEF_NAME.match(lines[i]) for i in range(first, end))


def _fstring_ok(text: str, start: int, body: str) -> bool:
    """False for an f-string whose braces do not balance: a 3.12 f-string nesting its own quotes, which this lexer
    reads as two strings."""
    prefix = text[max(0, start - 2):start]
    if "f" not in prefix.lower() or "{" not in body and "}" not in body:
        return True
    inner = body.replace("{{", "").replace("}}", "")
    return inner.count("{") == inner.count("}")


def _bindings(code: str) -> tuple[frozenset, frozenset]:
    """(the names ``code`` may bind at any depth, the names it certainly binds), bindings as ``Program`` records
    them (``def``/``class`` names and ``name = …`` targets): the first never misses one, the second never holds a
    name not bound."""
    rev = code[::-1]
    n = len(code)
    defs = set(_ANY_DEF.findall(code))
    binds, certain = set(defs), set(defs)
    for m in _ASSIGNED_REV.finditer(rev):
        name_rev, newline, pre = m.groups()
        name = name_rev[::-1]
        if pre == "." or name[0].isdigit() or keyword.iskeyword(name):
            continue  # an attribute (``self.x =``), a number, ``in=`` …
        first_on_line = bool(newline) or m.start(2) == n
        if pre in ("(", ","):
            continue  # a keyword argument, a default, a tuple element: ``f(a=1)``, ``a, b = …``
        if pre == ":" and not newline:
            # ``a: int = 1`` (an annotation: before the colon a lone name, maybe a parameter after ``(``/``,``)
            # binds nothing; ``if x: y = 1`` does.
            colon = n - 1 - m.start(3)
            before = code[code.rfind("\n", 0, colon) + 1:colon]
            if not _COMPOUND.match(before) and _ANNOTATED.fullmatch(before):
                continue
            binds.add(name)
            continue
        binds.add(name)
        if first_on_line:
            certain.add(name)  # first on its line, after nothing or a block's ``:`` on an earlier line
    return frozenset(binds), frozenset(certain)


def _calls(code: str) -> frozenset:
    """The bare names ``code`` calls (``name(``; attributes and ``def`` headers apart), over-approximated."""
    return frozenset(name[::-1] for name in _CALLED_REV.findall(code[::-1]))


_TYPE_CALL = re.compile(r"type\s*\(")


def _triggered(text: str, starts: list[int]) -> set[int]:
    """Indices of the statements (starting at text offsets ``starts``) holding a trigger substring."""
    found: set[int] = set()
    for needle in _TRIGGERS:
        at = text.find(needle)
        while at != -1:
            if needle != "type" or (_TYPE_CALL.match(text, at) and not (at and (text[at - 1].isalnum()
                                                                                 or text[at - 1] == "_"))):
                found.add(bisect.bisect_right(starts, at) - 1)
            at = text.find(needle, at + len(needle))
    found.discard(-1)  # before the first statement: comments
    return found


def read_statements(text: str) -> list[Statement] | None:
    """The statements of ``text`` with what they bind and call (read from their code: strings and comments bind
    and call nothing); None when the split is unsure."""
    split = _split(text)
    if split is None:
        return None
    ranges, code = split
    lines = text.split("\n")
    code_lines = code.split("\n")
    line_offsets = [0, *itertools.accumulate(len(line) + 1 for line in lines)]
    triggered = _triggered(text, [line_offsets[first] for first, _ in ranges])
    statements = []
    for index, (first, end) in enumerate(ranges):
        body = "\n".join(lines[first:end])
        body_code = "\n".join(code_lines[first:end])
        head = lines[first]
        if _IMPORT.match(head):
            kind, top = "import", frozenset()
        else:
            i = first
            while i < end and lines[i].startswith("@"):
                i += 1
            name = _DEF_NAME.match(lines[i]) if i < end else None
            if name is not None:
                kind, top = "def", frozenset((name.group(1),))
            else:
                kind, top = "other", None
        binds, certain = _bindings(body_code)
        if top is None:
            top = binds
        statements.append(Statement(first, end, line_offsets[first], body, body_code, kind, top, binds, _calls(body_code),
                                    bool(_TRANSFORM.search(body_code)), index in triggered, _certain=certain))
    return statements


def relevant(statements: list[Statement], text: str) -> list[bool]:
    """Which statements can affect a finding: the closure of the trigger statements over names.

    Kept with a kept statement ``r`` (imports apart: they are always kept and link nothing):

    * statements binding at module level a word of ``r`` (its bases, the classes and functions it uses, module
      constants: ``Program.classes_by_name``, ``resolve_class``, ``const_truth``);
    * statements binding anywhere a word ``r`` reads without binding it itself (``Program.assignments`` and
      ``functions`` are by name over the whole file: ``binds``, call resolution, registry keys);
    * statements binding anywhere a name ``r`` binds and calls (or hands to a gradient transform), or binds at
      module level: a second binding makes ``assignments[name]`` ambiguous, which the engine reads as unknown;
    * statements mentioning a name ``r`` binds at module level (subclasses, call sites, ``self.x = Net()``, helper
      calls, a class's mentions), calling a name ``r`` binds anywhere, or handing one to a gradient transform (a
      call that resolves through ``r``'s assignment).
    """
    n = len(statements)
    keep = [False] * n
    binders: dict[str, list[int]] = {}
    top_binders: dict[str, list[int]] = {}
    callers: dict[str, list[int]] = {}
    transformers = []
    for i, s in enumerate(statements):
        for name in s.binds:
            binders.setdefault(name, []).append(i)
        for name in s.top:
            top_binders.setdefault(name, []).append(i)
        for name in s.calls:
            callers.setdefault(name, []).append(i)
        if s.transforms:
            transformers.append(i)
    bound_names, top_names, called_names = frozenset(binders), frozenset(top_binders), frozenset(callers)
    mentions: dict[str, list[int]] | None = None  # module-level name -> the statements whose words hold it
    searched = 0
    starts = [s.start for s in statements]
    todo = []
    for i, s in enumerate(statements):
        if s.kind == "import" or s.trigger:
            keep[i] = True
            todo.append(i)
    while todo:
        r = statements[todo.pop()]
        if r.kind == "import":
            continue
        found: set[int] = set()
        for word in r.words & top_names:
            found.update(top_binders[word])
        for word in (r.code_words - r.certain) & bound_names:
            found.update(binders[word])
        sensitive = (r.certain if r.transforms else r.certain & r.calls) | r.top
        for name in sensitive & bound_names:
            found.update(binders[name])
        for name in r.binds & called_names:
            found.update(callers[name])
        for j in transformers:
            if not keep[j] and not statements[j].words.isdisjoint(r.binds):
                found.add(j)
        for name in r.top:
            searched += 1
            if mentions is None and searched > _SEARCHES:
                # Many names: every statement's words read once (a search per name is a pass over the text each).
                mentions = {}
                for j, s in enumerate(statements):
                    for word in s.words & top_names:
                        mentions.setdefault(word, []).append(j)
            found.update(mentions.get(name, ()) if mentions is not None else _mentions(text, name, starts))
        for j in found:
            if not keep[j]:
                keep[j] = True
                todo.append(j)
    return keep


# Names whose mentions are searched for one by one before every statement's words are indexed.
_SEARCHES = 32


def _mentions(text: str, name: str, starts: list[int]) -> set[int]:
    """Indices of the statements (at text offsets ``starts``) where the identifier ``name`` stands, strings and
    comments included."""
    found = set()
    size = len(name)
    at = text.find(name)
    while at != -1:
        end = at + size
        if (at == 0 or not _is_word_char(text[at - 1])) and (end == len(text) or not _is_word_char(text[end])):
            found.add(bisect.bisect_right(starts, at) - 1)
        at = text.find(name, end)
    found.discard(-1)
    return found


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def masked_text(text: str) -> str | None:
    """``text`` with the code lines of every statement that cannot matter turned into comments (``#`` in front;
    lines, columns of the kept lines and all words unchanged); None when unsure or when nothing would be
    masked (then the text is parsed as it is)."""
    if any(p.search("\n" + text) for p in _PARSO_LAGS) or _GENERIC_DEF_REV.search(text[::-1]):
        return None
    statements = read_statements(text)
    if not statements:
        return None
    if _JIT.search(text) and any("@" in s.text and _GRADIENT.search(s.text) for s in statements):
        return None
    keep = relevant(statements, text)
    if all(keep):
        return None
    lines = text.split("\n")
    for s, kept in zip(statements, keep):
        if kept:
            continue
        for i in range(s.first, s.end):
            line = lines[i]
            stripped = line.lstrip()
            if stripped and not stripped.startswith("#"):
                lines[i] = "#" + line
    return "\n".join(lines)


def kept_lines(text: str, masked: str) -> set[int] | None:
    """The 0-based lines ``masked`` left as they are in ``text`` (for checking where fixes edit)."""
    a, b = text.split("\n"), masked.split("\n")
    if len(a) != len(b):
        return None
    return {i for i, (x, y) in enumerate(zip(a, b)) if x is y or x == y}


__all__ = ["Statement", "kept_lines", "masked_text", "read_statements", "relevant", "split_statements"]
