"""Property-based fuzzing of the engine (issue 6): edited oracle cases and generated MindSpore programs.

Properties, checked on every intermediate document of every edit sequence:

* ``analyze`` never raises;
* every range (finding, related, fix edit, syntax error, hover name) lies inside the document, start <= end,
  and on a character boundary in UTF-8, UTF-16 and UTF-32 (round trip through each encoding is exact);
* every offered fix applies with strict positions, changes only the spans it claims, keeps the file's line
  break style, re-parses with no more syntax errors than before and removes its finding;
* ``fix_all`` is idempotent (safe and unsafe) and adds no syntax errors;
* an incrementally re-parsed document (one cache key, as the server does) has the same findings and syntax
  errors as a fresh analysis of the same text after every edit.

The budget is bounded and seeded (profile ``bprop-fuzz``); see conftest.py for the long modes.
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import fuzzlib as F
from bprop_lsp.engine import Settings

CASES = F.oracle_cases()
EDIT, PROGRAM = F.strategies()
MODES = st.sampled_from([Settings(), Settings(mode="graph"), Settings(mode="pynative")])


def run_sequence(text: str, edits, settings: Settings, *, fix_all_every: int = 0, final_fix_all: bool = True) -> str:
    """Check ``text`` and each text produced by ``edits``, incrementally and fresh; returns the final text."""
    doc = F.IncrementalDoc(settings)
    try:
        F.check_document(text, settings, analysis=doc.check(text))
        for i, edit in enumerate(edits, 1):
            text = F.apply_edit(text, edit)
            F.check_document(text, settings, analysis=doc.check(text), fix_all_check=bool(fix_all_every) and i % fix_all_every == 0)
        if final_fix_all:
            F.check_fix_all(text, settings)
        return text
    finally:
        doc.close()


# ------------------------------------------------------------------------------------------ oracle
@pytest.mark.parametrize("name", [n for n, _ in CASES])
def test_oracle_case_as_is(name):
    text = dict(CASES)[name]
    F.check_document(text, fix_all_check=True)


@pytest.mark.parametrize("name", [n for n, _ in CASES])
@F.fuzz_settings(2)
@given(edits=st.lists(EDIT, min_size=1, max_size=4), settings=MODES)
def test_oracle_case_under_random_edits(name, edits, settings):
    # fix_all is checked on every case as is (above) and after the longer sequences (below).
    run_sequence(dict(CASES)[name], edits, settings, final_fix_all=False)


@F.fuzz_settings(25)
@given(case=st.sampled_from(CASES), edits=st.lists(EDIT, min_size=5, max_size=25), settings=MODES)
def test_oracle_cases_under_long_edit_sequences(case, edits, settings):
    run_sequence(case[1], edits, settings, fix_all_every=8)


@F.fuzz_settings(20)
@given(case=st.sampled_from(CASES), data=st.data())
def test_oracle_case_typed_char_by_char(case, data):
    """Re-typing a stretch of the file one character at a time: the editor's most common edit stream."""
    text = case[1]
    start = data.draw(st.integers(0, max(0, len(text) - 1)), label="start")
    length = data.draw(st.integers(1, 25), label="length")
    chunk = text[start:start + length]
    doc = F.IncrementalDoc()
    try:
        current = text[:start] + text[start + length:]
        doc.check(current)
        for i in range(len(chunk)):
            current = text[:start + i + 1] + text[start + length:]
            F.check_document(current, analysis=doc.check(current))
        assert current == text
    finally:
        doc.close()


# --------------------------------------------------------------------------------------- generated
@F.fuzz_settings(60)
@given(program=PROGRAM, settings=MODES)
def test_generated_program(program, settings):
    F.check_document(program, settings, fix_all_check=True)


@F.fuzz_settings(25)
@given(program=PROGRAM, edits=st.lists(EDIT, min_size=1, max_size=12), settings=MODES)
def test_generated_program_under_random_edits(program, edits, settings):
    run_sequence(program, edits, settings, fix_all_every=6)


# ------------------------------------------------------------------------------ the checkers themselves
def test_converter_counts_code_units():
    line = "a😀中é"
    assert [F.cp_to_units(line, 4, e) for e in ("utf-8", "utf-16", "utf-32")] == [1 + 4 + 3 + 2, 1 + 2 + 1 + 1, 4]
    assert F.units_to_cp(line, 3, "utf-16") == 2
    with pytest.raises(AssertionError):
        F.units_to_cp(line, 2, "utf-16")  # between the surrogates of 😀
    with pytest.raises(AssertionError):
        F.units_to_cp(line, 3, "utf-8")  # inside the UTF-8 sequence of 😀
    F.check_boundaries(line, 2)


def test_checker_rejects_positions_outside_the_document():
    from bprop_lsp.engine import Position, Span

    text = "ab\r\ncd"
    starts, lines = F.line_starts(text), F.lines_of(text)
    assert F.check_span(text, starts, lines, Span(Position(1, 0), Position(1, 2)), "ok") == (4, 6)
    for bad in (Span(Position(0, 3), Position(0, 3)), Span(Position(2, 0), Position(2, 0)),
                Span(Position(1, 1), Position(1, 0))):
        with pytest.raises(AssertionError):
            F.check_span(text, starts, lines, bad, "bad")


def test_generators_cover_cjk_emoji_crlf_and_tabs():
    import random

    seen = set()
    for seed in range(300):
        pick = F.RandomPicker(random.Random(seed))
        text = F.gen_program(pick)
        for _ in range(5):
            text = F.apply_edit(text, F.gen_edit(pick))
        seen |= {tag for tag, needle in (("cjk", "中"), ("emoji", "😀"), ("crlf", "\r\n"), ("tab", "\t"), ("cr", "\r"))
                 if needle in text}
    assert seen == {"cjk", "emoji", "crlf", "tab", "cr"}
