"""A keystroke that replaced one top-level statement in place (``program.StatementDelta``) carries the last
program's class resolution over — MRO, is_cell, is_primitive, lookup, the nn-layer memo, cell_sites' first
sieve and what a candidate's lookups found (``Program._carried_class_caches``) — instead of redoing it for every class of the file. What is carried
must be exactly what a fresh program computes: after every edit of a random sequence, the cell sites and every
entry of those caches equal a fresh Program's and Context's. The edits lean on what the carried answers rest on:
class headers (a base renamed or replaced, a class renamed), a ``bprop`` added or removed, module-level aliases of
bases, the imports, and a class body whose members hang on a module-level flag."""
from __future__ import annotations

import importlib.util
import random
import re
from functools import cached_property
from pathlib import Path

from bprop_lsp.checker import DocumentSession
from bprop_lsp.engine import Settings
from bprop_lsp.engine.context import Context
from bprop_lsp.engine.definitions import ClassInfo, Member
from bprop_lsp.engine.parsing import parse_text
from bprop_lsp.engine.program import Program

_spec = importlib.util.spec_from_file_location("model_corpus", Path(__file__).parent / "fixtures" / "model_corpus.py")
model_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model_corpus)

SEED = 20261205
WORD = re.compile(r"[A-Za-z_]\w*")

# Appended to a generated file: a hierarchy within the file (bases with and without bprop, a mixin, aliases of
# MindSpore's classes, a layer base, an instance-bound bprop, members under a module-level flag, a child cell).
TAIL = """

Base = nn.Cell
LayerAlias = nn.ReLU
FLAG = True


class GradBase(nn.Cell):
    def bprop(self, x, out, dout):
        return (dout,)


class Mixin:
    def helper(self, x):
        return x


class Child(GradBase):
    def construct(self, x):
        return x


class GrandChild(Child, Mixin):
    def construct(self, x, y=1):
        return x


class Plain(Base):
    def construct(self, x):
        return x

    def bprop(self, x, out, dout):
        return (dout,)


class Relu(LayerAlias):
    def bprop(self, x, out, dout):
        return (dout,)


class Bound(Child):
    def __init__(self):
        super().__init__()
        self.bprop = self._back

    def _back(self, x, out, dout):
        return (dout,)


class Cond(GradBase):
    if FLAG:
        def construct(self, x):
            return x
    else:
        def construct(self, x, y):
            return x


class Prim(ops.PrimitiveWithInfer):
    def infer_shape(self, x):
        return x


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Plain()

    def construct(self, x):
        return self.inner(x)

    def bprop(self, x, out, dout):
        return (dout,)


def back_fn(self, x, out, dout):
    return (dout,)


class Prop(nn.Cell):
    _back = back_fn

    def construct(self, x):
        return x

    @property
    def bprop(self):
        return self._back


net = GrandChild()
net(1)
net(1, 2)
"""

TAIL_CLASSES = ("GradBase", "Mixin", "Child", "GrandChild", "Plain", "Relu", "Bound", "Cond", "Prim", "Outer", "Prop")
# Class headers put in place of a class header: a base renamed or replaced, a mixin added, the class renamed.
HEADERS = ("class {cls}(GradBase):", "class {cls}(Plain):", "class {cls}(nn.Cell):", "class {cls}(Base):",
           "class {cls}(Child, Mixin):", "class {cls}(Mixin, GradBase):", "class {cls}(LayerAlias):",
           "class {cls}(GradBase2):", "class {cls}:", "class {cls}(ops.PrimitiveWithInfer):", "class {cls}x({base}):",
           "class {other}({base}):", "class {cls}({cls}):")
MODULE_LINES = ("Base = nn.Cell", "Base = GradBase", "Base = nn.Dense", "LayerAlias = nn.ReLU", "LayerAlias = Plain",
                "FLAG = False", "FLAG = True", "GradBase2 = Child", "import mindspore.nn as nn",
                "import mindspore.nn as nx", "x = Tensor(1.0)", "net = Plain()", "net(1, 2, 3)")
VALUES = ("True", "False", "nn.Cell", "nn.Dense", "GradBase", "Child", "1")
# Method headers put in place of a method header, statements in place of a statement of a method body.
MEMBER_LINES = ("def bprop(self, x, out, dout):", "def bprox(self, x, out, dout):", "def construct(self, x, y=None):",
                "def construct(self, *inputs):", "def _back(self, x, out, dout):", "def bprop(self, *args):")
BODY_LINES = ("return x", "return (dout,)", "self.bprop = self._back", "self.bprop = self.construct", "y = x",
              "self.inner = Child()", "self.inner = GrandChild()")
