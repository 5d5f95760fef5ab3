"""The per-Cell runs and their memo (engine/cell_runs.py, on engine/query.py): a keystroke re-runs the Cell-scoped
rules only for the Cells whose recorded reads now read differently, and the findings stay exactly those of a fresh
analysis when what changed is in another statement (a base class, a call site, a child cell, a name bound
elsewhere, the mode), when lines move, when a noqa comment or the settings change. Each case checks that the memo
was used (Cells read back) and that a memo checking less would have been caught (``_careless``)."""
from __future__ import annotations

import pytest

from bprop_lsp.checker import DocumentSession, analyze
from bprop_lsp.engine import Settings
from bprop_lsp.engine import query

HEAD = """import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor, Parameter


class Early(nn.Cell):
    pass


class Base(nn.Cell):
    pass


class Net(Base):
    def construct(self, x, y):
        return x * y

    def bprop(self, x, y, out):
        return out, out


class Base2(nn.Cell):
    def construct(self, x, y):
        return x * y


class Net2(Base2):
    def bprop(self, x, y, out, dout):
        return dout, dout


class Opt(nn.Cell):
    def __init__(self):
        super().__init__()
        self.child = Child()

    def construct(self, x, mask=None):
        return self.child(x) * 2

    def bprop(self, x, mask, out, dout):
        return dout * self.child.w, ops.zeros_like(x)


class Child(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = 1.0

    def construct(self, x):
        return x

    def bprop(self, x, out, dout):
        return (dout,)


class Num(nn.Cell):
    def construct(self, x, n):
        return x * n

    def bprop(self, x, n, out, dout):
        return dout * n, 0


def helper(d):
    return (d,)


class Hel(nn.Cell):
    def construct(self, x):
        return x

    def bprop(self, x, out, dout):
        return helper(dout)


class Other(nn.Cell):
    def construct(self, a):
        t = a
        return t

    def bprop(self, a, out, dout):
        return (dout,)


"""
FILLER = "".join(f"""
class Filler{i}(nn.Cell):
    def construct(self, a):
        return a

    def bprop(self, a, out, dout):
        return (dout,)

""" for i in range(6))
TAIL = """
t = Tensor(np.ones(2, np.float32))
ms.set_context(mode=ms.PYNATIVE_MODE)
print(ops.GradOperation(get_all=True)(Opt())(t))
print(ops.GradOperation(get_all=True)(Num())(t, t))
"""
TEXT = HEAD + FILLER + TAIL

# (old, new): one edit of a statement other than the Cell whose findings it changes.
EDITS = [
    ("    def construct(self, x, y):\n        return x * y\n\n\nclass Net2",
     "    def construct(self, x):\n        return x\n\n\nclass Net2"),  # Net2's inherited construct: BP002
    ("class Base(nn.Cell):", "class Base(object):"),  # Net is no Cell any more: BP001 goes
    ("(Opt())(t))", "(Opt())(t, t))"),  # a call now passes the defaulted input: BP007 goes
    ("self.w = 1.0", "self.w = Parameter(Tensor(1.0), name='w')"),  # the child's attribute is a Parameter: BP030
    ("        t = a\n        return t\n", "        return a\n"),  # `t` bound once now: BP024's Tensor argument
    ("ms.set_context(mode=ms.PYNATIVE_MODE)", "ms.set_context(mode=ms.GRAPH_MODE)"),  # the mode: severities
    ("class Early(nn.Cell):\n", "class Early(nn.Cell):\n    '''A line more.'''\n"),  # every Cell below moves
    ("    def bprop(self, x, y, out):", "    def bprop(self, x, y, out):  # noqa: BP001"),
    ("    return (d,)\n", "    return (d, d)\n"),  # a helper's return, in a module-level function: BP022
    ("class Filler1(nn.Cell):\n    def construct(self, a):\n        return a\n",
     "class Child(nn.Cell):\n    def construct(self, a):\n        self.w = Parameter(a)\n"),  # a second Child
]


def _describe(analysis) -> list:
    return [(f.code, f.span, f.message, f.severity, f.fix, f.related) for f in analysis.findings]


def _run(edits, settings=Settings(), start=None):
    """(incremental, fresh, cells read back) for ``start`` (TEXT), then each edit applied in turn (and undone)."""
    results = []
    with DocumentSession("memo") as session:
        text = start or TEXT
        session.analyse(text, settings)
        for old, new in edits:
            for step in (text.replace(old, new, 1), text):
                assert step != text or old in text
                incremental = session.analyse(step, settings, with_skeletons=True)
                fresh = analyze(step, settings, verify_fixes=False, with_skeletons=True)
                results.append((_describe(incremental), _describe(fresh), session._doc.cell_memo.reused,
                                incremental.bprops == fresh.bprops))
    return results


