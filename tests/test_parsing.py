"""ParsedDocument's parse of a changing document: the line splitter, and the member-level splice (an edit inside
one member of a top-level class re-parses only that member) giving exactly the tree of a fresh parse."""
from __future__ import annotations

import itertools
import os
import random

from parso.utils import split_lines as parso_split_lines

from bprop_lsp.engine.parsing import patched_lines, split_lines

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


# ----------------------------------------------------------------------------------------------- member splice

import importlib.util  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from bprop_lsp.checker import DocumentSession, analyze  # noqa: E402
from bprop_lsp.engine import Settings  # noqa: E402
from bprop_lsp.engine.parsing import ParsedDocument, grammar, leaves as _leaves  # noqa: E402


@pytest.mark.parametrize("seed,pieces", [
    (1, ["a", "b", "\n", "\r\n", "\r", "\x0c", "\x0b", "\x85", "\u2028", "中", "😀", " ", "\n\n", "def f():\n    pass\n"]),
    (2, ["a", "\n", "\r\n", "\x0c", "\u2029", "中", "😀", "\n\n", "    x = 1\n"]),
    (3, ["\n", "\r\n", "a", "\r"]),
])
def test_patched_lines_equal_a_fresh_split(seed, pieces):
    """A keystroke's lines, patched from the last text's: the same list as splitting the new text (or None, and a
    whole split, when a lone carriage return makes counting line feeds unsure), the untouched lines the very
    same objects."""
    rnd = random.Random(seed)
    patched = 0
    for _ in range(6000):
        old = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 30)))
        new = list(old)
        for _ in range(rnd.randint(1, 3)):
            k = rnd.randint(0, len(new))
            if rnd.random() < 0.4 and new:
                k = min(k, len(new) - 1)
                del new[k:k + rnd.randint(1, 3)]
            else:
                new[k:k] = list(rnd.choice(pieces))
        new = "".join(new)
        old_lines = split_lines(old)
        got = patched_lines(old, old_lines, new)
        if got is None:
            assert "\r" in old + new
            continue
        patched += 1
        assert got == split_lines(new), (old, new)
        # The lines before the one holding the first changed character, and those after the one holding the last,
        # are the old objects.
        prefix = len(os.path.commonprefix([old, new]))
        suffix = len(os.path.commonprefix([old[prefix:][::-1], new[prefix:][::-1]]))
        head = old[:prefix].count("\n")
        tail = len(old_lines) - (old[:len(old) - suffix].count("\n") + 1)
        assert all(a is b for a, b in zip(got[:head], old_lines[:head]))
        assert tail <= 0 or all(a is b for a, b in zip(got[-tail:], old_lines[-tail:]))
    assert patched > 500


from test_engine import _tree_dump  # noqa: E402

_spec = importlib.util.spec_from_file_location("model_corpus", Path(__file__).parent / "fixtures" / "model_corpus.py")
model_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model_corpus)

CELLS = '''from mindspore import nn, ops


class Head(nn.Cell):
    """头部 😀"""
    scale = 2

    def __init__(self):
        super().__init__()
        self.w = 1.0

    # 反向传播 between the methods

    @staticmethod
    def helper(x):
        return x * 2

    def construct(self, x, y):
        z = x * self.w
        return z + y

    async def later(self):
        pass

    class Inner:
        def bprop(self, x, out, dout):
            return (dout,)

    def bprop(self, x, y, out, dout):
        return dout, dout
    # trailing comment of the last method

# a comment above the next class


@dataclass
class Decorated(nn.Cell):
    def construct(self, x):
        return x

    def bprop(self, x, out):
        return out


class OneLine(nn.Cell): pass


if True:
    class InIf(nn.Cell):
        def construct(self, x):
            return x

        def bprop(self, x, out, dout):
            return (dout,)

net = Head()
'''


def _fresh_dump(text):
    return _tree_dump(grammar().parse(text))


def _edit(text, old, new, count=1):
    assert text.count(old) >= 1, old
    return text.replace(old, new, count)


def _parsed(text):
    doc = ParsedDocument()
    doc.parse(text)
    return doc


def _class_named(module, name):
    for child in module.children:
        cls = child.children[-1] if child.type == "decorated" else child
        if cls.type == "classdef" and cls.children[1].value == name:
            return child
    raise AssertionError(name)


def _members(top):
    cls = top.children[-1] if top.type == "decorated" else top
    return cls.children[-1].children[1:]