TOKENS = ("x", "bprop", "construct", "Cell", "(", ")", ":", "GradBase", "Mixin", ", Mixin", "nn.", "#", "_")


def _edit(rnd: random.Random, text: str) -> tuple[str, bool]:
    """``text`` with one line changed (the line count kept, but for a rare inserted line), and whether the code may
    be broken (to be typed back at once, as one does, lest errors spread): mostly lines that keep the code
    well-formed, so that the parser replaces one statement in place and the delta is taken."""
    lines = text.split("\n")
    tail_start = len(lines) - TAIL.count("\n")
    while True:
        i = rnd.randrange(tail_start, len(lines)) if rnd.random() < 0.7 else rnd.randrange(len(lines))
        line = lines[i]
        stripped = line.strip()
        indent = line[:len(line) - len(stripped)]
        kind = rnd.random()
        if kind < 0.02:
            lines.insert(i, "")  # every line below moves: no delta
        elif kind < 0.15:  # typed over a word, or at a point (the code may break)
            words = list(WORD.finditer(line))
            if words and kind < 0.1:
                m = rnd.choice(words)
                lines[i] = line[:m.start()] + rnd.choice(TOKENS) + line[m.end():]
            else:
                col = rnd.randrange(len(line) + 1)
                lines[i] = line[:col] + rnd.choice(TOKENS) + line[col:]
        elif stripped.startswith("class "):
            name = (WORD.findall(stripped) + ["Fresh"])[1]
            lines[i] = rnd.choice(HEADERS).format(cls=name, other=rnd.choice(TAIL_CLASSES),
                                                  base=rnd.choice(("GradBase", "Plain", "nn.Cell", "Mixin")))
        elif stripped.startswith("def ") and len(indent) == 4:
            lines[i] = indent + rnd.choice(MEMBER_LINES)
        elif len(indent) == 8 and _whole_statement(lines, i):
            lines[i] = indent + rnd.choice(BODY_LINES)
        elif not indent and _whole_statement(lines, i):
            bound = re.match(r"([A-Za-z_]\w*) = ", line)
            if bound and kind < 0.5:  # the same name bound to another value (a flag flipped, an alias re-pointed)
                lines[i] = f"{bound.group(1)} = {rnd.choice(VALUES)}"
            else:
                lines[i] = rnd.choice(MODULE_LINES)
        else:
            continue
        changed = "\n".join(lines)
        if changed != text:
            return changed, kind < 0.15
        lines = text.split("\n")


SIMPLE = re.compile(r"\s*(return\b|import |from |[A-Za-z_][\w.]*(\(.*\))? = |[A-Za-z_]\w*\()")


def _whole_statement(lines: list[str], i: int) -> bool:
    """Whether line ``i`` is a simple statement of its own (an assignment, a return, an import, a call), not a
    line of a string or of a bracketed expression running over lines."""
    line, before = lines[i], lines[i - 1].rstrip() if i else ""
    return (SIMPLE.match(line) is not None and all(line.count(a) == line.count(b) for a, b in ("()", "[]", "{}"))
            and not line.rstrip().endswith((",", "\\", ":")) and not before.endswith(("(", "[", "{", ",", "\\"))
            and '"""' not in line)


def _node(node) -> tuple | None:
    return None if node is None else (node.type, node.start_pos, node.get_code(include_prefix=False))


def _entry(k) -> object:
    """An entry of an MRO (a class of the file or a qualified name) in terms that compare across trees."""
    return ("class", k.name, k.node.start_pos) if isinstance(k, ClassInfo) else k


def _member(member: Member | None) -> tuple | None:
    if member is None:
        return None
    return (member.name, _entry(member.owner), _node(member.node), _node(member.value), member.ambiguous,
            _node(member.function.node) if member.function is not None else None)


def _site(site) -> tuple:
    return (_entry(site.cls), _member(site.bprop), _node(site.construct.node) if site.construct else None,
            _node(site.function.node) if site.function is not None else None, site.modes, site.call_counts,
            site.external_construct, site.inputs, site.input_range)


def _parts(parts) -> object:
    """``Context._site_parts``' answer in terms that compare across trees."""
    if not parts:
        return parts
    bprop, modes, resolved, construct, external, counted = parts
    return (_member(bprop), modes, _node(resolved.function.node) if resolved is not None else None,
            _node(construct.node) if construct is not None else None, external, counted)


