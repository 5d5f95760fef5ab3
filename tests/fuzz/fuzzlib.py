"""Shared machinery of the engine fuzz tests and ``scripts/fuzz_long.py``.

* generators of edits and of MindSpore programs, written against a tiny ``Picker`` interface so the
  same code is driven by Hypothesis (shrinkable, in the tests) and by ``random.Random`` (the long run);
* independent checkers of the engine's promises (positions, fixes, fix-all, incremental parsing).

Nothing here imports the engine's own line/offset helpers for the checks: positions are converted
with the small converters below so a bug in ``engine/text.py`` cannot hide itself.
"""
from __future__ import annotations

import itertools
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from bprop_lsp.checker import RULES, DocumentSession, analyze, fix_all
from bprop_lsp.engine import Settings, apply_edits
from bprop_lsp.engine.fix_checks import verified_findings
from bprop_lsp.engine.parsing import parse_text, syntax_errors

ROOT = Path(__file__).resolve().parents[2]
ORACLE_DIR = ROOT / "tests" / "fixtures" / "oracle" / "cases"


def oracle_cases() -> list[tuple[str, str]]:
    """(file name, text) of every oracle case, decoded from bytes so CRLF survives."""
    return [(p.name, p.read_bytes().decode("utf-8")) for p in sorted(ORACLE_DIR.glob("*.py"))]


# --------------------------------------------------------------------------------------------- pickers
class Picker:
    """What a generator may ask for. ``RandomPicker`` and ``DrawPicker`` implement it."""

    def int(self, lo: int, hi: int) -> int:  # inclusive
        raise NotImplementedError

    def choice(self, seq):
        raise NotImplementedError

    def bool(self, p: float = 0.5) -> bool:
        raise NotImplementedError


class RandomPicker(Picker):
    def __init__(self, rnd):
        self.rnd = rnd

    def int(self, lo, hi):
        return self.rnd.randint(lo, hi)

    def choice(self, seq):
        return self.rnd.choice(list(seq))

    def bool(self, p=0.5):
        return self.rnd.random() < p


class DrawPicker(Picker):
    """Hypothesis ``draw`` behind the Picker interface (shrinks towards the first choice / ``lo``)."""

    def __init__(self, draw):
        from hypothesis import strategies as st

        self.draw = draw
        self.st = st

    def int(self, lo, hi):
        return self.draw(self.st.integers(lo, hi))

    def choice(self, seq):
        return self.draw(self.st.sampled_from(list(seq)))

    def bool(self, p=0.5):
        # Shrinks towards 0, i.e. False: "leave the extra thing out".
        return self.draw(self.st.integers(0, 99)) >= 100 - round(p * 100)


# ------------------------------------------------------------------------------------------- line model
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in LINE_BREAK.finditer(text)]


def lines_of(text: str) -> list[str]:
    """Line contents without terminators, split on \\r\\n, \\r and \\n only (LSP's and parso's rule)."""
    return LINE_BREAK.split(text)


def offset_of(text: str, starts: list[int], lines: list[str], line: int, column: int) -> int:
    """Strict position -> offset: raises instead of clamping when the position is outside the text."""
    if not (0 <= line < len(lines)):
        raise AssertionError(f"line {line} outside the document (0..{len(lines) - 1})")
    if not (0 <= column <= len(lines[line])):
        raise AssertionError(f"column {column} outside line {line} of length {len(lines[line])}: {lines[line]!r}")
    return starts[line] + column


# ------------------------------------------------------------------------------- encodings (LSP columns)
def _width(ch: str, encoding: str) -> int:
    cp = ord(ch)
    if encoding == "utf-8":
        return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
    if encoding == "utf-16":
        return 2 if cp > 0xFFFF else 1
    return 1  # utf-32


def cp_to_units(line: str, column: int, encoding: str) -> int:
    return sum(_width(ch, encoding) for ch in line[:column])


def units_to_cp(line: str, units: int, encoding: str) -> int:
    """Code-unit column -> code-point column; raises if ``units`` falls inside a character."""
    count = 0
    for i, ch in enumerate(line):
        if count == units:
            return i
        count += _width(ch, encoding)
        if count > units:
            raise AssertionError(f"{encoding} column {units} splits {ch!r} in {line!r}")
    if count == units:
        return len(line)
    raise AssertionError(f"{encoding} column {units} beyond the line {line!r}")


def check_boundaries(line: str, column: int) -> None:
    """The code-point column converts to UTF-8/16/32 and back exactly, on a character boundary."""
    for enc in ("utf-8", "utf-16", "utf-32"):
        units = cp_to_units(line, column, enc)
        back = units_to_cp(line, units, enc)
        assert back == column, f"{enc}: column {column} -> {units} -> {back} in {line!r}"
    # And against Python's own encoders: no split UTF-8 sequence, no split surrogate pair.
    raw8 = line.encode("utf-8")
    u8 = cp_to_units(line, column, "utf-8")
    assert u8 == len(line[:column].encode("utf-8"))
    assert u8 == len(raw8) or (raw8[u8] & 0xC0) != 0x80, f"UTF-8 column {u8} inside a sequence in {line!r}"
    raw16 = line.encode("utf-16-le")
    u16 = cp_to_units(line, column, "utf-16")
    assert 2 * u16 == len(line[:column].encode("utf-16-le"))
    if 2 * u16 < len(raw16):
        unit = int.from_bytes(raw16[2 * u16: 2 * u16 + 2], "little")
        assert not 0xDC00 <= unit <= 0xDFFF, f"UTF-16 column {u16} splits a surrogate pair in {line!r}"


def check_span(text: str, starts, lines, span, what: str) -> tuple[int, int]:
    """A span lies inside the document, start <= end, both ends on character boundaries. Returns offsets."""
    s = offset_of(text, starts, lines, span.start.line, span.start.column)
    e = offset_of(text, starts, lines, span.end.line, span.end.column)
    assert s <= e, f"{what}: span {span} ends before it starts"
    check_boundaries(lines[span.start.line], span.start.column)
    check_boundaries(lines[span.end.line], span.end.column)
    return s, e


