"""Bindings after the class statement (engine/attached.py; bprop-rules.md, further behaviours 33-35): each form
is read like a ``def`` in the class body, and an editor session (DocumentSession, whose keystrokes carry class
caches, call sites and rule results from the last version) follows every edit that adds, changes or removes one:
after each edit its findings equal a fresh analysis's."""
from __future__ import annotations

import pytest

from bprop_lsp.checker import DocumentSession, analyze
from bprop_lsp.engine import Settings

HEAD = '''import functools
import mindspore as ms
from mindspore import nn, ops


def good(self, x, out, dout):
    return (dout,)


def bad(self, x, out):
    return (ops.ones_like(x),)


'''

FORMS = {
    "attribute": ('''class Net(nn.Cell):
    def construct(self, x):
        return x * 2


Net.bprop = bad
''', "Net.bprop = bad", "Net.bprop = good"),
    "setattr": ('''class Net(nn.Cell):
    def construct(self, x):
        return x * 2


setattr(Net, "bprop", bad)
''', 'setattr(Net, "bprop", bad)', 'setattr(Net, "bprop", good)'),
    "registry": ('''class Net(nn.Cell):
    def construct(self, x):
        return x * 2


class Other(nn.Cell):
    def construct(self, x):
        return x * 3


for cls, fn in {Net: bad, Other: good}.items():
    setattr(cls, "bprop", fn)
''', "{Net: bad, Other: good}", "{Net: good, Other: good}"),
    "class_tuple": ('''class Net(nn.Cell):
    def construct(self, x):
        return x * 2


for klass in (Net,):
    klass.bprop = bad
''', "klass.bprop = bad", "klass.bprop = good"),
    "decorator": ('''def attach(cls):
    cls.bprop = bad
    return cls


@attach
class Net(nn.Cell):
    def construct(self, x):
        return x * 2
''', "cls.bprop = bad", "cls.bprop = good"),
    "decorator_factory": ('''def attach(fn):
    def deco(cls):
        setattr(cls, "bprop", fn)
        return cls
    return deco


@attach(bad)
class Net(nn.Cell):
    def construct(self, x):
        return x * 2
''', "@attach(bad)", "@attach(good)"),
    "init_subclass": ('''class Base(nn.Cell):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.bprop = bad


class Net(Base):
    def construct(self, x):
        return x * 2
''', "cls.bprop = bad", "cls.bprop = good"),
    "init_subclass_rename": ('''class TorchStyle(nn.Cell):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "backward" in cls.__dict__:
            cls.bprop = cls.__dict__["backward"]


class Net(TorchStyle):
    def construct(self, x):
        return x * 2

    def backward(self, x, out):
        return (out,)
''', "def backward(self, x, out):", "def backward(self, x, out, dout):"),
    "decorator_hasattr_getattr": ('''def torch_style(cls):
    if hasattr(cls, "backward"):
        cls.bprop = getattr(cls, "backward")
    return cls


@torch_style
class Net(nn.Cell):
    def construct(self, x):
        return x * 2

    def backward(self, x, out):
        return (out,)
''', "def backward(self, x, out):", "def backward(self, x, out, dout):"),
    "init_subclass_vars": ('''class TorchStyle(nn.Cell):
    def __init_subclass__(cls):
        if "backward" not in vars(cls):
            return
        cls.bprop = vars(cls)["backward"]


class Net(TorchStyle):
    def construct(self, x):
        return x * 2

    def backward(self, x, out):
        return (out,)
''', "def backward(self, x, out):", "def backward(self, x, out, dout):"),
    "metaclass": ('''class Meta(type(nn.Cell)):
    def __new__(mcs, name, bases, namespace):
        if "backward" in namespace:
            namespace["bprop"] = namespace.pop("backward")
        return super().__new__(mcs, name, bases, namespace)


class Net(nn.Cell, metaclass=Meta):
    def construct(self, x):
        return x * 2

    def backward(self, x, out):
        return (out,)
''', "def backward(self, x, out):", "def backward(self, x, out, dout):"),
    "type_self": ('''class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        type(self).bprop = bad

    def construct(self, x):
        return x * 2
''', "type(self).bprop = bad", "type(self).bprop = good"),
    "stub_replaced": ('''class Net(nn.Cell):
    def construct(self, x):
        return x * 2

    def bprop(self, *args):
        raise NotImplementedError


Net.bprop = bad
''', "Net.bprop = bad", "Net.bprop = good"),
    "type_loop": ('''def fwd(self, x):
    return x * 2


NETS = {}
for _name in ("A", "B"):
    NETS[_name] = type(_name, (nn.Cell,), {"construct": fwd, "bprop": bad})
''', '"bprop": bad', '"bprop": good'),
}


