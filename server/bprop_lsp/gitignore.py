"""gitignore patterns for the directory walk (``.gitignore``, ``.ignore``, ``.git/info/exclude`` and git's global
excludes file), with git's answers.

Why not a library, or git itself: ``pathspec`` (1.1.1) disagrees with ``git ls-files --exclude-standard`` on 24 of the
73 cases of ``tests/test_gitignore_vs_git.py`` (it raises ``bad character range`` on ``[z-a]`` as the old matcher
did, treats ``?`` as one character where git takes one byte, reads ``\\`` in a class literally, re-includes below an
ignored folder). git cannot do it either: it is not always installed, a walk may be outside any work tree, and a
repository's own ``.git/config`` can make git run a program of its choosing (``core.fsmonitor``), which a linter
of untrusted trees must never do. So the rules are implemented here, from git's documentation (gitignore(5)) and
checked against git itself by that test over a table of awkward patterns.

What git does, and so what this does:

* Lines: a UTF-8 BOM at the start is dropped; ``\\r\\n`` ends a line like ``\\n``; blank lines and lines starting
  with ``#`` are skipped; trailing spaces are dropped unless escaped (``\\ ``); ``!`` negates; ``\\#``, ``\\!``
  escape. A trailing ``/`` matches directories only.
* A pattern without a slash (other than a trailing one) matches the last path component at any depth; one with a
  leading or inner slash matches the whole path below its file's folder (a leading ``/`` only anchors).
* Matching is on bytes (a file name is its UTF-8 or file-system bytes): ``?`` and each ``[...]`` match one byte,
  never ``/``; ``*`` matches within a component; ``**`` between slashes (or at either end, or right after the
  literal start of the pattern, as git's prefix shortcut makes it) spans folders.
* ``[...]``: ``!`` or ``^`` first negates, a ``]`` first is literal, ``\\`` escapes, ``a-z`` is a byte range (a
  reversed one, ``z-a``, matches its first byte only, as in git), ``[:alpha:]`` and the other POSIX classes (ASCII).
  An unclosed ``[``, a lone trailing ``\\`` or an unknown ``[:name:]`` make git match nothing with that line: it is
  skipped, with a warning naming the file and line.
* The last matching line of a file wins; a deeper file beats a shallower one, ``.git/info/exclude`` comes after
  every ``.gitignore`` and the global excludes file last. A file under an ignored folder cannot be re-included.

Speed: each ignore file is one regular expression over names and one over paths (an alternation of its lines,
the last first, so the alternative that matches is the last matching line), built on first use; patterns with more
than ``MAX_REGEX_STARS`` wildcard groups are matched apart, by a matcher linear in the name's length (a hostile
``*a*a*a*a*a*a*a*a*b`` would make a backtracking expression take hours over a long name).

Not modelled: ``core.ignoreCase`` (matching is case-sensitive, git's default on Linux), ``include``/``includeIf``
in git's config files.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property

# Regular expressions (C speed) for patterns with at most this many ``*``/``**`` groups; beyond that Python's
# backtracking can take time exponential in the group count on a hostile name, and a bit-parallel matcher that
# is linear in the name's length is used instead.
MAX_REGEX_STARS = 2
MAX_PATTERN_BYTES = 4096  # git's PATH_MAX: a longer line names no path

_SLASH = 0x2F

# Token kinds.
_LIT, _ANY, _SET, _STAR, _STARSTAR, _DIRS = range(6)


@dataclass(frozen=True)
class Pattern:
    negated: bool
    dir_only: bool
    basename: bool  # no slash: matched against the last path component only
    tokens: tuple  # ((kind, value), ...)
    regex: re.Pattern | None  # None: matched with _match_tokens
    text: str  # the line as written, for messages
    line: int = 0

    def matches(self, rel: bytes, name: bytes) -> bool:
        subject = name if self.basename else rel
        if self.regex is not None:
            return self.regex.fullmatch(subject) is not None
        return _match_tokens(self.tokens, subject)


@dataclass(frozen=True)
class IgnoreFile:
    """The patterns of one ignore file; ``base`` is its folder as path parts from the walk's origin."""

    base: tuple[str, ...]
    patterns: tuple[Pattern, ...]

    def decide(self, parts: tuple[str, ...], is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by ``!``) or None (no pattern of this file matches)."""
        name_re, rel_re, slow = self._matchers[is_dir]
        rel = os.fsencode("/".join(parts[len(self.base):]))
        name = rel.rpartition(b"/")[2]
        best = -1
        if name_re is not None:
            found = name_re.fullmatch(name)
            if found is not None:
                best = int(found.lastgroup[1:])
        if rel_re is not None:
            found = rel_re.fullmatch(rel)
            if found is not None:
                best = max(best, int(found.lastgroup[1:]))
        for index, pattern in slow:
            if index <= best:
                break
            if pattern.matches(rel, name):
                best = index
                break
        return None if best < 0 else not self.patterns[best].negated

    @cached_property
    def _matchers(self) -> dict:
        """For files and for folders: one regular expression over the names and one over the paths, each the
        patterns' alternation last line first (so the alternative that matches is the last matching line), and the
        patterns left to the bit-parallel matcher, last first."""
        out = {}
        for is_dir in (False, True):
            names: list[bytes] = []
            paths: list[bytes] = []
            slow = []
            for index in range(len(self.patterns) - 1, -1, -1):
                pattern = self.patterns[index]
                if pattern.dir_only and not is_dir:
                    continue
                if pattern.regex is None:
                    slow.append((index, pattern))
                else:
                    (names if pattern.basename else paths).append(b"(?P<p%d>%s)" % (index, pattern.regex.pattern))
            out[is_dir] = tuple(re.compile(b"|".join(group), re.DOTALL) if group else None
                                for group in (names, paths)) + (tuple(slow),)
        return out


def parse_lines(text: str | bytes) -> tuple[Pattern, ...]:
    return parse_file(text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text)[0]


def parse_file(raw: bytes) -> tuple[tuple[Pattern, ...], list[tuple[int, str]]]:
    """The patterns of an ignore file's bytes, and (line number, warning) for each line skipped as unusable."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    patterns: list[Pattern] = []
    problems: list[tuple[int, str]] = []
    for number, line in enumerate(raw.split(b"\n"), 1):
        pattern, problem = _compile(line, number)
        if problem is not None:
            shown = line.rstrip(b"\r").decode("utf-8", "backslashreplace")
            problems.append((number, f"pattern {shown!r}: {problem}"))
        if pattern is not None:
            patterns.append(pattern)
    return tuple(patterns), problems


