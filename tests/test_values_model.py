"""engine/values.py: module constants; engine/conditions.py: never-taken branches; rules/_returns.py: the flow reading of a local."""
from __future__ import annotations

import parso

from bprop_lsp.engine.conditions import never_taken
from bprop_lsp.engine.program import Program
from bprop_lsp.engine.trees import iter_scope_nodes
from bprop_lsp.engine.values import int_literal, module_literal
from bprop_lsp.rules._returns import local_assignments, returns_of


def _program(text):
    return Program(parso.parse(text), text)


def _leaf(text, marker):
    module = parso.parse(text)
    p = Program(module, text)
    return p, [n for n in iter_scope_nodes(module) if n.type == "name" and n.value == marker]


def test_a_module_constant_is_its_one_literal_unless_shadowed_or_rebound():
    def read(text):
        p, names = _leaf(text, "N")
        return module_literal(p, [n for n in names if not n.is_definition()][-1])

    assert int_literal(read("N = 3\ndef f():\n    return N\n")) == 3
    assert read("N = 3\ndef g(N):\n    return N\n") is None  # a parameter shadows it
    assert read("N = 3\ndef h():\n    N = 1\n    return N\n") is None  # a local (the name is bound twice)
    assert read("N = 3\nN = 4\ndef f():\n    return N\n") is None  # rebound
    assert read("M = 2\nN = M\ndef f():\n    return N\n") is None  # not a literal
    assert read("from cfg import N\ndef f():\n    return N\n") is None


def test_never_taken_follows_if_elif_else_and_conditional_expressions():
    text = ("ON = True\nOFF = False\n"
            "def f(x):\n"
            "    if OFF:\n        a1 = 1\n"
            "    elif ON:\n        a2 = 1\n"
            "    else:\n        a3 = 1\n"
            "    if x:\n        a4 = 1\n"
            "    b = a5 if OFF else a6\n")
    module = parso.parse(text)
    p = Program(module, text)
    fn = module.children[2]
    marks = {n.value: n for n in iter_scope_nodes(module) if n.type == "name" and n.value.startswith("a")}
    dead = {name for name, node in marks.items() if never_taken(p, node, fn)}
    assert dead == {"a1", "a3", "a5"}


def test_the_flow_reading_counts_branches_and_gives_up_on_loops():
    text = ("from mindspore import nn\n"
            "class C(nn.Cell):\n"
            "    def construct(self, a, b, c):\n        return a + b + c\n"
            "    def bprop(self, a, b, c, out, dout):\n"
            "        g = [dout]\n"
            "        if self.x:\n            g.append(dout)\n"
            "        else:\n            g += [dout, dout]\n"
            "        return tuple(g)\n"
            "    def loop(self, a, b, out, dout):\n"
            "        g = ()\n"
            "        for _ in range(2):\n            g += (dout,)\n"
            "        return g\n")
    p = _program(text)
    cls = p.classes[0]
    shape = returns_of(cls.members["bprop"].function, p).returns[0].shape
    assert shape.kind == "tuple" and shape.lengths == frozenset({2, 3})
    assert returns_of(cls.members["loop"].function, p).returns[0].shape.kind == "unknown"
    assert local_assignments(cls.members["loop"].function)