@pytest.mark.parametrize("old,new", EDITS)
def test_an_edit_elsewhere_gives_the_fresh_findings_and_the_memo_is_used(old, new):
    assert old in TEXT
    assert _describe(analyze(TEXT.replace(old, new, 1), verify_fixes=False)) != _describe(
        analyze(TEXT, verify_fixes=False)), "the edit must change what is found"
    for incremental, fresh, reused, same_bprops in _run([(old, new)]):
        assert incremental == fresh
        assert same_bprops
        if "A line more" not in new:
            assert reused > 0  # the Filler cells at least are read back
        # (A line added above every Cell moves them all: a site's record holds where its statements stand, so
        # each runs again: the paths it read locate nodes by their place.)


@pytest.mark.parametrize("settings", [Settings(select=("BP001", "BP024")), Settings(mode="graph"),
                                      Settings(ignore=("BP030",))])
def test_settings_changes_give_the_fresh_findings(settings):
    with DocumentSession("memo") as session:
        session.analyse(TEXT, Settings())
        for s in (settings, Settings(), settings):
            assert _describe(session.analyse(TEXT, s)) == _describe(analyze(TEXT, s, verify_fixes=False))


def test_a_random_edit_sequence_across_statements_matches_fresh():
    import random

    rnd = random.Random(7)
    pool = EDITS * 3
    rnd.shuffle(pool)
    with DocumentSession("memo") as session:
        text = TEXT
        for old, new in pool:
            if old in text:
                text = text.replace(old, new, 1)
            elif new in text:
                text = text.replace(new, old, 1)
            assert _describe(session.analyse(text)) == _describe(analyze(text, verify_fixes=False))


# The edits whose right findings depend on what the key holds (the others: a Cell that stops being one, a noqa
# comment, the mode, lines moving, are the engine's business or the position check's).
KEYED = [EDITS[i] for i in (0, 2, 3, 4, 8, 9)]


def _careless(reads_checked):
    """A replay that checks only the recorded reads ``reads_checked`` accepts (the others are taken as read the
    same): what the tests above must catch."""
    def holds(self, reads):
        return not reads.volatile and all(self.current(path) == print_ for path, print_ in reads.items
                                          if reads_checked(path))
    return holds


# Of those, the ones the site's own print does not hold (an inherited construct and the calls' input counts are
# part of the site): read through tables, calls and other classes.
READ_ELSEWHERE = [EDITS[i] for i in (3, 4, 8, 9)]


@pytest.mark.parametrize("old,new", READ_ELSEWHERE)
def test_a_memo_checking_only_the_site_would_be_caught(monkeypatch, old, new):
    """The comparison has teeth: with the reads of other statements (tables, calls, classes) left unchecked, the
    same edit gives stale findings."""
    monkeypatch.setattr(query.Replay, "holds", _careless(lambda path: path[0] == "site"))
    assert any(incremental != fresh for incremental, fresh, _, _ in _run([(old, new)]))


def test_the_memo_is_bounded_and_owned_by_the_document():
    with DocumentSession("memo") as session:
        text = TEXT
        for i in range(40):
            text = text.replace("return x * y", f"return x * y + {i}" if i else "return x * y", 1) \
                if i % 2 else text + f"\nz{i} = {i}\n"
            session.analyse(text)
        memo = session._doc.cell_memo
        assert len(memo._entries) <= 20  # one entry per Cell site of the last analysis
    assert session._doc.cell_memo is None


# A Cell whose bprop falls off its end unless the instance the file builds sets ``clip`` (BP020 reads the
# ``Cls(...)`` calls of the file): a statement that starts naming it changes its findings without being one of the
# statements its key held.
CLIP = """

class OptionalClip(nn.Cell):
    def __init__(self, clip=False):
        super().__init__()
        self.clip = clip

    def construct(self, x):
        return x * 2.0

    def bprop(self, x, out, dout):
        if self.clip:
            return (ops.clip_by_value(dout * 2.0, -1.0, 1.0),)


_spare = 1
"""
CLIP_TEXT = HEAD + CLIP + FILLER + TAIL
CLIP_EDIT = ("_spare = 1", "_spare = OptionalClip(clip=True)")