def compile_pattern(line: str | bytes) -> Pattern | None:
    """One line of an ignore file; None for blank lines, comments and lines that match nothing."""
    return _compile(line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line, 0)[0]


def _trim_trailing_spaces(line: bytes) -> bytes:
    last_space = None
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == 0x20:
            if last_space is None:
                last_space = i
        elif c == 0x5C:  # a backslash escapes the next byte (an escaped space stays)
            i += 1
            if i >= n:
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


def _compile(line: bytes, number: int) -> tuple[Pattern | None, str | None]:
    text = line.decode("utf-8", "backslashreplace").rstrip("\r")
    if line.endswith(b"\r"):
        line = line[:-1]
    if not line or line.startswith(b"#"):
        return None, None
    line = _trim_trailing_spaces(line)
    if len(line) > MAX_PATTERN_BYTES:
        return None, f"pattern longer than {MAX_PATTERN_BYTES} bytes; skipped"
    negated = line.startswith(b"!")
    if negated:
        line = line[1:]
    dir_only = line.endswith(b"/")
    if dir_only:
        line = line[:-1]
    basename = b"/" not in line
    if not basename and line.startswith(b"/"):
        line = line[1:]
    if not line:
        return None, None
    tokens, problem = _tokenize(line, pathname=not basename)
    if tokens is None:
        return None, f"{problem}: git matches nothing with this line; skipped"
    stars = sum(1 for kind, _ in tokens if kind in (_STAR, _STARSTAR, _DIRS))
    regex = re.compile(_to_regex(tokens), re.DOTALL) if stars <= MAX_REGEX_STARS else None
    return Pattern(negated, dir_only, basename, tuple(tokens), regex, text, number), problem


# ------------------------------------------------------------------------------------------------ tokens

def _tokenize(p: bytes, pathname: bool) -> tuple[list | None, str | None]:
    """The pattern as tokens, and a warning (tokens None: the pattern can match nothing)."""
    tokens: list = []
    warning = None
    seen_special = False  # a wildcard or escape before this point (git's literal-prefix shortcut ends there)
    i, n = 0, len(p)
    while i < n:
        c = p[i]
        if c == 0x5C:  # backslash
            if i + 1 >= n:
                return None, "ends with a lone backslash"
            tokens.append((_LIT, p[i + 1]))
            seen_special = True
            i += 2
        elif c == 0x3F:  # ?
            tokens.append((_ANY, None))
            seen_special = True
            i += 1
        elif c == 0x5B:  # [
            members, i, problem = _parse_class(p, i + 1, pathname)
            if members is None:
                return None, problem
            warning = warning or problem
            tokens.append((_SET, members))
            seen_special = True
        elif c == 0x2A:  # *
            j = i
            while j < n and p[j] == 0x2A:
                j += 1
            kind = _STARSTAR if not pathname else _STAR
            if pathname and j - i >= 2 and (not seen_special or (i > 0 and p[i - 1] == _SLASH)):
                if j == n:
                    kind = _STARSTAR
                elif p[j] == _SLASH:
                    kind, j = _DIRS, j + 1
                elif p[j] == 0x5C and j + 1 < n and p[j + 1] == _SLASH:
                    kind, j = _DIRS, j + 2
            tokens.append((kind, None))
            seen_special = True
            i = j
        else:
            tokens.append((_LIT, c))
            i += 1
    return tokens, warning