class _Checks:
    """What each keystroke's program carried, and the comparisons made."""

    def __init__(self):
        self.carried = 0  # programs that carried class caches over
        self.filtered = 0  # … from a replaced statement with classes (answers dropped)
        self.plain = 0  # … from one without (all kept)
        self.dropped = 0  # MRO entries dropped in all
        self.declined = 0  # deltas whose statement changed how a name resolves (nothing carried)
        self.entries = 0  # carried entries compared


def _class_by_place(program: Program) -> dict:
    return {(c.name, c.node.start_pos): c for c in program.classes}


def _compare(program: Program, sites: list, text: str, checks: _Checks) -> None:
    fresh = Program(parse_text(text), text)
    fresh_ctx = Context(fresh, Settings())
    assert [_site(s) for s in sites] == [_site(s) for s in fresh_ctx.cell_sites]
    carried = program.__dict__.get("_carried_class_caches")
    if carried is None:
        return
    twins = _class_by_place(fresh)
    mine = {id(c): c for c in program.classes}

    def twin(key):
        cls = mine[key]  # (every key is a class of this program: no stale id carried)
        return twins[(cls.name, cls.node.start_pos)]

    for key, mro in carried["_mro_cache"].items():
        assert [_entry(k) for k in mro] == [_entry(k) for k in fresh.mro(twin(key))], mine[key].name
    for key, mro in carried["_acyclic_mro"].items():
        assert [_entry(k) for k in mro] == [_entry(k) for k in fresh.mro(twin(key))], mine[key].name
    for key, answer in carried["_is_cell_cache"].items():
        assert answer == fresh.is_cell(twin(key)), mine[key].name
    for key, answer in carried["_is_primitive_cache"].items():
        assert answer == fresh.is_primitive(twin(key)), mine[key].name
    for (key, name), member in carried["_lookup_memo"].items():
        assert _member(member) == _member(fresh.lookup(twin(key), name)), (mine[key].name, name)
        # a member of a class not re-read is the very object a fresh lookup in this program finds
        assert member is program._lookup(mine[key], name), (mine[key].name, name)
    for qualname, answer in carried["_nn_layer_memo"].items():
        assert answer == fresh.is_nn_layer(qualname), qualname
    for key, answer in carried["_hierarchy_memos"].get("cell_sites", {}).items():
        assert answer == fresh_ctx._may_be_cell_site(twin(key)), mine[key].name
    for key, parts in carried["_member_memos"].get("cell_site_parts", {}).items():
        assert _parts(parts) == _parts(fresh_ctx._site_parts(twin(key))[0]), mine[key].name
    checks.entries += sum(map(len, (carried["_mro_cache"], carried["_lookup_memo"], carried["_is_cell_cache"])))


def _spy(monkeypatch) -> tuple[_Checks, list]:
    """Every cell_sites computed by the session is compared with a fresh program's; counts the carrying."""
    checks = _Checks()
    compared = []
    original = Context.__dict__["cell_sites"].func
    busy = []

    def cell_sites(self):
        sites = original(self)
        if busy:
            return sites  # the fresh context's own
        program = self.program
        delta = program.delta
        carried = program.__dict__.get("_carried_class_caches")
        if delta is not None and carried is None:
            checks.declined += 1
        if carried is not None:
            checks.carried += 1
            if delta.old[1][1]:
                checks.filtered += 1
            else:
                checks.plain += 1
        busy.append(True)
        try:
            _compare(program, sites, program.text, checks)
        finally:
            busy.pop()
        compared.append(program.text)
        return sites

    spied = cached_property(cell_sites)
    spied.__set_name__(Context, "cell_sites")
    monkeypatch.setattr(Context, "cell_sites", spied)
    carry = Program.__dict__["_carried_class_caches"].func

    def carried_class_caches(self):
        carried = carry(self)
        if carried is not None:  # (counted as carried, before this program adds its own entries)
            checks.dropped += len(self.delta.previous._mro_cache) - len(carried["_mro_cache"])
        return carried

    spied_carry = cached_property(carried_class_caches)
    spied_carry.__set_name__(Program, "_carried_class_caches")
    monkeypatch.setattr(Program, "_carried_class_caches", spied_carry)
    return checks, compared


def test_carried_class_resolution_equals_a_fresh_one_under_random_edits(monkeypatch):
    checks, compared = _spy(monkeypatch)
    text = model_corpus.generate(250) + TAIL
    rnd = random.Random(SEED)
    settings = Settings()
    with DocumentSession("sites") as session:
        session.analyse(text, settings)
        for _step in range(160):
            edited, broken = _edit(rnd, text)
            session.analyse(edited, settings)
            assert compared[-1] == edited  # (the session's own program was checked, not only a fix's)
            if broken:
                session.analyse(text, settings)  # typed back
            else:
                text = edited
    # The sequence must have taken the carried path often, from statements with classes too (entries dropped),
    # and declined it when a statement changed how a name resolves.
    assert checks.carried >= 90, vars(checks)
    assert checks.filtered >= 80 and checks.plain >= 1, vars(checks)
    assert checks.dropped >= 80, vars(checks)
    assert checks.declined >= 8, vars(checks)
    assert checks.entries >= 2500, vars(checks)