def test_a_statement_that_starts_naming_a_cell_in_place_gives_the_fresh_findings():
    old, new = CLIP_EDIT
    assert _describe(analyze(CLIP_TEXT, verify_fixes=False)) != _describe(
        analyze(CLIP_TEXT.replace(old, new), verify_fixes=False))
    with DocumentSession("memo") as session:
        for text in (CLIP_TEXT, CLIP_TEXT.replace(old, new), CLIP_TEXT):
            assert _describe(session.analyse(text)) == _describe(analyze(text, verify_fixes=False))
        assert session._doc.cell_memo.reused > 5


@pytest.mark.parametrize("start,edits", [(TEXT, EDITS), (CLIP_TEXT, [CLIP_EDIT])], ids=["edits", "naming"])
def test_drafts_read_back_whatever_changed_would_be_caught(monkeypatch, start, edits):
    """The comparisons above have teeth: records taken to hold whatever changed give stale findings."""
    monkeypatch.setattr(query.Replay, "holds", lambda self, reads: True)
    assert any(incremental != fresh for incremental, fresh, _, _ in _run(edits, start=start))


LOCALS = "".join(f"""
class Local{i}(nn.Cell):
    def construct(self, a):
        y0 = a * 2
        return y0

    def bprop(self, a, out, dout):
        return (dout,)

""" for i in range(6)) + """
class Plain(nn.Cell):
    def construct(self, a):
        y0 = a + 1
        return y0
"""


def test_renaming_a_local_that_every_cell_binds_reruns_only_that_class():
    # ``y0`` is bound in every Cell's construct; renaming it in another class's method changes no read of the
    # Cells (early cut-off: what the rules read of ``y0`` reads the same).
    text = HEAD + LOCALS + TAIL
    with DocumentSession("memo") as session:
        session.analyse(text)
        memo = session._doc.cell_memo
        for edited in (text.replace("        y0 = a + 1\n        return y0\n", "        y0x = a + 1\n        return y0\n"),
                       text):
            assert _describe(session.analyse(edited)) == _describe(analyze(edited, verify_fixes=False))
            assert memo.reused >= 8
        # Down to one binding (Local0's construct alone binds it now, elsewhere renamed): that one is read.
        one = text
        for i in range(1, 6):
            one = one.replace(f"class Local{i}(nn.Cell):\n    def construct(self, a):\n        y0 = a * 2\n"
                              "        return y0\n",
                              f"class Local{i}(nn.Cell):\n    def construct(self, a):\n        z = a * 2\n"
                              "        return z\n")
        one = one.replace("        y0 = a + 1\n        return y0\n", "        w = a + 1\n        return w\n")
        for step in (one, one.replace("        y0 = a * 2\n", "        y0 = 2\n"), one):
            assert _describe(session.analyse(step)) == _describe(analyze(step, verify_fixes=False))


# Two classes of one name (issue 25, item 1): the key must tell the class by what it is, not by its name.
_PLAIN = "class C{i}(nn.Cell):\n    def construct(self, x):\n        return x\n\n    def bprop(self, x, out, dout):\n" \
         "        return (dout,)\n\n\n"
_FACTORY = "def make_{f}():\n    class Inner(nn.Cell):\n        def construct(self, x):\n            return x\n\n" \
           "        def bprop(self, x, out{dout}):\n            return (x,)\n    return Inner\n\n\n"


def _factories(plain: int) -> str:
    return ("from mindspore import nn\n\n\n" + "".join(_PLAIN.format(i=i) for i in range(plain))
            + _FACTORY.format(f="a", dout=", dout") + _FACTORY.format(f="b", dout=""))


@pytest.mark.parametrize("plain", [0, 13, 14, 20])
def test_two_classes_of_one_name_keep_their_own_findings(plain):
    """Two factories each defining ``class Inner``, the second's bprop without ``dout``: the session reports its
    BP001 as a fresh analysis does (a site is told by its place, not by its name)."""
    text = _factories(plain)
    fresh = analyze(text, verify_fixes=False)
    assert "BP001" in {f.code for f in fresh.findings}
    with DocumentSession("same-names") as session:
        for version in (text, text.replace("return (x,)", "return (x,)  ", 1), text):
            assert _describe(session.analyse(version)) == _describe(analyze(version, verify_fixes=False))