# ------------------------------------------------------------------------------------------- checkers
@dataclass
class Checked:
    analysis: object
    n_fixes: int = 0


def describe(analysis) -> list[tuple]:
    return [(f.code, f.span, f.message) for f in analysis.findings]


def check_positions(text: str, analysis) -> None:
    starts, lines = line_starts(text), lines_of(text)
    for f in analysis.findings:
        check_span(text, starts, lines, f.span, f"{f.code} span")
        for r in f.related:
            check_span(text, starts, lines, r.span, f"{f.code} related")
        if f.noqa_line is not None:
            assert 0 <= f.noqa_line < len(lines), f"{f.code} noqa_line {f.noqa_line} outside the document"
        if f.fix is not None:
            assert f.fix.edits, f"{f.code}: a fix without edits"
            for e in f.fix.edits:
                check_span(text, starts, lines, e.span, f"{f.code} fix edit")
    for span, message in analysis.syntax_errors:
        check_span(text, starts, lines, span, f"syntax error {message!r}")
    for info in analysis.bprops:
        check_span(text, starts, lines, info.name_span, "bprop name")
        if info.construct_span is not None:
            check_span(text, starts, lines, info.construct_span, "construct name")


def apply_strict(text: str, edits) -> tuple[str, list[tuple[int, int]]]:
    """Apply edits with strict positions (no clamping); returns the text and the edited offset ranges."""
    starts, lines = line_starts(text), lines_of(text)
    resolved = []
    for e in edits:
        s, t = check_span(text, starts, lines, e.span, "edit")
        resolved.append((s, t, e.new_text))
    resolved.sort(key=lambda r: (r[0], r[1]))
    for (s1, t1, _), (s2, t2, _) in zip(resolved, resolved[1:]):
        assert t1 <= s2, f"edits overlap: {(s1, t1)} and {(s2, t2)}"
    out, cursor = [], 0
    for s, t, new in resolved:
        out.append(text[cursor:s])
        out.append(new)
        cursor = t
    out.append(text[cursor:])
    return "".join(out), [(s, t) for s, t, _ in resolved]


def _line_after(text: str, new_text: str, edits_sorted, edits_obj, offset: int) -> int:
    """The line of old ``offset`` in the edited text."""
    shift = 0
    for (s, t), e in zip(edits_sorted, edits_obj):
        if t <= offset:  # before the offset (an insertion right at it lands before it too)
            shift += len(e.new_text) - (t - s)
        elif s <= offset < t:
            shift += s - offset  # inside a replaced range: maps to the start of the replacement
    new_offset = offset + shift
    return len(LINE_BREAK.findall(new_text[:new_offset]))


def count_at(analysis, code: str, line: int) -> int:
    return sum(1 for f in analysis.findings if f.code == code and f.span.start.line == line)


def parso_error_count(text: str) -> int | None:
    """How many syntax errors parso finds (None: parso's error finder itself crashed, a parso bug)."""
    try:
        return len(syntax_errors(parse_text(text)))
    except Exception:  # noqa: BLE001
        return None


