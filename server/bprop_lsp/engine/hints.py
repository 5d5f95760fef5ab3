"""What an editor shows beside the findings: each custom bprop MindSpore will call (hover, inlay hints: what it
passes to each parameter, which input each returned gradient belongs to) and the Cells that could take one
("Add a custom bprop")."""
from __future__ import annotations

from dataclasses import dataclass

from .context import Context, Signature
from .model import Position, Span
from .parsing import POSITIONAL
from .program import Program
from .zeros_like import zeros_like_spelling


@dataclass(frozen=True)
class BpropInfo:
    """A custom bprop the engine recognised, for hover: what MindSpore will pass to each parameter."""

    owner: str  # Cell class or "ops.Custom"
    kind: str  # "cell" | "custom-op"
    name_span: Span  # the bprop's name (``def bprop`` / the attribute / the ``bprop=`` keyword)
    expected: tuple[str, ...] | None  # e.g. ("self", "x", "y", "out", "dout"); None when unknown
    roles: tuple[tuple[str, str], ...]  # (parameter, what MindSpore passes to it)
    construct_span: Span | None = None
    # Inlay hints: after each parameter what MindSpore passes (``← x``), after each returned gradient the input
    # it belongs to (``→ x``).
    hints: tuple["Hint", ...] = ()


@dataclass(frozen=True)
class Hint:
    """A short label shown after ``position`` (an LSP inlay hint; the CLI has no use for it)."""

    position: Position
    label: str
    tooltip: str = ""


@dataclass(frozen=True)
class Skeleton:
    """A Cell with a readable ``construct`` and no custom bprop: where the "Add a custom bprop" action writes one."""

    owner: str
    construct_span: Span  # the construct's name: where the action is offered
    insert_at: Position  # start of the line after construct's body
    indent: str  # construct's ``def`` indentation
    body_indent: str  # one level deeper
    newline: str
    inputs: tuple[str, ...]
    zeros_like: str  # how this file spells zeros_like (``ops.zeros_like``)
    out_name: str = "out"
    dout_name: str = "dout"

    def text(self, snippet: bool = False) -> str:
        """The bprop to insert; with ``snippet`` an LSP snippet with tab stops on the gradients."""
        nl, ind, body = self.newline, self.indent, self.body_indent
        params = ", ".join(("self", *self.inputs, self.out_name, self.dout_name))
        grads = []
        for i, name in enumerate(self.inputs, start=1):
            grad = f"{self.zeros_like}({name})"
            grads.append("${%d:%s}" % (i, _escape_snippet(grad)) if snippet else grad)
        if not grads:
            ret = "()"
        elif len(grads) == 1:
            ret = f"({grads[0]},)"
        else:
            ret = ", ".join(grads)
        text = f"{nl}{ind}def bprop({params}):{nl}{body}return {ret}{nl}"
        return text


def _escape_snippet(text: str) -> str:
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


def bprop_infos(ctx: Context) -> list[BpropInfo]:
    infos = []
    p = ctx.program
    for site in ctx.cell_sites:
        fn = site.function
        if fn is None:
            continue
        construct = site.construct
        if fn.name_node is not None and (construct is None or p.statement_facts(construct.node) is p.statement_facts(fn.node)):
            # Read from the bprop's statement alone given the label and the inputs: kept with that statement. (The
            # inputs are told by what they are read from, construct, the layer base and the calls' counts: a site
            # is a new object on every keystroke, and reading its inputs again costs more than the rest.)
            memo = p.node_fact(fn.node, POSITIONAL + "bprop_infos", lambda node: {})  # (spans)
            key = (site.owner_label, site.external_construct, site.call_counts,
                   None if construct is None else id(construct.node))
            entry = memo.get(key)
            if entry is None or entry[0] is not (None if construct is None else construct.node):
                entry = memo[key] = (None if construct is None else construct.node, _cell_bprop_info(p, site, fn))
            infos.append(entry[1])
            continue
        infos.append(_cell_bprop_info(p, site, fn))
    for op in ctx.custom_op_sites:
        fn = op.function
        if fn is None or fn.name_node is None:
            continue
        sig = Signature(fn, skip_self=op.bound)
        roles = []
        expected = None
        if op.inputs is not None:
            expected = tuple([f"input{i}" for i in range(op.inputs)] + ["out", "dout"])
            targets = [f"op input {i}" for i in range(op.inputs)] + ["`out`: the op's output", "`dout`: the gradient flowing into out"]
            for i, param in enumerate(sig.positional):
                roles.append((param.name, targets[i] if i < len(targets) else "nothing: MindSpore passes no value here"))
        hints = _kept_hints(p, fn, op.bound, [f"input{i}" for i in range(op.inputs)]) if op.inputs is not None else ()
        infos.append(BpropInfo("ops.Custom", "custom-op", p.span(fn.name_node), expected, tuple(roles), None, hints))
    return infos


def _cell_bprop_info(p: Program, site, fn) -> BpropInfo:
    """What hover and inlay hints show for one Cell bprop."""
    name_span = p.span(fn.name_node) if fn.name_node is not None else p.span(site.bprop.node.children[0])
    inputs = site.inputs
    expected = None
    roles: list[tuple[str, str]] = []
    if inputs is not None:
        expected = ("self", *inputs, "out", "dout")
        sig = Signature(fn, skip_self=_has_self(fn))
        pos = sig.positional
        targets = [f"forward input `{n}` of construct" for n in inputs] + [
            "`out`: the forward output of construct", "`dout`: the gradient flowing into out"]
        for i, param in enumerate(pos):
            roles.append((param.name, targets[i] if i < len(targets) else "nothing: MindSpore passes no value here"))
    construct_span = p.span(site.construct.name_node) if site.construct is not None and site.construct.name_node else None
    hints = _kept_hints(p, fn, _has_self(fn), inputs) if inputs is not None else ()
    return BpropInfo(site.owner_label, "cell", name_span, expected, tuple(roles), construct_span, hints)