def test_an_edit_inside_a_method_reparses_only_that_method():
    doc = _parsed(CELLS)
    old_top = _class_named(doc.module, "Head")
    old_members = list(_members(old_top))
    other_tops = [c for c in doc.module.children if c is not old_top]
    text = _edit(CELLS, "return z + y", "return z + y * 2")
    tree = doc.parse(text)
    assert doc.last_parse == "member"
    new_top = _class_named(tree, "Head")
    new_members = _members(new_top)
    # The class is a new node (so every cache keyed by top-level node sees a changed statement); its other
    # members are the old nodes; the edited one is new; the other top-level statements are untouched.
    assert new_top is not old_top
    changed = [i for i, (a, b) in enumerate(zip(old_members, new_members)) if a is not b]
    assert len(changed) == 1 and new_members[changed[0]].children[1].value == "construct"
    assert [c for c in tree.children if c is not new_top] == other_tops
    assert all(m.parent is new_top.children[-1] for m in new_members)
    assert tree.get_code() == text
    assert _tree_dump(tree) == _fresh_dump(text)


EDGE_CASES = [
    # (old, new, how the parse must go: "member", "statement", "not member" (anything but a member splice))
    ("return z + y", "return z + y + 1", "member"),
    ("return dout, dout\n", "return dout, dout  # 注释 😀\n", "member"),  # the last member, comments below it
    ("return dout, dout\n", "return dout, dout\n        x = 1\n", "member"),  # a line added in the last member
    ("    # trailing comment of the last method\n", "    # trailing, edited\n", "not member"),  # the next statement's
    ("# a comment above the next class\n", "# edited above the next class\n", "not member"),
    ("    @staticmethod\n", "    @classmethod\n", "member"),  # a decorated method's decorator
    ("        return x * 2\n", "        return x * 3\n", "member"),  # a decorated method's body
    ("def helper(x):", "def helper2(x, y=1):", "member"),  # the def line: name and parameters
    ("    def helper(x):\n        return x * 2\n", "        def helper(x):\n            return x * 2\n", "not member"),
    ("    def construct(self, x, y):\n", "  def construct(self, x, y):\n", "not member"),  # dedented def
    ("z = x * self.w", "z = x * (self.w", "not member"),  # a syntax error in the method
    ("z = x * self.w", "z = x * self.w)", "not member"),
    ("return z + y", "return z + y \\", "not member"),  # a continuation at the method's end
    ("return z + y", 'return """z + y', "not member"),  # an unterminated string
    ("class Inner:\n        def bprop(self, x, out, dout):", "class Inner:\n        def bprop(self, x, dout):",
     "member"),  # nested class
    ("    # 反向传播 between the methods\n", "    # 反向传播 😀 edited between the methods\n", "member"),
    ("    # 反向传播 between the methods\n", "\n", "member"),
    ("    # 反向传播 between the methods\n", "    x = 1\n", "not member"),  # a new member: two members
    ("    # 反向传播 between the methods\n", "", "member"),  # a line removed
    ("class Head(nn.Cell):", "class Head(nn.Cell, object):", "not member"),  # the header line
    ('    """头部 😀"""', '    """头部 😀😀 中文"""', "member"),  # the first member, a docstring
    ("    scale = 2\n", "    scale = 3; other = '中'\n", "member"),  # a simple statement member
    ("    async def later(self):\n        pass\n", "    async def later(self, x):\n        await x\n", "member"),
    ("        pass\n\n    class Inner", "        pass\n    # new comment\n\n    class Inner", "member"),
    ("    def bprop(self, x, out):\n        return out\n", "    def bprop(self, x, out, dout):\n        return dout\n",
     "member"),  # a decorated class
    ("@dataclass\n", "@dataclass(frozen=True)\n", "not member"),  # a decorated class's decorator
    ("class OneLine(nn.Cell): pass", "class OneLine(nn.Cell): x = 1", "not member"),
    ("            return (dout,)\n\nnet", "            return (dout, 1)\n\nnet", "statement"),  # a class in an if
    ("        return dout, dout\n", "        return dout, dout\n    def more(self):\n        pass\n", "not member"),
    ("        return dout, dout\n", "        return dout, dout\n        # a comment below\n", "not member"),
    ("    def bprop(self, x, y, out, dout):\n        return dout, dout\n", "", "not member"),  # a member removed
    ("        z = x * self.w\n", "", "member"),  # a line removed inside a method
    ("        z = x * self.w\n", "        z = x * self.w\n\n\n        w = z\n", "member"),
    ("        z = x * self.w\n", "    z = x * self.w\n", "not member"),  # a line dedented to the class's level
    ("        z = x * self.w\n", "\tz = x * self.w\n", "not member"),
]