def _same(session, text):
    got = session.analyse(text, Settings())
    want = analyze(text, Settings(), verify_fixes=False)
    key = lambda f: (f.code, f.span, f.message, f.severity)  # noqa: E731
    assert [key(f) for f in got.findings] == [key(f) for f in want.findings]
    return sorted({f.code for f in got.findings})


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_late_binding_edited_in_a_session_equals_a_fresh_analysis(form):
    body, broken, fixed = FORMS[form]
    bad_text = HEAD + body
    good_text = HEAD + body.replace(broken, fixed)
    plain = HEAD + body.replace(broken, "pass" if broken.startswith(("Net.", "setattr", "klass.", "cls.",
                                                                     "type(self)")) else broken)
    assert good_text != bad_text
    session = DocumentSession()
    seen = [_same(session, text) for text in (good_text, bad_text, good_text, bad_text, plain, bad_text)]
    assert "BP001" in seen[1] and "BP001" not in seen[0], seen
    assert seen[0] == seen[2] and seen[1] == seen[3] == seen[5]


def test_a_guard_on_what_the_class_defines_is_decided_from_its_body():
    """``if "backward" in cls.__dict__:`` in ``__init_subclass__`` runs for a class that defines it, not for one
    that does not (that class keeps its own bprop, or none)."""
    body = FORMS["init_subclass_rename"][0]
    without = body.replace("    def backward(self, x, out):\n        return (out,)\n",
                           "    def bprop(self, x, out):\n        return (out,)\n")
    assert without != body
    assert [f.code for f in analyze(HEAD + without).findings] == ["BP001"]  # its own short bprop
    unknown = body.replace('if "backward" in cls.__dict__:', "if kwargs:")
    assert analyze(HEAD + unknown).findings == []  # a guard not read: nothing is known, nothing is said
    assert [f.span.start.line for f in analyze(HEAD + body).findings] == \
        [(HEAD + body).splitlines().index("    def backward(self, x, out):")]


def test_a_patch_after_an_instance_exists_is_graph_only_and_follows_the_instance_line():
    text = HEAD + '''class Net(nn.Cell):
    def construct(self, x):
        return x * 2


probe = None
Net.bprop = bad
'''
    session = DocumentSession()
    before = _same(session, text)
    after = session.analyse(text.replace("probe = None", "probe = Net()"), Settings())
    _same(session, text.replace("probe = None", "probe = Net()"))
    assert before == ["BP001"]
    (finding,) = [f for f in after.findings if f.code == "BP001"]
    assert "GRAPH_MODE" in finding.message
    assert "BP011" in {f.code for f in after.findings}  # the two modes compute different gradients
    assert _same(session, text) == ["BP001"]


def test_a_correct_bprop_patched_after_an_instance_is_a_divergence_at_its_def():
    text = HEAD + FORMS["attribute"][0].replace("Net.bprop = bad", "net = Net()\nNet.bprop = good")
    (finding,) = analyze(text).findings
    assert finding.code == "BP011"
    assert text.splitlines()[finding.span.start.line].startswith("def good(")
    assert text.splitlines()[finding.related[0].span.start.line] == "Net.bprop = good"
    assert analyze(text.replace("net = Net()\n", "")).findings == []