def _lines_with(lines: list[str], start: str) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(start))


def _analysed_programs(monkeypatch) -> list:
    """The programs the session analyses, by their carried caches (no program is kept: their dicts are)."""
    seen = []
    original = Context.__dict__["cell_sites"].func

    def cell_sites(self):
        sites = original(self)
        program = self.program
        seen.append((program.delta, program.__dict__.get("_carried_class_caches"), [_site(s) for s in sites]))
        return sites

    spied = cached_property(cell_sites)
    spied.__set_name__(Context, "cell_sites")
    monkeypatch.setattr(Context, "cell_sites", spied)
    return seen


def test_a_subclass_of_the_edited_class_is_resolved_again(monkeypatch):
    seen = _analysed_programs(monkeypatch)
    lines = (model_corpus.generate(120) + TAIL).split("\n")
    with DocumentSession("sites") as session:
        session.analyse("\n".join(lines), Settings())
        assert "Child" in [site[0][1] for site in seen[-1][2]]
        # GradBase loses its bprop: Child, GrandChild and Cond are no cell sites any more (Bound binds self.bprop)
        at = _lines_with(lines, "class GradBase(") + 1
        lines[at] = lines[at].replace("def bprop(", "def bprox(")
        session.analyse("\n".join(lines), Settings())
        delta, carried, sites = seen[-1]
        assert delta is not None and carried is not None
        names = [site[0][1] for site in sites]
        assert not {"GradBase", "Child", "GrandChild", "Cond"} & set(names), names
        assert {"Relu", "Outer", "Bound"} <= set(names), names  # (Plain: Outer's child, shadowed by its bprop)
        # the MROs through GradBase were dropped; the others were carried
        assert len(carried["_mro_cache"]) < len(delta.previous._mro_cache)
        # the bprop back: the subclasses are sites again
        lines[at] = lines[at].replace("def bprox(", "def bprop(")
        session.analyse("\n".join(lines), Settings())
        assert {"Child", "GrandChild"} <= {site[0][1] for site in seen[-1][2]}


def test_nothing_is_carried_when_the_statement_changes_how_a_name_resolves(monkeypatch):
    seen = _analysed_programs(monkeypatch)
    lines = (model_corpus.generate(120) + TAIL).split("\n")
    with DocumentSession("sites") as session:
        session.analyse("\n".join(lines), Settings())
        at = _lines_with(lines, "class Mixin")
        lines[at] = "class GradBase:"  # a second GradBase after the first: Child's base is this one now
        session.analyse("\n".join(lines), Settings())
        delta, carried, sites = seen[-1]
        assert delta is not None and carried is None
        assert "Child" not in [site[0][1] for site in sites]
        at = _lines_with(lines, "Base = nn.Cell")
        lines[at] = "Base = nn.Dense"  # an alias re-pointed: Plain's MRO changes without a class of it changing
        session.analyse("\n".join(lines), Settings())
        delta, carried, _sites = seen[-1]
        assert delta is not None and carried is None


def test_everything_is_carried_from_a_statement_without_classes(monkeypatch):
    seen = _analysed_programs(monkeypatch)
    text = model_corpus.generate(120) + TAIL
    with DocumentSession("sites") as session:
        session.analyse(text, Settings())
        session.analyse(text.replace("net(1, 2)", "net(2, 1)"), Settings())
        delta, carried, _sites = seen[-1]
        assert delta is not None and carried is not None and not delta.old[1][1]
        for name in ("_mro_cache", "_is_cell_cache", "_lookup_memo"):
            assert carried[name].keys() >= getattr(delta.previous, name).keys(), name
        assert carried["_hierarchy_memos"]["cell_sites"].keys() >= delta.previous._hierarchy_memos["cell_sites"].keys()