@pytest.mark.parametrize("variant", ["lf", "crlf", "tabs"])
@pytest.mark.parametrize("old,new,how", EDGE_CASES)
def test_edits_of_class_members_give_the_fresh_tree(old, new, how, variant):
    _check_edit_gives_the_fresh_tree(CELLS, old, new, how, variant)


def _check_edit_gives_the_fresh_tree(source, old, new, how, variant):
    """``old`` -> ``new`` in ``source`` (in the line-ending or indentation ``variant``): the tree equals a fresh
    parse, the parse went as ``how`` says, and so does the way back."""
    def form(s):
        if variant == "crlf":
            return s.replace("\n", "\r\n")
        if variant == "tabs":
            return s.replace("    ", "\t")
        return s

    base = form(source)
    text = _edit(base, form(old), form(new))
    doc = _parsed(base)
    tree = doc.parse(text)
    assert tree.get_code() == text
    assert _tree_dump(tree) == _fresh_dump(text)
    if how == "not member":
        assert doc.last_parse != "member"
    else:
        assert doc.last_parse == how, doc.last_parse
    # And back: the edit undone (a member splice again, when the edit was one).
    back = doc.parse(base)
    assert _tree_dump(back) == _fresh_dump(base)


def test_a_class_with_an_error_elsewhere_is_reparsed_whole():
    """parso's error recovery carries state between statements: the member splice stands aside."""
    base = CELLS.replace("self.w = 1.0", "self.w = (1.0")
    doc = _parsed(base)
    text = base.replace("return z + y", "return z - y")
    tree = doc.parse(text)
    assert doc.last_parse != "member"
    assert _tree_dump(tree) == _fresh_dump(text)


def test_repeated_member_edits_and_caches():
    """Keystroke after keystroke in one method: each a member splice; the statement caches keyed by the class see a
    new statement every time (a new facts dict), the others keep theirs."""
    with DocumentSession("members") as session:
        doc = session._doc
        text = CELLS
        session.analyse(text)
        line = "        return z + y"
        for i, typed in enumerate(["_", "a", "1", "\n        w = z", "\n        w = z + 1"]):
            text = text.replace(line, line + typed, 1)
            line = (line + typed).split("\n")[-1]
            before = {c_id: e[2] for c_id, e in doc.statements.items()}
            analysis = session.analyse(text)
            assert doc.last_parse == "member", (i, doc.last_parse)
            head = _class_named(doc.module, "Head")
            assert all(doc.statements[id(head)][2] is not facts for facts in before.values())
            kept = [c for c in doc.module.children if c is not head and id(c) in before]
            assert all(doc.statements[id(c)][2] is before[id(c)] for c in kept)
            assert _tree_dump(doc.module) == _fresh_dump(text)
            fresh = analyze(text, verify_fixes=False)
            assert analysis.findings == fresh.findings and analysis.bprops == fresh.bprops


MEMBER_EDITS = ("x", "1", " ", "(", ")", ",", "#", "'", '"', ":", "=", "中", "😀", "\t", "\\", "dout", "self.w",
                "\n", "\n        ", "\n    ", "\n        y = 1", "\n    def extra(self):\n        pass", "")


def _member_edit(rnd, text):
    """One edit inside a method of a class: a character typed or deleted, a line added or removed."""
    lines = text.split("\n")
    inside = [i for i, line in enumerate(lines) if line.startswith("        ") or line.startswith("    def ")]
    i = rnd.choice(inside)
    line = lines[i]
    r = rnd.random()
    if r < 0.1:
        del lines[i]
    elif r < 0.15:
        lines.insert(i, line[:len(line) - len(line.lstrip())] + "# 注释 😀")
    else:
        col = rnd.randrange(len(line) + 1)
        typed = rnd.choice(MEMBER_EDITS)
        if typed:
            lines[i] = line[:col] + typed + line[col:]
        else:
            lines[i] = line[:col] + line[col + rnd.randint(1, 3):]
    return "\n".join(lines)