_CLASSES = {
    b"alnum": frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    b"alpha": frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    b"blank": frozenset(b" \t"),
    b"cntrl": frozenset(list(range(32)) + [127]),
    b"digit": frozenset(b"0123456789"),
    b"graph": frozenset(range(33, 127)),
    b"lower": frozenset(b"abcdefghijklmnopqrstuvwxyz"),
    b"print": frozenset(range(32, 127)),
    b"punct": frozenset(c for c in range(33, 127) if not chr(c).isalnum()),
    b"space": frozenset(b" \t\n\r"),
    b"upper": frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    b"xdigit": frozenset(b"0123456789ABCDEFabcdef"),
}


def _parse_class(p: bytes, i: int, pathname: bool) -> tuple[frozenset | None, int, str | None]:
    """The bytes ``[...]`` matches (``p[i]`` follows the ``[``), the index after it, and a warning."""
    n = len(p)
    start = i - 1
    negated = i < n and p[i] in b"!^"
    if negated:
        i += 1
    members: set[int] = set()
    prev: int | None = None  # the last single byte, which a following "-x" makes a range start
    first = True
    warning = None
    while True:
        if i >= n:
            return None, i, f"unclosed '[' at byte {start + 1}"
        c = p[i]
        if c == 0x5D and not first:  # ]
            i += 1
            break
        first = False
        if c == 0x5C:
            if i + 1 >= n:
                return None, i, f"unclosed '[' at byte {start + 1}"
            prev = p[i + 1]
            members.add(prev)
            i += 2
        elif c == 0x2D and prev is not None and i + 1 < n and p[i + 1] != 0x5D:  # a-z
            i += 1
            hi = p[i]
            if hi == 0x5C:
                i += 1
                if i >= n:
                    return None, i, f"unclosed '[' at byte {start + 1}"
                hi = p[i]
            if hi < prev and warning is None:
                warning = (f"reversed range '{chr(prev)}-{chr(hi)}' matches only '{chr(prev)}' (as in git)"
                           if prev < 128 and hi < 128 else "a reversed range matches only its first byte (as in git)")
            members.update(range(prev, hi + 1))
            prev = None
            i += 1
        elif c == 0x5B and i + 1 < n and p[i + 1] == 0x3A:  # [:name:]
            close = p.find(b"]", i + 2)
            if close < 0:
                return None, i, f"unclosed '[' at byte {start + 1}"
            if close - (i + 2) < 1 or p[close - 1] != 0x3A:
                members.add(c)  # not a class name: a literal "[" (the ":" comes next)
                prev = c
                i += 1
                continue
            name = p[i + 2:close - 1]
            if name not in _CLASSES:
                return None, i, f"unknown character class '[:{name.decode('utf-8', 'backslashreplace')}:]'"
            members |= _CLASSES[name]
            prev = None
            i = close + 1
        else:
            members.add(c)
            prev = c
            i += 1
    if negated:
        members = set(range(256)) - members
    if pathname:
        members.discard(_SLASH)
    return frozenset(members), i, warning


def _to_regex(tokens) -> bytes:
    out = []
    for kind, value in tokens:
        if kind == _LIT:
            out.append(re.escape(bytes([value])))
        elif kind == _ANY:
            out.append(b"[^/]")
        elif kind == _SET:
            out.append(_byte_class(value))
        elif kind == _STAR:
            out.append(b"[^/]*")
        elif kind == _STARSTAR:
            out.append(b".*")
        else:  # _DIRS: nothing, or anything ending with a slash
            out.append(b"(?:.*/)?")
    return b"".join(out)


def _byte_class(members: frozenset) -> bytes:
    if not members:
        return b"(?!)"
    return b"[" + b"".join(b"\\x%02x" % c for c in sorted(members)) + b"]"