def test_an_edited_import_resolves_every_class_again(monkeypatch):
    checks, compared = _spy(monkeypatch)  # (each program's cell sites and carried caches against a fresh one's)
    seen = _analysed_programs(monkeypatch)
    lines = (model_corpus.generate(120) + TAIL).split("\n")
    at = _lines_with(lines, "import mindspore.nn as nn")
    with DocumentSession("sites") as session:
        session.analyse("\n".join(lines), Settings())
        assert seen[-1][2]
        # (``nn.Cell`` is torch's, then numpy's: no class of the file is a Cell)
        for spelled in ("import torch.nn as nn", "import mindspore.nn as nn", "import numpy as nn",
                        "import mindspore.nn as nn"):
            lines[at] = spelled
            session.analyse("\n".join(lines), Settings())
            delta, _carried, sites = seen[-1]
            assert delta is not None and compared[-1] == "\n".join(lines)
            assert bool(sites) == ("mindspore" in spelled), spelled


def test_a_flag_read_by_a_class_body_changes_its_members(monkeypatch):
    checks, compared = _spy(monkeypatch)  # (each program's cell sites and carried caches against a fresh one's)
    seen = _analysed_programs(monkeypatch)
    lines = (model_corpus.generate(120) + TAIL).split("\n")
    at = _lines_with(lines, "FLAG = True")
    with DocumentSession("sites") as session:
        session.analyse("\n".join(lines), Settings())
        for flag in ("False", "True", "False"):
            lines[at] = f"FLAG = {flag}"
            session.analyse("\n".join(lines), Settings())
            delta, carried, sites = seen[-1]
            assert delta is not None and carried is not None and compared[-1] == "\n".join(lines)
            cond = next(site for site in sites if site[0][1] == "Cond")
            assert cond[7] == (["x"] if flag == "True" else ["x", "y"])  # construct's inputs


def test_a_def_named_like_a_flag_changes_the_members_of_a_class_reading_it(monkeypatch):
    checks, compared = _spy(monkeypatch)  # (each program's cell sites and carried caches against a fresh one's)
    seen = _analysed_programs(monkeypatch)
    lines = (model_corpus.generate(120) + TAIL).split("\n")
    at = _lines_with(lines, "class Plain(") + 1
    with DocumentSession("sites") as session:
        session.analyse("\n".join(lines), Settings())
        # a method named FLAG in another class: ``if FLAG:`` in Cond's body is not known any more (a def binds
        # FLAG too), so either construct may run
        for header in ("    def FLAG(self, x):", "    def construct(self, x):"):
            lines[at] = header
            session.analyse("\n".join(lines), Settings())
            delta, carried, sites = seen[-1]
            assert delta is not None and carried is not None and delta.old[1][1] and compared[-1] == "\n".join(lines)
            cond = next((site for site in sites if site[0][1] == "Cond"), None)
            if "FLAG" in header:
                assert cond is None  # no construct known: the same site as GradBase's (its bprop, no construct)
            else:
                assert cond[7] == ["x"]


def test_a_bprop_property_is_resolved_again(monkeypatch):
    checks, compared = _spy(monkeypatch)  # (each program's cell sites and carried caches against a fresh one's)
    seen = _analysed_programs(monkeypatch)
    lines = (model_corpus.generate(120) + TAIL).split("\n")
    at = _lines_with(lines, "def back_fn(")
    with DocumentSession("sites") as session:
        session.analyse("\n".join(lines), Settings())
        for header in ("def back_fx(self, x, out, dout):", "def back_fn(self, x, out, dout):"):
            lines[at] = header
            session.analyse("\n".join(lines), Settings())
            delta, carried, sites = seen[-1]
            assert delta is not None and carried is not None and compared[-1] == "\n".join(lines)
            prop = next(site for site in sites if site[0][1] == "Prop")
            assert (prop[3] is None) == ("back_fx" in header)  # what the bprop property hands back


def test_nothing_is_carried_with_classes_built_by_type(monkeypatch):
    checks, compared = _spy(monkeypatch)  # (each program's cell sites and carried caches against a fresh one's)
    seen = _analysed_programs(monkeypatch)
    lines = (model_corpus.generate(120) + TAIL + """
Built = type("Built", (nn.Cell,), {"construct": lambda self, x: x, "bprop": lambda self, x, out, dout: (dout,)})


class FromBuilt(Built):
    def construct(self, x, y):
        return x
""").split("\n")
    at = _lines_with(lines, "class FromBuilt(") + 1
    with DocumentSession("sites") as session:
        session.analyse("\n".join(lines), Settings())
        for header in ("    def construct(self, x):", "    def construct(self, x, y):"):
            lines[at] = header
            session.analyse("\n".join(lines), Settings())
            delta, carried, sites = seen[-1]
            assert carried is None and compared[-1] == "\n".join(lines)
            built = next(site for site in sites if site[0][1] == "FromBuilt")
            assert built[7] == (["x"] if header.endswith("(self, x):") else ["x", "y"])