def test_random_edits_inside_methods_of_a_model_file():
    """Edits inside the methods of a generated model file (and their undoing): trees equal fresh parses, and the
    findings, bprops and syntax errors of the incremental analysis equal a fresh analysis's."""
    from test_model_incremental import TAIL

    base = model_corpus.generate(500) + TAIL
    rnd = random.Random(20261203)
    settings = Settings()
    hows = []
    with DocumentSession("members-random") as session:
        doc = session._doc
        session.analyse(base, settings)
        text = base
        for step in range(60):
            text = base if step % 4 == 0 else _member_edit(rnd, text)
            incremental = session.verify(session.analyse(text, settings, with_syntax_errors=True))
            hows.append(doc.last_parse)
            assert _tree_dump(doc.module) == _fresh_dump(text), f"after edit {step}"
            fresh = analyze(text, settings)
            assert incremental.findings == fresh.findings, f"after edit {step}"
            assert incremental.bprops == fresh.bprops, f"after edit {step}"
            assert incremental.syntax_errors == fresh.syntax_errors, f"after edit {step}"
    assert hows.count("member") >= 15, hows


NESTED = '''import mindspore as ms


def train(net, data, epochs=2):
    """训练 😀"""
    total = 0
    for epoch in range(epochs):
        for x, y in data:
            loss = net(x, y)
            total += loss
        else:
            print("epoch done", epoch)
    if total > 10:
        total = 10
    elif total < 0:
        total = 0
    else:
        total = total * 2
    try:
        ms.save_checkpoint(net, "a.ckpt")
    except OSError as e:
        print(e)
    finally:
        pass
    while False:
        break
    with open("x") as f:
        f.read()
    return total


@ms.jit
async def serve(queue):
    async for item in queue:
        await item
    async with queue as q:
        q.close()


class Net:
    def construct(self, x):
        if x > 0:
            for i in range(3):
                x = x + i
        return x
'''

NESTED_EDGE_CASES = [
    # (old, new, how): "member" = a part of the top-level statement re-parsed; "not member" = anything else
    ("            loss = net(x, y)\n", "            loss = net(x, y) * 2\n", "member"),  # two loops deep
    ("            total += loss\n", "            total += loss\n            total -= 1\n", "member"),  # a line added
    ("            loss = net(x, y)\n", "", "member"),  # a line removed, with an ``else:`` clause after the body
    ('            print("epoch done", epoch)\n', '            print("轮次 😀", epoch)\n', "member"),  # a for-else body
    ("        total = 10\n", "        total = 10\n\n        total += 1\n", "member"),  # lines added before elif/else
    ("        total = 0\n", "        total = -1\n", "member"),  # an elif body
    ("        total = total * 2\n", "        # 注释\n        total = total * 3\n", "member"),  # the else body
    ("        print(e)\n", "        print(e, 1)\n", "member"),  # an except body
    ("        pass\n    while", "        x = 1\n    while", "member"),  # a finally body
    ("        f.read()\n", "        f.read(10)\n", "member"),  # a with body
    ("        await item\n", "        await item(1)\n", "member"),  # an async for body
    ("        q.close()\n", "        q.close()\n        q.open()\n", "member"),  # an async with body
    ("                x = x + i\n", "                x = x + i * 2\n", "member"),  # a method, three bodies deep
    ("    total = 0\n", "    total = 1\n", "member"),  # a top-level function's own body
    ('    """训练 😀"""', '    """训练 😀 更多"""', "member"),  # its docstring
    ("    for epoch in range(epochs):\n", "    for epoch in range(epochs + 1):\n", "member"),  # a loop's header
    ("    elif total < 0:\n", "    elif total <= 0:\n", "member"),  # a clause's header: the whole if
    ("def train(net, data, epochs=2):", "def train(net, data, epochs=3):", "not member"),  # the def line
    ("@ms.jit\n", "@ms.jit()\n", "not member"),  # a decorator of a top-level function
    ("            total += loss\n", "        total += loss\n", "not member"),  # dedented to the outer loop
    ("            total += loss\n", "              total += loss\n", "not member"),  # indented: an error
    ("            total += loss\n", "            total += (loss\n", "not member"),  # a syntax error
    ("            total += loss\n", "            total += loss\n        else:\n            pass\n", "not member"),
    ("        total = 10\n", "        total = 10\n    # a comment at the if's column\n", "member"),  # the
    # comment belongs to the ``elif`` (the clause after the body), not to the body's last statement: the whole
    # ``if`` statement is re-parsed
    ("        break\n", "        continue\n", "member"),
    # a statement of a body grown by a line, with clauses after the body (their leaves move)
    ("            total += loss\n", "            total += (loss +\n                      1)\n", "member"),
    ("        total = 10\n", "        total = (10 +\n                 1)\n", "member"),
    ("        ms.save_checkpoint(net, \"a.ckpt\")\n", "        ms.save_checkpoint(\n            net, \"a.ckpt\")\n",
     "member"),
]