def compiles(text: str) -> bool:
    """Whether CPython's compiler accepts the text (compiled only, never executed)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the fuzzed code itself
            compile(text, "<fuzz>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False
    except (RecursionError, MemoryError):
        return False


def check_fix(text: str, analysis, finding, settings: Settings, base_errors: int | None) -> str:
    """Every promise a single offered fix makes. Returns the fixed text."""
    edits = finding.fix.edits
    fixed, ranges = apply_strict(text, edits)
    assert fixed == apply_edits(text, edits), f"{finding.code}: engine apply_edits disagrees with a strict apply"
    # Only the claimed spans change: the text between and around them is byte-identical.
    lo, hi = ranges[0][0], ranges[-1][1]
    tail = len(text) - hi
    assert fixed[:lo] == text[:lo] and fixed[len(fixed) - tail:] == text[hi:], f"{finding.code}: text outside the fix changed"
    # Inserted line breaks follow the file's own style when it has a single one.
    styles = set(LINE_BREAK.findall(text))
    if len(styles) == 1:
        (style,) = styles
        for e in edits:
            for nl in LINE_BREAK.findall(e.new_text):
                assert nl == style, f"{finding.code}: fix inserts {nl!r} into a {style!r} file"
    # Re-parses no worse: parso's error count, and Python's own compiler where the file compiled before.
    after_errors = parso_error_count(fixed)
    if base_errors is not None:
        assert after_errors is not None, f"{finding.code}: parso's error finder fails on the fixed text"
        assert after_errors <= base_errors, f"{finding.code}: fix adds syntax errors ({base_errors} -> {after_errors})"
    if compiles(text):
        assert compiles(fixed), f"{finding.code}: the file compiled before the fix and does not after it"
    # Removes its finding: fewer findings of that code on the (shifted) line afterwards.
    edits_sorted = sorted(zip(ranges, sorted(edits, key=lambda e: (e.span.start, e.span.end))), key=lambda p: p[0])
    starts = line_starts(text)
    off = starts[finding.span.start.line] + finding.span.start.column
    new_line = _line_after(text, fixed, [r for r, _ in edits_sorted], [e for _, e in edits_sorted], off)
    after = analyze(fixed, settings, verify_fixes=False)  # only the findings matter here
    before_n = count_at(analysis, finding.code, finding.span.start.line)
    after_n = count_at(after, finding.code, new_line)
    assert after_n < before_n, (
        f"{finding.code} at line {finding.span.start.line} still reported after its fix "
        f"(line {new_line}): {[(f.code, f.span.start.line, f.message) for f in after.findings]}")
    return fixed


# Statements no rule reads (a Cell without a bprop, a config, a helper with tricky strings and brackets), added to a
# fuzz input so that a partial parse has something to leave out.
PADDING = '''
class PaddingCell(nn.Cell):
    """A cell without a custom backward: "quotes", 'more', \\"escaped\\" (brackets [ in text."""

    def __init__(self):
        super().__init__()
        self.mul = ops.Mul()  # a comment with a quote ' and a bracket (

    def construct(self, a, b):
        c = self.mul(a, b)
        return c


def padding_helper(values=(1, 2,
3, 4), *, scale: float = 1.0):
    text = f"{scale!r} {{not a field}} 中文😀"
    joined = """multi
class NotAClass(nn.Cell):
    def backward(self, x, out, dout):
""" + r\'raw \\\' \' + text
    return [v * scale for v in values], joined, \\
        len(joined)


PADDING_CONSTANT = {"a": [1, 2], "b": (3,
4)}
'''


def full_analysis(text: str, settings: Settings):
    """The analysis of ``text`` from a full parse (what ``analyze`` does without ``compiles=True``)."""
    return analyze(text, settings, with_syntax_errors=False)


def comparable(analysis) -> list[tuple]:
    """Everything a finding reports, fix edits included."""
    return [(f.code, f.name, f.span, f.message, f.severity, f.noqa_line, f.related,
             None if f.fix is None else (f.fix.applicability, f.fix.title,
                                          tuple((e.span, e.new_text) for e in f.fix.edits)))
            for f in analysis.findings]


def check_partial(text: str, settings: Settings = Settings()) -> None:
    """A file CPython parses is parsed only where it can matter (engine/partial.py): the findings (spans, messages,
    severities, fix edits) must be a full parse's. Checked on the text itself and with statements no rule reads
    added after it and before it (so that there is something to leave out)."""
    if not compiles(text):
        return
    newline = next(iter(LINE_BREAK.findall(text)), "\n")
    padding = PADDING.replace("\n", newline)
    for candidate in (text, text + newline + padding, padding + text):
        if not compiles(candidate):
            continue
        partial = analyze(candidate, settings, with_syntax_errors=False, compiles=True)
        full = full_analysis(candidate, settings)
        assert comparable(partial) == comparable(full), (
            f"partial parse differs from the full parse:\n  partial {describe(partial)}\n  full    {describe(full)}")


def check_document(text: str, settings: Settings = Settings(), *, fixes: bool = True, fix_all_check: bool = False,
                   analysis=None):
    """Analyse ``text`` (unless given its fresh ``analysis``) and check every promise the result makes."""
    if analysis is None:
        analysis = analyze(text, settings)
    check_positions(text, analysis)
    check_partial(text, settings)
    if fixes and any(f.fix for f in analysis.findings):
        base_errors = parso_error_count(text)
        for f in analysis.findings:
            if f.fix is not None:
                check_fix(text, analysis, f, settings, base_errors)
    if fix_all_check:
        check_fix_all(text, settings)
    return analysis


def check_fix_all(text: str, settings: Settings = Settings()) -> None:
    base_errors = parso_error_count(text)
    compiled = compiles(text)
    for unsafe in (False, True):
        once, n1 = fix_all(text, settings, include_unsafe=unsafe)
        twice, n2 = fix_all(once, settings, include_unsafe=unsafe)
        assert twice == once and n2 == 0, f"fix_all(include_unsafe={unsafe}) is not idempotent ({n1} then {n2} fixes)"
        assert n1 == 0 or once != text, "fix_all counted fixes but changed nothing"
        if base_errors is not None:
            errors = parso_error_count(once)
            assert errors is not None and errors <= base_errors, (
                f"fix_all(include_unsafe={unsafe}) adds syntax errors ({base_errors} -> {errors})")
        if compiled:
            assert compiles(once), f"fix_all(include_unsafe={unsafe}): the file compiled before and does not after"


_keys = itertools.count()


class IncrementalDoc:
    """A document analysed the way the server does: one session, re-parsed incrementally per edit, its fixes
    checked on forks of its tree; compared with a fresh analysis and with fix checks on full parses."""

    def __init__(self, settings: Settings = Settings()):
        self.session = DocumentSession(f"fuzz://doc/{os.getpid()}/{next(_keys)}")
        self.settings = settings

    def check(self, text: str):
        inc = self.session.verify(self.session.analyse(text, self.settings, with_syntax_errors=True))
        fresh = analyze(text, self.settings)
        unforked = verified_findings(analyze(text, self.settings, verify_fixes=False).findings, text, self.settings,
                                     rules=RULES)
        assert fresh.findings == unforked, (
            f"fixes checked on a forked tree differ from full parses:\n forked {describe(fresh)}\n full   {unforked}")
        assert inc.findings == fresh.findings, (
            f"incremental findings differ from a fresh analysis:\n incremental {describe(inc)}\n fresh       {describe(fresh)}")
        # (A text without "bprop" is not parsed by a one-shot analysis; a session parses it for its skeletons.)
        assert inc.syntax_errors == fresh.syntax_errors or "bprop" not in text, (
            f"incremental syntax errors differ:\n incremental {inc.syntax_errors}\n fresh       {fresh.syntax_errors}")
        return fresh

    def close(self) -> None:
        self.session.close()


# ---------------------------------------------------------------------------------------------- edits
TOKENS = (
    "def", "bprop", "bprop=", "construct", "self", "out", "dout", "x", "y", "输入", "梯度", "return", "(", ")", ",",
    ":", "*", "**", "/", "=", "lambda", "None", "class", "nn.Cell", "ops.Custom(", "@staticmethod", "@ms.jit",
    "#", "# noqa", "# noqa: BP001", "'", '"', '"""', "\\", "pass", "    ", "\t", "(dout,)", "dout,", "[dout]",
    "tuple", "ops.zeros_like(x)", "self.w", "Parameter(", "async", "yield", "if x:", "else:", "😀", "中文注释",
)
CHARS = (
    "a", "_", " ", "  ", "\t", "\n", "\r", "\r\n", "(", ")", "[", "]", "{", "}", ",", ":", ".", "#", "'", '"', "\\",
    "=", "*", "@", "中", "梯", "度", "😀", "🎉", "𝕏", "é", "e\u0301", "\u00a0", "\u3000", "\ufeff", "\x0c",
    "\x0b", "\u2028", "\x85", "\x00", "\u200b", "Ω",
)
NEWLINES = ("\n", "\r\n", "\r")
LINES = (
    "    def bprop(self, x, out, dout):", "        return (dout,)", "        return dout", "def bprop(x, out, dout):",
    "class Net(nn.Cell):", "    def construct(self, x, y):", "        return x + y", "    bprop = None",
    "op = ops.Custom(f, out_shape=lambda x: x, out_dtype=lambda x: x, func_type='pyfunc', bprop=lambda x, out, dout: (dout,))",
    "    @staticmethod", "    @ms.jit", "# 中文注释 😀", "\t\tdef bprop(self, 输入, out):", "\treturn 梯度,",
    "from mindspore import nn, ops", "import mindspore as ms", "ms.set_context(mode=ms.GRAPH_MODE)", "", "    ", "\t",
    "        x = (", "    def bprop(self, *args):", "net.bprop_debug = True", "'''", "        '''😀", "@bprop_getters.register(ops.ReLU)",
)


def gen_payload(pick: Picker) -> str:
    kind = pick.int(0, 2)
    if kind == 0:
        return pick.choice(TOKENS)
    if kind == 1:
        return pick.choice(CHARS)
    return "".join(pick.choice(CHARS) for _ in range(pick.int(1, 4)))


def gen_edit(pick: Picker) -> tuple:
    """An edit as plain data; positions are taken modulo the document size when applied."""
    kind = pick.choice(("ins", "del", "rep", "tok_del", "tok_rep", "line_ins", "line_del", "line_dup", "line_rep",
                        "line_swap", "newline", "indent"))
    at = pick.int(0, 1 << 16)
    if kind == "del":
        return (kind, at, pick.int(1, 12), "")
    if kind in ("line_ins", "line_rep"):
        return (kind, at, 0, pick.choice(LINES) if pick.int(0, 3) else gen_payload(pick))
    if kind == "newline":
        return (kind, at, 0, pick.choice(NEWLINES))
    if kind == "indent":
        return (kind, at, 0, pick.choice(("\t", "    ", "  ", "-", "+")))
    if kind in ("line_del", "line_dup", "line_swap", "tok_del"):
        return (kind, at, 0, "")
    return (kind, at, pick.int(1, 6), gen_payload(pick))


TOKEN_RE = re.compile(r"\w+|\r\n|\s|\S")


def _line_bounds(text: str) -> list[tuple[int, int, int]]:
    """(start, content end, end including the terminator) of each line."""
    out, pos = [], 0
    for m in LINE_BREAK.finditer(text):
        out.append((pos, m.start(), m.end()))
        pos = m.end()
    out.append((pos, len(text), len(text)))
    return out


def apply_edit(text: str, edit: tuple) -> str:
    kind, at, n, payload = edit
    if kind in ("ins", "del", "rep"):
        i = at % (len(text) + 1)
        if kind == "ins":
            return text[:i] + payload + text[i:]
        if kind == "del":
            return text[:i] + text[i + n:]
        return text[:i] + payload + text[i + n:]
    if kind in ("tok_del", "tok_rep"):
        toks = [m.span() for m in TOKEN_RE.finditer(text) if not m.group().isspace()]
        if not toks:
            return text + payload
        s, e = toks[at % len(toks)]
        return text[:s] + (payload if kind == "tok_rep" else "") + text[e:]
    bounds = _line_bounds(text)
    li = at % len(bounds)
    start, content_end, end = bounds[li]
    term = text[content_end:end]
    nl = term or (LINE_BREAK.search(text).group() if LINE_BREAK.search(text) else "\n")
    if kind == "line_ins":
        return text[:start] + payload + nl + text[start:]
    if kind == "line_del":
        return text[:start] + text[end:]
    if kind == "line_dup":
        return text[:end] + (text[start:end] if term else nl + text[start:end]) + text[end:]
    if kind == "line_rep":
        return text[:start] + payload + text[content_end:]
    if kind == "line_swap":
        if li + 1 >= len(bounds):
            return text
        s2, c2, e2 = bounds[li + 1]
        return text[:start] + text[s2:c2] + term + text[start:content_end] + text[c2:]
    if kind == "newline":
        if not term:
            return text
        return text[:content_end] + payload + text[end:]
    if kind == "indent":
        line = text[start:content_end]
        stripped = line.lstrip(" \t")
        lead = line[: len(line) - len(stripped)]
        if payload == "-":
            new_lead = lead[:-1] if lead.endswith("\t") else lead[:-4] if lead.endswith("    ") else lead[:-1]
        elif payload == "+":
            new_lead = lead + ("\t" if "\t" in lead else "    ")
        else:
            # Re-indent with another unit: tabs <-> spaces.
            width = sum(4 if c == "\t" else 1 for c in lead)
            new_lead = payload * (width // 4) + " " * (width % 4) if payload != "  " else "  " * (width // 4)
        return text[:start] + new_lead + stripped + text[content_end:]
    raise ValueError(kind)


# ------------------------------------------------------------------------------------------- programs
HEADERS = (
    ["import mindspore as ms", "from mindspore import nn, ops, Tensor, Parameter"],
    ["import mindspore as ms", "import mindspore.nn as nn", "import mindspore.ops as ops"],
    ["from mindspore import nn", "from mindspore import ops", "from mindspore.nn import Cell", "import mindspore as ms"],
    ["import mindspore", "from mindspore import ops, Parameter", "nn = mindspore.nn"],
    ["import mindspore as ms", "from mindspore import nn, ops", "from mindspore.ops import PrimitiveWithInfer, prim_attr_register"],
    ["import mindspore as ms", "from mindspore import nn, ops", "from mindspore.ops._grad.grad_base import bprop_getters"],
    ["import mindspore as ms", "from mindspore import nn, ops, context", "from mindspore import jit"],
)
INPUT_NAMES = ("x", "y", "z", "w", "mem", "输入", "权重", "a", "b", "inp")
GRAD_ITEMS = ("dout", "dout * 2", "dout * x", "None", "0", "1.0", "ops.zeros_like(x)", "out", "-dout", "self.w * dout",
              "dout[0]", "梯度", "ops.ones_like(dout)")
COMMENTS = ("", "", "", "  # 反向传播", "  # 😀 grad", "  # noqa", "  # noqa: BP001", "  # noqa: BP020, BP021", "  # TODO")
CELL_BASES = ("nn.Cell", "nn.Cell", "Cell", "ms.nn.Cell", "mindspore.nn.Cell", "object", "Base")
DECORATORS = ("staticmethod", "classmethod", "ms.jit", "jit", "my_decorator", "functools.lru_cache()")


def _param_list(pick: Picker, names: list[str], layout_multiline: bool, comment: str) -> str:
    """Render a parameter list, sometimes one per line with (or without) a trailing comma and comments."""
    if not layout_multiline or not names:
        return "(" + ", ".join(names) + ")"
    trailing = pick.bool()
    body = []
    for i, n in enumerate(names):
        last = i == len(names) - 1
        body.append("\x02" + n + ("," if not last or trailing else "") + (comment if pick.bool() else ""))
    return "(\n" + "\n".join(body) + "\n)"


def _returns(pick: Picker, k: int) -> list[str]:
    """Body lines (level-relative) ending in some return."""
    m = max(0, k + pick.int(-2, 1))
    items = [pick.choice(GRAD_ITEMS) for _ in range(m)]
    form = pick.int(0, 9)
    if form == 0:
        return ["pass"]
    if form == 1:
        return ["return"]
    if form == 2:
        return ["return " + (items[0] if items else "dout")]
    if form == 3:
        return ["return [" + ", ".join(items) + "]"]
    if form == 4:
        other = ", ".join(pick.choice(GRAD_ITEMS) for _ in range(max(1, k)))
        return ["if dout is None:", "\x02return (" + other + ",)", "return (" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"]
    if form == 5:
        return ["grads = (" + ", ".join(items) + ("," if len(items) == 1 else "") + ")", "return grads"]
    if form == 6:
        return ["return " + ", ".join(items) + ("," if len(items) == 1 else "") if items else "return ()"]
    if form == 7:
        return ["return tuple([" + ", ".join(items) + "])"]
    return ["return (" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"]


def _bprop_params(pick: Picker, inputs: list[str], with_self: bool) -> list[str]:
    names = (["self"] if with_self else []) + list(inputs) + ["out", "dout"]
    style = pick.int(0, 12)
    if style == 9:
        names = names[:-2]  # neither out nor dout
    elif style == 10 and inputs:
        names.remove(pick.choice(inputs))  # a forward input left out
    elif style == 0:
        names = names[:-1]  # missing dout
    elif style == 1:
        names = [n for n in names if n != "out"]
    elif style == 2:
        names = names + ["extra"]
    elif style == 3:
        names = names[:-1] + ["dout=None"]
    elif style == 4:
        names = (["self"] if with_self else []) + ["*args"]
    elif style == 5:
        names = [n for n in names if n != "self"]
    elif style == 6 and len(names) > 2:
        i = pick.int(0, len(names) - 2)
        names[i], names[i + 1] = names[i + 1], names[i]
    elif style == 7:
        names = names[:1] + ["/"] + names[1:] if names else names
    elif style == 8:
        names = names + ["*", "flag=False"]
    return names


def _cell(pick: Picker, idx: int, lines: list[tuple[int, str]], have_base: bool) -> None:
    name = pick.choice(("Net", "MulAdd", "乘加", "Spike", "Grl", "Clip")) + str(idx)
    base = pick.choice(CELL_BASES if have_base else CELL_BASES[:-1]) if pick.bool(0.4) else "nn.Cell"
    if pick.bool():
        lines.append((0, f"# 单元 {idx} 😀"))
    lines.append((0, f"class {name}({base}):"))
    k = pick.int(0, 3)
    inputs = list(dict.fromkeys(pick.choice(INPUT_NAMES) for _ in range(k)))
    if pick.bool():
        lines.append((1, '"""文档字符串 ✓"""'))
    if pick.bool(0.6):
        lines.append((1, "def __init__(self):"))
        lines.append((2, "super().__init__()"))
        if pick.bool():
            lines.append((2, 'self.w = Parameter(ms.Tensor([1.0]), name="w")'))
        if pick.bool(0.2):
            lines.append((2, "self.bprop = self._grad"))
    if pick.bool(0.85):
        cparams = ["self"] + inputs
        variant = pick.int(0, 11)
        if variant == 0 and inputs:
            cparams[-1] += "=None"
        elif variant == 1:
            cparams.append("*args")
        elif variant == 2:
            cparams += ["*", "scale=1.0"]
        elif variant == 3:
            cparams.append("**kwargs")
        lines.append((1, "def construct" + _param_list(pick, cparams, pick.bool(0.2), "  # 输入") + ":"))
        lines.append((2, "return " + (" + ".join(inputs) if inputs else "self.w")))
    if pick.bool(0.1):
        lines.append((1, "bprop = None"))
        return
    if pick.bool(0.1):
        lines.append((1, "bprop = lambda self, " + ", ".join(inputs + ["out", "dout"]) + ": (dout,)"))
        return
    n_dec = pick.int(0, 2) if pick.bool(0.4) else 0
    decs = [pick.choice(DECORATORS) for _ in range(n_dec)]
    for d in decs:
        lines.append((1, "@" + d))
    with_self = "staticmethod" not in decs
    bp_inputs = inputs if pick.bool(0.8) else inputs[: max(0, len(inputs) - 1)] + ["x_extra"]
    params = _bprop_params(pick, bp_inputs, with_self)
    comment = pick.choice(COMMENTS)
    lines.append((1, "def bprop" + _param_list(pick, params, pick.bool(0.25), "  # 参数") + ":" + comment))
    if pick.bool(0.2):
        lines.append((2, "print('bprop 😀', dout)"))
    for body in _returns(pick, len(inputs)):
        lines.append((2 + body.count("\x02"), body.replace("\x02", "")))


def _custom_op(pick: Picker, idx: int, lines: list[tuple[int, str]]) -> None:
    k = pick.int(0, 3)
    args = ["a", "b", "c"][:k]
    fwd = f"fwd{idx}"
    lines.append((0, f"def {fwd}({', '.join(args)}):"))
    lines.append((1, "return " + (" + ".join(args) if args else "0")))
    params = list(args) + ["out", "dout"]
    style = pick.int(0, 5)
    if style == 0:
        params = params[:-1]
    elif style == 1:
        params = params + ["extra"]
    elif style == 2:
        params = params[1:]
    ret = _returns(pick, k)
    kw = 'out_shape=lambda *s: s[0], out_dtype=lambda *t: t[0], func_type="pyfunc"'
    where = pick.int(0, 3)
    if where == 0:  # lambda on the same line
        expr = ret[-1].replace("return", "", 1).strip()
        expr = "None" if expr in ("", "pass") else expr
        lines.append((0, f"op{idx} = ops.Custom({fwd}, {kw}, bprop=lambda {', '.join(params)}: {expr})"))
        return
    bwd = f"bwd{idx}"
    if where == 1:  # closure
        lines.append((0, f"def make{idx}():"))
        lines.append((1, f"def {bwd}({', '.join(params)}):"))
        for body in ret:
            lines.append((2 + body.count("\x02"), body.replace("\x02", "")))
        lines.append((1, f"return ops.Custom({fwd}, {kw}, bprop={bwd})"))
        return
    lines.append((0, f"def {bwd}" + _param_list(pick, params, pick.bool(0.3), "  # 反向") + ":"))
    for body in ret:
        lines.append((1 + body.count("\x02"), body.replace("\x02", "")))
    call = f"ops.Custom(func={fwd}, {kw}, bprop={bwd})" if where == 2 else f"ops.Custom({fwd}, {kw}, bprop={bwd})"
    lines.append((0, f"op{idx} = {call}"))


def _primitive(pick: Picker, idx: int, lines: list[tuple[int, str]]) -> None:
    lines.append((0, f"class Prim{idx}(PrimitiveWithInfer):"))
    lines.append((1, "@prim_attr_register"))
    lines.append((1, "def __init__(self):"))
    lines.append((2, '"""自定义算子"""'))
    lines.append((1, "def infer_shape(self, s):"))
    lines.append((2, "return s"))
    params = _bprop_params(pick, ["x"], False)
    if pick.bool():
        lines.append((1, "def get_bprop(self):"))
        lines.append((2, "def bprop(" + ", ".join(params) + "):"))
        for body in _returns(pick, 1):
            lines.append((3 + body.count("\x02"), body.replace("\x02", "")))
        lines.append((2, "return bprop"))
    else:
        lines.append((1, "def bprop(self, " + ", ".join(params) + "):"))
        for body in _returns(pick, 1):
            lines.append((2 + body.count("\x02"), body.replace("\x02", "")))


def _getter(pick: Picker, idx: int, lines: list[tuple[int, str]]) -> None:
    lines.append((0, "@bprop_getters.register(ops.ReLU)"))
    lines.append((0, f"def get_bprop_{idx}(self):"))
    lines.append((1, "def bprop(" + ", ".join(_bprop_params(pick, ["x"], False)) + "):"))
    for body in _returns(pick, 1):
        lines.append((2 + body.count("\x02"), body.replace("\x02", "")))
    lines.append((1, "return bprop"))


def gen_program(pick: Picker) -> str:
    """A MindSpore file with Cells, Primitives, ops.Custom and bprop_getters, valid and broken alike."""
    lines: list[tuple[int, str]] = [(0, h) for h in pick.choice(HEADERS)]
    if pick.bool(0.3):
        lines.append((0, pick.choice(("ms.set_context(mode=ms.GRAPH_MODE)", "ms.set_context(mode=ms.PYNATIVE_MODE)",
                                      "context.set_context(mode=context.GRAPH_MODE)", "ms.set_context(mode=1)"))))
    if pick.bool(0.3):
        lines.append((0, "def my_decorator(f):"))
        lines.append((1, "return f"))
    have_base = False
    if pick.bool(0.3):
        lines.append((0, "class Base(nn.Cell):"))
        lines.append((1, "def construct(self, x, y):"))
        lines.append((2, "return x * y"))
        have_base = True
    for idx in range(pick.int(1, 3)):
        kind = pick.choice(("cell", "cell", "cell", "custom", "primitive", "getter"))
        {"cell": lambda: _cell(pick, idx, lines, have_base), "custom": lambda: _custom_op(pick, idx, lines),
         "primitive": lambda: _primitive(pick, idx, lines), "getter": lambda: _getter(pick, idx, lines)}[kind]()
    if pick.bool(0.2):
        lines.append((0, "net = Net0()"))
        lines.append((0, "net.bprop_debug = True"))
    if pick.bool(0.3):
        lines.append((0, "@ms.jit"))
        lines.append((0, "def train_step(x):"))
        lines.append((1, "return x"))
    unit = pick.choice(("    ", "    ", "  ", "\t"))
    nl = pick.choice(("\n", "\n", "\r\n", "\r"))
    rendered = []
    for level, text in lines:
        for j, sub in enumerate(text.split("\n")):
            extra = sub.count("\x02")
            rendered.append(unit * (level + extra) + sub.replace("\x02", "") if sub else "")
    out = nl.join(rendered) + (nl if pick.bool(0.8) else "")
    if pick.bool(0.1):
        # A few lines with the other line break: editors and git checkouts produce such files.
        parts = LINE_BREAK.split(out)
        out = "".join(p + (pick.choice(NEWLINES) if i < len(parts) - 1 else "") for i, p in enumerate(parts))
    return out


# ------------------------------------------------------------------------------------ hypothesis glue
PROFILE = "bprop-fuzz"
LONG_PROFILE = "bprop-fuzz-long"


def register_profiles() -> None:
    from hypothesis import HealthCheck, settings

    common = dict(deadline=None, database=None, print_blob=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    settings.register_profile(PROFILE, derandomize=True, max_examples=20, **common)
    settings.register_profile(LONG_PROFILE, derandomize=False,
                              max_examples=int(os.environ.get("BPROP_FUZZ_EXAMPLES") or 2000), **common)


def long_mode() -> bool:
    return os.environ.get("BPROP_FUZZ_PROFILE") == LONG_PROFILE or bool(os.environ.get("BPROP_FUZZ_EXAMPLES"))


def fuzz_settings(max_examples: int):
    """The settings of one fuzz test: ``max_examples`` under the fixed-seed profile, the long profile's count otherwise."""
    from hypothesis import settings

    register_profiles()
    if long_mode():
        return settings(settings.get_profile(LONG_PROFILE))
    return settings(settings.get_profile(PROFILE), max_examples=max_examples)


def strategies():
    """(edit, program) Hypothesis strategies built on the Picker generators."""
    from hypothesis import strategies as st

    edit = st.composite(lambda draw: gen_edit(DrawPicker(draw)))()
    program = st.composite(lambda draw: gen_program(DrawPicker(draw)))()
    return edit, program


# ------------------------------------------------------------------------ structural edits (issue 25)
# Edits an editor makes to whole statements, where the incremental path (the parse splice, the per-Cell rule memo)
# must still give what a fresh analysis gives: classes of one name (copies, factories each defining one), a class
# header deleted or typed over (its body orphaned), a header typed or pasted above an orphaned block, half a class
# deleted, statements moved in one whole-document change, and undo. ``StructuralDoc`` applies them to a document's
# history; ``check_differential`` compares the session's findings with a fresh analysis after each.
PLAIN_CELL = ("class Plain{i}(nn.Cell):\n    def construct(self, x):\n        return x\n\n"
              "    def bprop(self, x, out, dout):\n        return (dout,)\n\n\n")
HEADERS_TYPED = ("class Scale(nn.Cell):", "class Inner(nn.Cell):", "class Net(nn.Cell):", "def make():", "if x:",
                 "class Scale(nn.Cell):\n    def construct(self, x):\n        return x * 2",
                 "class Net(nn.Cell):\n    def construct(self, x, y):\n        return x + y", "G = H", "try:")
ORPHANS = ("    def bprop(self, x, out):\n        return (out,)", "    bprop = None",
           "    def bprop(self, x, out, dout):\n        return dout", "else:\n    pass", "except E:\n    pass")


def model_corpus(lines: int, seed: int) -> str:
    """A file of the perf corpus generator (tests/fixtures/model_corpus.py, a copy of gen_corpus.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_model_corpus", ROOT / "tests" / "fixtures" / "model_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate(lines, seed)


def _blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the top-level blocks: a line at column 0 (not blank, not a comment) and the lines
    up to the next one."""
    starts = [m.start() for m in re.finditer(r"(?m)^(?=[^\s#])", text)]
    return [(s, e) for s, e in zip(starts, starts[1:] + [len(text)])]


def _class_blocks(text: str) -> list[tuple[int, int]]:
    return [(s, e) for s, e in _blocks(text) if text.startswith(("class ", "@"), s)]


def structural_edit(pick: Picker, text: str, history: list[str]) -> tuple[str, str]:
    """(kind, new text): one structural edit of ``text`` (``history``: the texts before it, for undo)."""
    kinds = ["dup_class", "factory_pair", "rename_class", "del_header", "header_over", "header_above",
             "paste_above_orphan", "half_delete", "swap_blocks", "undo", "orphan_in", "plain_cells"]
    kind = pick.choice(kinds)
    nl = next(iter(LINE_BREAK.findall(text)), "\n")
    classes = _class_blocks(text)
    blocks = _blocks(text)

    def norm(s: str) -> str:
        return s.replace("\n", nl)

    if kind == "undo" and history:
        return kind, history[-pick.int(1, min(3, len(history)))]
    if kind == "dup_class" and classes:
        s, e = pick.choice(classes)
        at = pick.choice([b[0] for b in blocks] + [len(text)])
        block = text[s:e] if text[s:e].endswith(("\n", "\r")) else text[s:e] + nl
        return kind, text[:at] + block + text[at:]
    if kind == "factory_pair":
        # Two factories each defining ``class Inner``, the second's bprop without dout (issue 25, item 1).
        dout = pick.bool()
        code = "".join(f"def make_{tag}():\n    class Inner(nn.Cell):\n        def construct(self, x):\n"
                       f"            return x\n\n        def bprop(self, x, out{', dout' if ok else ''}):\n"
                       f"            return (x,)\n    return Inner\n\n\n" for tag, ok in (("a", True), ("b", dout)))
        at = pick.choice([b[0] for b in blocks] + [len(text)])
        return kind, text[:at] + norm(code) + text[at:]
    if kind == "rename_class" and len(classes) >= 2:
        names = [m.group(1) for m in re.finditer(r"(?m)^class\s+(\w+)", text)]
        if len(names) >= 2:
            old, new = pick.choice(names), pick.choice(names)
            return kind, re.sub(rf"(?m)^class\s+{re.escape(old)}\b", f"class {new}", text, count=1)
    if kind in ("del_header", "header_over") and classes:
        s, e = pick.choice(classes)
        line_end = text.find("\n", s)
        line_end = e if line_end < 0 or line_end >= e else line_end + 1
        if kind == "del_header":
            return kind, text[:s] + text[line_end:]
        return kind, text[:s] + norm(pick.choice(HEADERS_TYPED)) + nl + text[line_end:]
    if kind == "header_above":
        # Above an indented line (orphaned or not): a header typed on a line of its own, or over the line before.
        indented = [m.start() for m in re.finditer(r"(?m)^[ \t]+\S", text)]
        if indented:
            at = pick.choice(indented)
            header = norm(pick.choice(HEADERS_TYPED)) + nl
            if pick.bool() and at:
                before = text.rfind("\n", 0, at - 1) + 1
                return kind, text[:before] + header + text[at:]
            return kind, text[:at] + header + text[at:]
    if kind == "paste_above_orphan" or kind == "orphan_in":
        # An orphaned indented block after a top-level statement, then (paste_above_orphan) a header above it.
        at = pick.choice([b[0] for b in blocks] + [len(text)])
        orphan = norm("G = H\n" + pick.choice(ORPHANS) + "\n")
        if kind == "paste_above_orphan":
            orphan = orphan.replace("G = H" + nl, norm(pick.choice(HEADERS_TYPED)) + nl, 1)
        return kind, text[:at] + orphan + text[at:]
    if kind == "half_delete" and classes:
        s, e = pick.choice(classes)
        lines = text[s:e].splitlines(keepends=True)
        if len(lines) >= 2:
            a = pick.int(0, len(lines) - 1)
            b = pick.int(a + 1, len(lines))
            return kind, text[:s] + "".join(lines[:a] + lines[b:]) + text[e:]
    if kind == "swap_blocks" and len(blocks) >= 2:
        i = pick.int(0, len(blocks) - 2)
        j = pick.int(i + 1, len(blocks) - 1)
        (s1, e1), (s2, e2) = blocks[i], blocks[j]
        first, second = text[s1:e1], text[s2:e2]
        if not second.endswith(("\n", "\r")):
            second += nl
        return kind, text[:s1] + second + text[e1:s2] + first + text[e2:]
    if kind == "plain_cells" and len(text) < 30_000:
        # Many Cells of one shape, before the rest (names and shapes the memo must tell apart).
        at = pick.choice([b[0] for b in blocks if not text.startswith(("import", "from"), b[0])] + [len(text)])
        head = "" if "from mindspore import nn" in text else "from mindspore import nn\n"
        return kind, text[:at] + norm(head + "".join(PLAIN_CELL.format(i=i) for i in range(pick.int(14, 16)))) \
            + text[at:]
    return "char", apply_edit(text, gen_edit(pick))


def session_comparable(analysis) -> list[tuple]:
    return [(f.code, f.span, f.message, f.severity, f.related,
             None if f.fix is None else tuple((e.span, e.new_text) for e in f.fix.edits)) for f in analysis.findings]


class DifferentialDoc:
    """One document's session, its findings compared with a fresh analysis after every version (issue 25): the
    editor's diagnostics (``analyse``, before its fixes are checked) and, every ``verify_every`` versions, the
    verified ones."""

    def __init__(self, settings: Settings = Settings(), verify_every: int = 0):
        self.session = DocumentSession(f"fuzz://diff/{os.getpid()}/{next(_keys)}")
        self.settings = settings
        self.verify_every = verify_every
        self.versions = 0

    def check(self, text: str) -> int:
        """Compare; returns how many findings the version has."""
        self.versions += 1
        inc = self.session.analyse(text, self.settings)
        fresh = analyze(text, self.settings, verify_fixes=False, with_syntax_errors=False)
        assert session_comparable(inc) == session_comparable(fresh), (
            f"session findings differ from a fresh analysis:\n session {describe(inc)}\n fresh   {describe(fresh)}")
        if self.verify_every and self.versions % self.verify_every == 0:
            verified = self.session.verify(inc)
            full = analyze(text, self.settings, with_syntax_errors=False)
            assert session_comparable(verified) == session_comparable(full), (
                f"verified session findings differ:\n session {describe(verified)}\n fresh   {describe(full)}")
        return len(fresh.findings)

    def close(self) -> None:
        self.session.close()


def differential_sources(pick: Picker, cases: list[tuple[str, str]]) -> tuple[str, str]:
    """(name, text) to start a differential sequence from: an oracle case, a generated program, or a corpus file
    (model_corpus.py), sometimes with enough plain Cells in front for the rule memo to stand in."""
    kind = pick.int(0, 3)
    if kind == 0:
        name, text = pick.choice(cases)
        source = f"oracle:{name}"
    elif kind == 1:
        source, text = "generated", gen_program(pick)
    else:
        lines = pick.choice((120, 250))
        seed = pick.int(0, 50)
        source, text = f"corpus:{lines}:{seed}", _corpus_cached(lines, seed)
    if pick.bool(0.3):
        text = "from mindspore import nn\n" + "".join(PLAIN_CELL.format(i=i) for i in range(15)) + text
    return source, text


_CORPUS: dict = {}


def _corpus_cached(lines: int, seed: int) -> str:
    key = (lines, seed)
    if key not in _CORPUS:
        _CORPUS[key] = model_corpus(lines, seed)
    return _CORPUS[key]


def run_differential(pick: Picker, cases, edits: int, *, memo_always: bool, settings: Settings = Settings(),
                     verify_every: int = 0, stats=None) -> int:
    """One sequence of ``edits`` structural (and character) edits from a ``differential_sources`` text, the session
    compared with a fresh analysis after each (the Cell memo stands in for any number of Cells: ``memo_always`` is
    kept for the callers). Returns the number of edits made."""
    source, text = differential_sources(pick, cases)
    doc = DifferentialDoc(settings, verify_every)
    history: list[str] = []
    try:
        doc.check(text)
        for _ in range(edits):
            kind, new = structural_edit(pick, text, history)
            history.append(text)
            del history[:-8]
            text = new
            found = doc.check(text)
            if stats is not None:
                stats[f"edit {kind}"] += 1
                stats["findings"] += found
    finally:
        doc.close()
    return edits