def test_no_bprop_skeleton_is_offered_for_a_class_given_one_after_its_statement():
    from bprop_lsp.engine.skeletons import plan_skeletons

    body = FORMS["attribute"][0]
    assert [sk.owner for sk in plan_skeletons(HEAD + body.replace("Net.bprop = bad", "")).skeletons] == ["Net"]
    for tail in ("Net.bprop = good", "setattr(Net, NAME, good)"):
        assert plan_skeletons(HEAD + body.replace("Net.bprop = bad", tail)).skeletons == []


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_finding_points_at_the_def_of_the_bound_function(form):
    body, _broken, _fixed = FORMS[form]
    text = HEAD + body
    found = [f for f in analyze(text).findings if f.code == "BP001"]
    assert found
    lines = text.splitlines()
    for f in found:
        line = lines[f.span.start.line]
        assert line.lstrip().startswith("def "), line


def test_an_unreadable_late_binding_stays_silent():
    stub = HEAD + '''class Net(nn.Cell):
    def construct(self, x):
        return x * 2

    def bprop(self, x, out):
        return (out,)


'''
    assert [f.code for f in analyze(stub).findings] == ["BP001"]
    for tail in ('setattr(Net, NAME, good)\n', 'if FLAG:\n    Net.bprop = good\n',
                 'def install():\n    Net.bprop = good\n', 'for c in load():\n    c.bprop = good\n',
                 'class Installer(nn.Cell):\n    def __init__(self):\n        super().__init__()\n'
                 '        Net.bprop = good\n'):
        assert analyze(stub + tail).findings == [], tail


def test_a_fix_touches_only_the_parameter_list_of_the_bound_function():
    text = HEAD + FORMS["attribute"][0]
    (finding,) = [f for f in analyze(text).findings if f.code == "BP001"]
    assert finding.fix is not None
    for edit in finding.fix.edits:
        assert edit.span.start.line == text.splitlines().index("def bad(self, x, out):")


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_partial_parse_keeps_every_statement_a_late_binding_reads(form):
    # (the CLI's partial parse, engine/partial.py: the class a late binding names, the decorator, the base or the
    # metaclass, and the functions bound must all be kept; unrelated padding is dropped)
    from test_partial import same_findings

    body, broken, fixed = FORMS[form]
    padding = "\n\nclass Config:\n    size = 3\n\n\ndef helper(a):\n    return a + 1\n"
    used = [same_findings(text, Settings()) for text in (HEAD + body + padding,
                                                         HEAD + body.replace(broken, fixed) + padding)]
    assert used[0] or form == "type_self"  # (for that text the partial parse stands aside: parsed in full)


def _probe(name: str) -> str:
    from pathlib import Path

    return (Path(__file__).parent / "fixtures" / "probes" / "cases" / name).read_text(encoding="utf-8")


def test_graph_counts_a_star_parameter_after_dout_and_a_defaulted_custom_bprop_parameter():
    star = analyze(_probe("p22_16_star_underscore_after_dout.py")).findings
    assert [(f.code, "GRAPH_MODE" in f.message) for f in star] == [("BP002", True)]
    assert [e.new_text for e in star[0].fix.edits] == [""]  # only `*_` (and its comma) removed
    custom = analyze(_probe("p22_17_custom_bprop_defaulted_extra.py")).findings
    assert [(f.code, "GRAPH_MODE" in f.message) for f in custom] == [("BP040", True)]


def test_a_wraps_adapter_fails_in_graph_only():
    (finding,) = analyze(_probe("p22_13_functools_wraps_torch_style.py")).findings
    assert finding.code == "BP001" and finding.severity.name == "WARNING"  # (an error when both modes fail)


def test_bprop_debug_or_a_construct_call_is_no_late_binding_source():
    from bprop_lsp.engine.parsing import parse_text
    from bprop_lsp.engine.program import Program

    body = FORMS["attribute"][0]
    text = HEAD + body.replace("Net.bprop = bad", "net = Net()\nnet.bprop_debug = True\ny = net.construct(1)")
    assert not Program(parse_text(text), text).has_late_sources
    text = HEAD + body
    assert Program(parse_text(text), text).has_late_sources


def test_an_early_return_under_a_known_guard_ends_the_body():
    body = FORMS["init_subclass_vars"][0].replace('"backward" not in vars(cls)', '"backward" in vars(cls)')
    assert analyze(HEAD + body).findings == []  # the class defines backward: returned before the binding
