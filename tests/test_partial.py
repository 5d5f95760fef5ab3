"""Partial parsing for one-shot analysis (engine/partial.py, issue 10): the statement splitter's tricky cases, the
relevance closure, and findings identical to a full parse over the oracle, the probes and generated model files.
(The engine fuzz compares partial and full parses on every fuzz input: tests/fuzz/fuzzlib.py ``check_partial``.)"""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from bprop_lsp.checker import RULES, analyze
from bprop_lsp.engine import Settings
from bprop_lsp.engine import partial as P
from bprop_lsp.engine.analysis import analyze_relevant

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import model_corpus  # noqa: E402 (after the sys.path entry above)

SHARED_ORACLE = Path("/work/shared/oracle")


def starts(text: str) -> list[int]:
    ranges = P.split_statements(text)
    assert ranges is not None
    return [first for first, _ in ranges]


# ------------------------------------------------------------------------------------------------- splitter
def test_col0_class_inside_a_triple_quoted_string_is_not_a_statement():
    text = ('x = 1\n'
            'DOC = """\n'
            'class Fake(nn.Cell):\n'
            '    def bprop(self, x, out, dout):\n'
            '        return (dout,)\n'
            '"""\n'
            "RAW = rb'''\n"
            'class Fake2(nn.Cell):\n'
            "'''\n"
            'y = 2\n')
    assert starts(text) == [0, 1, 6, 9]


def test_backslash_continuation_and_brackets_spanning_col0_lines():
    text = ("total = 1 + \\\n"
            "2\n"
            "values = [\n"
            "1,\n"
            "]\n"
            "call(a,\n"
            "b=(2,\n"
            "3))\n"
            "z = {'k':\n"
            "'v'}\n")
    assert starts(text) == [0, 2, 5, 8]


def test_strings_and_comments_with_quotes_and_brackets():
    text = ("a = 'it''s' + \"(\"  # don't ( [\n"
            "b = f\"{a!r} {{literal}} {len(a)}\"\n"
            "c = Rb'\\'' + u'[' + BR\"\\\"\"\n"
            "# a comment with \"\"\" triple quotes\n"
            "d = 1\n")
    assert starts(text) == [0, 1, 2, 4]


def test_crlf_line_breaks():
    text = "a = (1,\r\n2)\r\nb = 'x' \\\r\n  + 'y'\r\n# c\r\nclass C:\r\n    pass\r\n"
    assert starts(text) == [0, 2, 5]


def test_cjk_and_emoji_text():
    text = ("s = '中文 ( 😀'\n"
            "# 注释：'引号\n"
            "class 网络(nn.Cell):\n"
            "    名字 = '😀'\n"
            "t = 2\n")
    assert starts(text) == [0, 2, 4]


def test_decorators_and_clauses_belong_to_their_statement():
    text = ("@dec\n"
            "@other(1)\n"
            "class A:\n"
            "    pass\n"
            "try:\n"
            "    x = 1\n"
            "except ValueError:\n"
            "    pass\n"
            "else:\n"
            "    pass\n"
            "finally:\n"
            "    pass\n"
            "if x:\n"
            "    pass\n"
            "elif y:\n"
            "    pass\n")
    assert starts(text) == [0, 4, 12]


@pytest.mark.parametrize("text", [
    "x = 'unterminated\n",
    "x = '''never closed\n",
    "x = 1\n\fy = 2\n",
    "x = 1\ry = 2\r",
    "x = 1\r\ny = 2\rz = 3\r\n",
    "x = (1,\n",
    "x = 1)\n",
    'x = f"{d["k"]}"\n',  # a 3.12 f-string nesting its own quotes: read as two strings here
    "\ufeffx = 1\n",
])
def test_unsure_texts_are_not_split(text):
    assert P.split_statements(text) is None


# ------------------------------------------------------------------------------------------------ relevance
PROGRAM = '''\
from mindspore import nn, ops

SCALE = 2


class Base(nn.Cell):
    def construct(self, x):
        return x * SCALE


class WithBprop(Base):
    def bprop(self, x, out, dout):
        return (dout,)


class Child(WithBprop):
    pass


class Unrelated(nn.Cell):
    def construct(self, x):
        y0 = x + 1
        return y0


def helper(v):
    return v


def main():
    net = WithBprop()
    return net(1)


def other():
    return helper(3)
'''