def _kept_hints(p: Program, fn, skip_self: bool, inputs) -> tuple[Hint, ...]:
    """``_hints`` for the function's positional parameters (after self when ``skip_self``): read from the function
    alone given the inputs' names, so kept with its statement by (skip_self, inputs)."""
    memo = p.node_fact(fn.node, POSITIONAL + "hints", lambda node: {})  # (positions)
    key = (skip_self, tuple(inputs))
    hints = memo.get(key)
    if hints is None:
        hints = memo[key] = _hints(p, fn, Signature(fn, skip_self=skip_self).positional, inputs)
    return hints


def _hints(p: Program, fn, positional, inputs) -> tuple[Hint, ...]:
    """``← x`` after each parameter, ``→ x`` after each entry of a returned tuple display."""
    from .trees import iter_own_nodes

    names = [*inputs, "out", "dout"]
    hints = []
    for i, param in enumerate(positional):
        what = names[i] if i < len(names) else "nothing"
        end = param.node.name.end_pos
        hints.append(Hint(Position(end[0] - 1, end[1]), f"← {what}",
                          f"MindSpore passes {'the forward input ' + what if i < len(inputs) else what} here"))
    if len(positional) != len(names) or fn.node.type != "funcdef":
        return tuple(hints)
    for node in iter_own_nodes(fn.node):
        if node.type != "return_stmt" or len(node.children) < 2:
            continue
        value = node.children[1]
        if value.type == "atom" and value.children[0] == "(" and len(value.children) == 3:
            value = value.children[1]
            if value.type != "testlist_comp":
                continue
        if value.type not in ("testlist_star_expr", "testlist", "testlist_comp"):
            continue
        items = [c for c in value.children if c != ","]
        if any(c.type in ("comp_for", "sync_comp_for") for c in items) or len(items) > len(inputs):
            continue
        for item, name in zip(items, inputs):
            end = item.end_pos
            hints.append(Hint(Position(end[0] - 1, end[1]), f"→ {name}", f"the gradient of forward input {name}"))
    return tuple(hints)


def skeletons_of(ctx: Context, classes=None) -> list[Skeleton]:
    """Cells whose construct has a fixed number of inputs and no custom bprop anywhere in their MRO (among
    ``classes``, default all of the file's)."""
    p = ctx.program
    out = []
    if not p.text_contains("construct"):
        return out
    newline = p.index.newline()
    for cls in (p.classes if classes is None else classes):
        if cls.node.type != "classdef":
            continue  # a class built by type() has no body to add a bprop to
        parts = _skeleton_parts(p, cls)  # (what the class alone tells, first)
        if parts is None or not p.is_cell(cls) or p.lookup(cls, "bprop") is not None or p.bound_late(cls):
            continue
        construct_span, end_line, indent, body_indent, inputs, out_name, dout_name = parts
        if end_line >= p.index.line_count:
            continue  # construct ends the file without a line break: nowhere clean to insert
        # (Spelled with a module-level import no parameter of the bprop hides; plan_skeletons adds the import
        # when there is none.)
        zeros = zeros_like_spelling(p, {*inputs, out_name, dout_name})
        out.append(Skeleton(cls.name, construct_span, Position(end_line, 0), indent, body_indent, newline,
                            inputs, zeros, out_name, dout_name))
    return out


def _skeleton_parts(p: Program, cls) -> tuple | None:
    """What a skeleton reads from the class's own construct (its span, where the bprop goes, the indentation, the
    inputs and the out/dout names), or None when construct has no fixed inputs: read once per class while its
    members stay the same (they are kept with the class statement)."""
    members = cls.members
    memo = cls.__dict__.get("_skeleton_parts")
    # (The parts hold positions: the class must also be where it was, lines inserted above it move it.)
    where = cls.node.start_pos
    if memo is not None and memo[0] is members and memo[2] == where:
        return memo[1]
    parts = None
    member = members.get("construct")
    fn = member.function if member is not None else None
    if fn is not None and fn.node.type == "funcdef":
        sig = Signature(fn, skip_self=True)
        if not (sig.vararg is not None or sig.varkw is not None or sig.kwonly or not fn.params
                or fn.params[0].name != "self"):
            def_line = p.index.line_text(fn.def_line)
            indent = def_line[:len(def_line) - len(def_line.lstrip())]
            body = fn.body
            first_body = body.children[1] if body.type == "suite" and len(body.children) > 1 else None
            if first_body is not None:
                line = p.index.line_text(first_body.start_pos[0] - 1)
                body_indent = line[:len(line) - len(line.lstrip())]
            else:
                body_indent = indent + "    "
            end_line = fn.node.end_pos[0] - 1 if fn.node.end_pos[1] == 0 else fn.node.end_pos[0]
            taken = {q.name for q in sig.positional}
            parts = (p.span(fn.name_node), end_line, indent, body_indent, tuple(q.name for q in sig.positional),
                     "out" if "out" not in taken else "out_", "dout" if "dout" not in taken else "dout_")
    cls.__dict__["_skeleton_parts"] = (members, parts, where)
    return parts


def _has_self(fn) -> bool:
    decorators = fn.decorator_names
    if "staticmethod" in decorators:
        return False
    return bool(fn.params) and fn.params[0].name == "self"