@pytest.mark.parametrize("variant", ["lf", "crlf", "tabs"])
@pytest.mark.parametrize("old,new,how", NESTED_EDGE_CASES)
def test_edits_in_bodies_at_any_depth_give_the_fresh_tree(old, new, how, variant):
    _check_edit_gives_the_fresh_tree(NESTED, old, new, how, variant)


@pytest.mark.parametrize("old,new,leaves", [
    ("loss = net(x, y)", "loss = net(x, y) + 1", ["loss", "=", "net", "(", "x", ",", "y", ")", "+", "1", "\n"]),
    ("total = total * 2", "total = total * 3", ["total", "=", "total", "*", "3", "\n"]),  # an else body
    ("print(e)", "print(e, 1)", ["print", "(", "e", ",", "1", ")", "\n"]),  # an except body
    ("q.close()", "q.close(1)", ["q", ".", "close", "(", "1", ")", "\n"]),  # an async with in a decorated def
])
def test_an_edit_in_a_body_reparses_only_its_statement(old, new, leaves):
    """A keystroke in a loop or branch of a function: the statement typed in is the only one with new leaves; the
    function, the bodies on the way and the top-level node are new objects around the other statements, which are
    the old nodes."""
    doc = _parsed(NESTED)
    before = {id(c): _leaf_ids(c) for c in doc.module.children}
    text = _edit(NESTED, old, new)
    tree = doc.parse(text)
    assert doc.last_parse == "member"
    renewed = [c for c in tree.children if id(c) not in before]
    assert len(renewed) == 1
    top = renewed[0]
    old_ids = set().union(*before.values())
    assert sorted(leaf.value for leaf in _leaves(top) if id(leaf) not in old_ids) == sorted(leaves)
    assert _tree_dump(tree) == _fresh_dump(text)


def _leaf_ids(node):
    return {id(leaf) for leaf in _leaves(node)}


BODY_EDITS = ("x", "1", " ", "(", ")", ",", "#", "'", '"', ":", "=", "中", "😀", "\t", "\\", "else:", "break",
              "\n", "\n    ", "\n        ", "\n            ", "\n        y = 1", "\n    if x:\n        pass", "")


def test_random_edits_in_bodies_at_any_depth_of_a_model_file():
    """Edits on any indented line of a generated model file (methods, helper functions, loops and branches in
    them) and their undoing: trees equal fresh parses, and the incremental analysis equals a fresh one."""
    from test_model_incremental import TAIL

    base = model_corpus.generate(500) + TAIL + NESTED.replace("import mindspore as ms\n", "")
    rnd = random.Random(20261204)
    settings = Settings()
    hows = []
    with DocumentSession("bodies-random") as session:
        doc = session._doc
        session.analyse(base, settings)
        text = base
        for step in range(80):
            if step % 4 == 0:
                text = base
            else:
                lines = text.split("\n")
                i = rnd.choice([k for k, line in enumerate(lines) if line[:1] in (" ", "\t")])
                line = lines[i]
                col = rnd.randrange(len(line) + 1)
                typed = rnd.choice(BODY_EDITS)
                lines[i] = line[:col] + typed + line[col:] if typed else line[:col] + line[col + rnd.randint(1, 3):]
                text = "\n".join(lines)
            incremental = session.verify(session.analyse(text, settings, with_syntax_errors=True))
            hows.append(doc.last_parse)
            assert _tree_dump(doc.module) == _fresh_dump(text), f"after edit {step}"
            fresh = analyze(text, settings)
            assert incremental.findings == fresh.findings, f"after edit {step}"
            assert incremental.bprops == fresh.bprops, f"after edit {step}"
            assert incremental.syntax_errors == fresh.syntax_errors, f"after edit {step}"
    assert hows.count("member") >= 20, hows