def _match_tokens(tokens, text: bytes) -> bool:
    """Whether ``text`` matches in full, in time linear in its length per token (sets of positions as bits)."""
    n = len(text)
    every = (1 << (n + 1)) - 1
    slashes = 0
    for i, c in enumerate(text):
        if c == _SLASH:
            slashes |= 1 << i
    masks: dict[int, int] = {}

    def mask(byte_set) -> int:
        m = 0
        for i, c in enumerate(text):
            if c in byte_set:
                m |= 1 << i
        return m

    state = 1  # bit i: the first i bytes are matched
    for kind, value in tokens:
        if not state:
            return False
        if kind == _LIT:
            m = masks.get(value)
            if m is None:
                m = masks[value] = mask((value,))
            state = (state & m) << 1
        elif kind == _ANY:
            state = (state & ~slashes & (every >> 1)) << 1
        elif kind == _SET:
            state = (state & mask(value)) << 1
        elif kind == _STARSTAR:
            low = state & -state
            state = every & ~(low - 1)
        elif kind == _DIRS:
            low = state & -state
            state |= (slashes & ~(low - 1)) << 1
        else:  # _STAR: onward to the end of each component a position is in
            reached = 0
            seg_start = 0
            for end in [i for i in range(n) if slashes >> i & 1] + [n]:
                seg = ((1 << (end + 1)) - 1) & ~((1 << seg_start) - 1)
                hit = state & seg
                if hit:
                    low = hit & -hit
                    reached |= seg & ~(low - 1)
                seg_start = end + 1
            state = reached
    return bool(state >> n & 1)


# ------------------------------------------------------------------------------------------------ global excludes

def global_excludes_file(env: dict | None = None) -> str | None:
    """git's global excludes file: ``core.excludesFile`` from the user's git config files, else
    ``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``). Read from the files; git is never run.

    The config files read are the user's (``$GIT_CONFIG_GLOBAL``, else ``$XDG_CONFIG_HOME/git/config`` then
    ``~/.gitconfig``, the later winning, as git reads them) and the system's (``/etc/gitconfig`` unless
    ``GIT_CONFIG_NOSYSTEM``); never a repository's own, which is the workspace's to choose."""
    env = os.environ if env is None else env
    home = env.get("HOME") or os.path.expanduser("~")
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = []
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        files.append(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    if env.get("GIT_CONFIG_GLOBAL"):
        files.append(env["GIT_CONFIG_GLOBAL"])
    else:
        files += [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    value = None
    for path in files:
        found = _config_value(path, "core", "excludesfile")
        if found is not None:
            value = found
    if value is None:
        return os.path.join(xdg, "git", "ignore")
    if not value:
        return None
    if value == "~" or value.startswith("~/"):
        value = home + value[1:]
    return value


def _config_value(path: str, section: str, key: str) -> str | None:
    """The last value of ``section.key`` in one git config file (None: not set or not readable)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(1024 * 1024)
    except OSError:
        return None
    text = raw.decode("utf-8", "surrogateescape")
    value = None
    current = None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif c in "#;":
            i = _line_end(text, i)
        elif c == "[":
            close = text.find("]", i)
            if close < 0:
                return value
            header = text[i + 1:close].strip()
            name, _, sub = header.partition(" ")
            dotted = name.split(".", 1)
            current = (dotted[0].lower(), (sub or (dotted[1] if len(dotted) > 1 else "")).strip())
            i = close + 1
        else:
            j = i
            while j < n and (text[j].isalnum() or text[j] == "-"):
                j += 1
            name = text[i:j].lower()
            while j < n and text[j] in " \t":
                j += 1
            if j < n and text[j] == "=":
                got, i = _config_string(text, j + 1)
            else:
                got, i = None, _line_end(text, j)  # a bare key is a boolean: no path
            if not name:
                i = _line_end(text, j)
                continue
            if current == (section, "") and name == key and got is not None:
                value = got
    return value


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end + 1


def _config_string(text: str, i: int) -> tuple[str, int]:
    """A git config value from ``text[i:]`` (quotes, escapes, comments, continuations), and where it ends."""
    out: list[str] = []
    pending_space = ""
    quoted = False
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            i += 1
            break
        if c == "\r" and i + 1 < n and text[i + 1] == "\n":
            i += 1
            continue
        if not quoted and c in "#;":
            i = _line_end(text, i)
            break
        if not quoted and c in " \t":
            if out:
                pending_space += c
            i += 1
            continue
        out.append(pending_space)
        pending_space = ""
        if c == '"':
            quoted = not quoted
        elif c == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "\n":
                pass  # a continuation line
            else:
                out.append({"n": "\n", "t": "\t", "b": "\b"}.get(nxt, nxt))
            i += 1
        else:
            out.append(c)
        i += 1
    return "".join(out), i