def test_a_copy_of_a_statement_taking_the_place_of_another_gives_the_fresh_findings():
    """One edit (a whole-document change) moves a copy of a statement onto the lines of another, and the lines
    of the first copy to the next: the first copy's key is the one the moved copy had, and its drafts point into
    a statement of that text still there. They are read back only by the class at the place they were made."""
    d = "class Inner(nn.Cell):\n    def construct(self, x):\n        return x\n    def bprop(self, x, out):\n" \
        "        return (x,)\n"
    q = "class Other(nn.Cell):\n    def construct(self, x):\n        return x\n    def bprop(self, x, out, dout):\n" \
        "        return (dout,)\n"
    head = "from mindspore import nn\n"
    with DocumentSession("copies") as session:
        for text in (head + q + d + d, head + d + d + q.replace("Other", "Third")):
            assert _describe(session.analyse(text)) == _describe(analyze(text, verify_fixes=False))


def _reran(session) -> list[str]:
    """The Cells whose rules ran in the session's last analysis (every other Cell was read back): ruff's "query
    was not re-run" check, for the Cell runs."""
    return sorted(session._doc.cell_memo.ran_sites)


@pytest.mark.parametrize("old,new", [
    ("class Filler0(nn.Cell):\n    def construct(self, a):\n        return a\n\n    def bprop(self, a, out, dout):\n"
     "        return (dout,)\n", "class Filler0(nn.Cell):\n    def construct(self, a):\n        return a\n\n"
     "    def bprop(self, a, out, dout):\n        return (dout * 1,)\n"),  # Filler0's bprop body
    ("    def bprop(self, x, n, out, dout):\n        return dout * n, 0",
     "    def bprop(self, x, n, out, dout):\n        return dout * n, 1"),  # Num's
])
def test_an_edit_inside_one_bprop_reruns_only_that_cell(old, new):
    assert TEXT.count(old) == 1
    owner = "Filler0" if "Filler0" in old else "Num"
    with DocumentSession("one-cell") as session:
        session.analyse(TEXT)
        edited = TEXT.replace(old, new)
        assert _describe(session.analyse(edited)) == _describe(analyze(edited, verify_fixes=False))
        assert _reran(session) == [owner]
        assert session._doc.cell_memo.reused == len(session._doc.cell_memo._entries) - 1
        session.analyse(edited)
        assert _reran(session) == []  # nothing changed: nothing runs


def _cases():
    from pathlib import Path

    root = Path(__file__).parent / "fixtures"
    return sorted((root / "oracle" / "cases").glob("*.py")) + sorted((root / "probes" / "cases").rglob("*.py"))


def test_no_rule_fails_when_its_reads_are_recorded(caplog):
    """A rule reads the same values through the session's tracking views as through the plain Context: a value the
    views mistook for an object to read through its methods (a ``set``: ``i in ctx.non_tensor_inputs(site)``)
    made BP025 raise in every session, its findings recomputed over the whole file and never memoised."""
    failing = []
    for path in _cases():
        text = path.read_text(encoding="utf-8")
        caplog.clear()
        with caplog.at_level("DEBUG", logger="bprop_lsp"):
            session = DocumentSession(str(path))
            inc = session.analyse(text)
            session.close()
        failed = [r.getMessage() for r in caplog.records if "failed on this input" in r.getMessage()]
        if failed or inc.failures:
            failing.append((path.name, failed or inc.failures))
    assert failing == []


def test_a_module_flag_choosing_between_two_classes_is_followed_by_a_session():
    """``if FLAG: class Gate (correct) else: class Gate (broken)``: only the taken branch makes a class (probes
    q09 valid, q10 BP001, labelled by MindSpore); flipping the flag in another statement flips the finding."""
    def text(flag):
        return (
            "from mindspore import nn\n"
            f"USE_FAST_GRAD = {flag}\n"
            "if USE_FAST_GRAD:\n"
            "    class Gate(nn.Cell):\n"
            "        def construct(self, x):\n"
            "            return x * 0.5\n"
            "        def bprop(self, x, out, dout):\n"
            "            return (dout * 0.5,)\n"
            "else:\n"
            "    class Gate(nn.Cell):\n"
            "        def construct(self, x):\n"
            "            return x * 0.5\n"
            "        def bprop(self, x, out):\n"
            "            return (out,)\n"
        )
    session = DocumentSession("flag")
    for flag, expected in (("True", []), ("False", [("BP001", 12)]), ("True", []), ("1 > 2", [("BP001", 12)])):
        inc = session.analyse(text(flag))
        fresh = analyze(text(flag))
        got = [(f.code, f.span.start.line) for f in inc.findings]
        assert got == [(f.code, f.span.start.line) for f in fresh.findings] == expected, flag
    session.close()