def test_a_document_s_line_starts_follow_its_texts_and_say_where_each_change_starts():
    # The document keeps its text's line starts, patched keystroke after keystroke (a line's move is recorded, not
    # applied), and reads from them the line a change starts on instead of counting the line breaks before it:
    # the lines and the starts must be a fresh split's and a fresh table's after every edit.
    from bprop_lsp.engine.text import LineIndex

    rnd = random.Random(7)
    lines = ["import mindspore.nn as nn", "", "class Net(nn.Cell):  # 网络", "    def construct(self, x):",
             "        return x  # 😀", ""] * 20
    doc = ParsedDocument()
    text = "\n".join(lines)
    doc.parse(text)
    used = 0
    for step in range(400):
        i = rnd.randrange(len(lines))
        kind = rnd.random()
        if kind < 0.7:
            col = rnd.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:col] + rnd.choice(["x", "中", "😀", " ", ""]) + lines[i][col + rnd.randint(0, 1):]
        elif kind < 0.85:
            lines.insert(i, rnd.choice(["", "    y = 1", "# 注释"]))
        elif len(lines) > 5:
            del lines[i]
        text = "\n".join(lines)
        before = doc._line_starts
        used += before is not None and before.text is doc.text and before._starts is not None
        doc.parse(text)
        assert doc.lines == split_lines(text), step
        assert doc._line_starts.text is text
        assert doc._line_starts.starts == LineIndex(text).starts, step
    assert used > 300  # the starts were there to read


# A statement spliced in alone before an orphaned indented block (issue 25, item 2): in place, a class header takes
# the block as its body; the neighbours decide whether a statement re-parsed alone parses so in place.
ORPHAN = "from mindspore import nn\nG = H\n    def bprop(self, x, out):\n        return (out,)\nfrom mindspore import\n"
SCALE = "class Scale(nn.Cell):\n    def construct(self, x):\n        return x * 2\n"
ORPHAN_EDITS = [
    (ORPHAN, "G = H\n", SCALE),  # a header typed over the line above the block
    (ORPHAN.replace("    def bprop(self, x, out):\n        return (out,)\n", "    bprop = None\n"), "G = H\n", SCALE),
    (ORPHAN, "G = H\n", "G = H\n" + SCALE),  # pasted above it
    (ORPHAN, "G = H\n", "class Scale(nn.Cell):\n"),  # the header alone
    (ORPHAN.replace("G = H\n", "x = 1\nG = H\n"), "G = H\n", "def f():\n    pass\n"),
    ("x = 1\nG = H\nelse:\n    pass\n", "G = H\n", "if x:\n    pass\n"),  # an orphaned else
    ("x = 1\nG = H\nexcept E:\n    pass\n", "G = H\n", "try:\n    pass\n"),
    ("x = 1\nG = H\nelse:\n    pass\n", "G = H\n", "if x: pass\n"),  # the same lines: a fork too
    ("x = 1\nG = H\nexcept E:\n    pass\n", "G = H\n", "try: pass\n"),
    # a class half deleted: its header gone, its body orphaned; and typed back
    (SCALE.replace("class Scale", "from mindspore import nn\nclass Scale") + "    def bprop(self, x, out):\n"
     "        return (out,)\ny = 2\n", "class Scale(nn.Cell):\n", "Scale = 1\n"),
]


@pytest.mark.parametrize("base,old,new", ORPHAN_EDITS)
def test_a_statement_before_an_orphaned_block_gives_the_fresh_tree(base, old, new):
    for start, end in ((base, _edit(base, old, new)), (_edit(base, old, new), base)):
        doc = _parsed(start)
        tree = doc.parse(end)
        assert tree.get_code() == end
        assert _tree_dump(tree) == _fresh_dump(end), doc.last_parse
        fork = _parsed(start).fork(start, end)  # (only for equal line counts: None otherwise)
        if fork is not None:
            module = fork[0]
            assert "".join(c.get_code() for c in module.children) == end
            assert [_tree_dump(c) for c in module.children] == [_tree_dump(c) for c in grammar().parse(end).children]


@pytest.mark.parametrize("orphan,code", [("    def bprop(self, x, out):\n        return (out,)\n", "BP001"),
                                         ("    bprop = None\n", "BP012")])
def test_a_class_header_typed_above_an_orphaned_block_gives_the_fresh_findings(orphan, code):
    before = ORPHAN.replace("    def bprop(self, x, out):\n        return (out,)\n", orphan)
    after = before.replace("G = H\n", SCALE)
    with DocumentSession("orphan") as session:
        session.analyse(before)
        found = session.analyse(after).findings
    fresh = analyze(after, verify_fixes=False).findings
    assert [(f.code, f.span) for f in found] == [(f.code, f.span) for f in fresh]
    assert code in {f.code for f in fresh}