def test_relevance_keeps_what_a_bprop_cell_depends_on_and_masks_the_rest():
    statements = P.read_statements(PROGRAM)
    keep = {s.text.split("\n")[0]: k for s, k in zip(statements, P.relevant(statements, PROGRAM))}
    assert keep == {
        "from mindspore import nn, ops": True,
        "SCALE = 2": True,  # read by Base, a base of the bprop cell
        "class Base(nn.Cell):": True,
        "class WithBprop(Base):": True,
        "class Child(WithBprop):": True,  # inherits the bprop
        "class Unrelated(nn.Cell):": False,
        "def helper(v):": False,
        "def main():": True,  # a call site
        "def other():": False,
    }
    masked = P.masked_text(PROGRAM)
    assert masked is not None and masked.count("\n") == PROGRAM.count("\n")
    for original, line in zip(PROGRAM.split("\n"), masked.split("\n")):
        assert line == original or line == "#" + original


def test_a_second_binding_of_a_called_name_is_kept():
    # ``net`` bound twice makes the engine read ``net(1)`` as unknown: the other binding must be parsed too.
    text = PROGRAM + "\n\ndef elsewhere():\n    net = 3\n    return net\n"
    statements = P.read_statements(text)
    keep = P.relevant(statements, text)
    assert keep[-1]


# ------------------------------------------------------------------------------------------- equality
def same_findings(text: str, settings: Settings) -> bool:
    """Whether the partial parse (when it is used) gives the full parse's findings; True when it is used."""
    partial = analyze_relevant(text, settings, rules=RULES, verify_fixes=True)
    full = analyze(text, settings, with_syntax_errors=False)
    if partial is not None:
        assert comparable(partial) == comparable(full)
    assert comparable(analyze(text, settings, with_syntax_errors=False, compiles=True)) == comparable(full)
    return partial is not None


def comparable(analysis) -> list[tuple]:
    return [(f.code, f.name, f.span, f.message, f.severity, f.noqa_line, f.related,
             None if f.fix is None else (f.fix.applicability, f.fix.title,
                                          tuple((e.span, e.new_text) for e in f.fix.edits)))
            for f in analysis.findings]


def compiling_files(*folders: Path) -> list[Path]:
    found = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.py")):
            text = path.read_bytes().decode("utf-8", "replace")
            if "bprop" not in text:
                continue
            try:
                compile(text, str(path), "exec", dont_inherit=True)
            except (SyntaxError, ValueError):
                continue
            found.append(path)
    return found


FIXTURE_FILES = compiling_files(ROOT / "tests" / "fixtures" / "oracle", ROOT / "tests" / "fixtures" / "probes",
                                ROOT / "tests" / "fixtures" / "mindspore_probes", SHARED_ORACLE)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_findings_are_the_full_parse_findings(path):
    text = path.read_bytes().decode("utf-8")
    for settings in (Settings(), Settings(mode="graph"), Settings(mode="pynative")):
        same_findings(text, settings)


def test_fixtures_exercise_the_partial_parse():
    assert len(FIXTURE_FILES) >= 150
    used = sum(P.masked_text(p.read_bytes().decode("utf-8")) is not None for p in FIXTURE_FILES)
    assert used >= 10


@pytest.mark.parametrize("seed", range(12))
def test_generated_model_files_give_the_full_parse_findings(seed):
    size = random.Random(seed).randint(300, 1500)
    text = model_corpus.generate(size, seed=seed)
    assert same_findings(text, Settings())  # the partial parse is used …
    masked = P.masked_text(text)
    assert masked.count("\n#") > size // 4  # … and leaves a good part out


@pytest.mark.parametrize("size", [500, 2000])
def test_gen_corpus_files_give_the_full_parse_findings(size):
    text = model_corpus.generate(size)  # the bytes of gen_corpus.py's synth_<size>.py
    assert same_findings(text, Settings())
    assert same_findings(text, Settings(mode="pynative"))


def test_model_files_with_edits_give_the_full_parse_findings():
    """Random line edits (deleting, duplicating, swapping lines) of a generated model file, kept when CPython still
    parses the result."""
    text = model_corpus.generate(600, seed=7)
    rng = random.Random(7)
    compared = 0
    for _ in range(40):
        lines = text.split("\n")
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        kind = rng.choice(("delete", "duplicate", "swap"))
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(j, lines[i])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        edited = "\n".join(lines)
        try:
            compile(edited, "<edit>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        text = edited
        same_findings(text, Settings())
        compared += 1
    assert compared >= 10


@pytest.mark.parametrize("line", ["match x:\n    case 1:\n        pass\n", "try:\n    pass\nexcept* ValueError:\n    pass\n",
                                  "y = a[*b]\n", "def f(*args: *Ts):\n    pass\n", "type X = int\n",
                                  "def f[T](x: T):\n    pass\n"])
def test_syntax_parso_may_not_parse_means_a_full_parse(line):
    text = PROGRAM + "\n\n" + line
    assert P.masked_text(PROGRAM) is not None
    assert P.masked_text(text) is None
    assert P.masked_text(line + "\n\n" + PROGRAM) is None
