"""Where a file gives a Primitive a Python bprop: ``get_bprop`` methods and ``bprop_getters``/``bprops``
registrations, with the op name each one is keyed by (what MindSpore looks the bprop up by).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .definitions import ClassInfo, Function
from .mindspore_api import BPROP_GETTER_REGISTRIES
from .program import Program
from .trees import call_of, dotted, iter_scope_nodes


@dataclass(frozen=True)
class Registration:
    """``@<registry>.register(<key>)`` on ``getter``: ``key`` is the op name MindSpore looks it up by (None when
    the argument cannot be resolved statically), ``local`` the file's own class when the key is one."""

    getter: Function
    registry: str  # "bprop_getters" (the function returns the bprop) or "bprops" (the function is the bprop)
    target: str  # the argument as written
    key: str | None
    local: ClassInfo | None

    @property
    def bprop(self) -> Function | None:
        """The function MindSpore calls as the bprop: the getter's inner ``bprop`` def, or the function itself."""
        if self.registry == "bprops":
            return self.getter
        return inner_bprop(self.getter)


def inner_bprop(getter: Function) -> Function | None:
    """The nested ``def bprop`` a bprop getter returns (None when it builds it some other way)."""
    for node in iter_scope_nodes(getter.body):
        if node.type == "funcdef" and node.name.value == "bprop":
            return Function(node, "bprop")
    return None


def primitive_classes_with_bprop(p: Program) -> list[ClassInfo]:
    """The file's Primitive subclasses (not Cells) whose code mentions ``bprop``: the only ones a ``bprop`` or
    ``get_bprop`` member can be read from. Read once per analysis (do not modify). (The mention, kept with the
    class, is looked for first: resolving every class's bases on each keystroke costs more than the rules that
    read the result.)"""
    found = p.__dict__.get("_primitive_classes_with_bprop")
    if found is None:
        found = p.__dict__["_primitive_classes_with_bprop"] = [
            # (``is_cell`` first: the Cell sites have asked it of these classes already)
            cls for cls in p.classes if cls.mentions("bprop") and not p.is_cell(cls) and p.is_primitive(cls)]
    return found


def registrations(p: Program) -> Iterator[Registration]:
    """Every ``@bprop_getters.register(X)`` / ``@bprops.register(X)`` decorator in the file."""
    if not p.text_contains(".register"):
        return
    for _facts, fns in p.functions_by_statement():  # (in text order, whatever order the name table's keys are in)
        for fn in fns:
            for dec in fn.decorators:
                expr = dec.children[1]
                c = call_of(expr) if expr.type in ("power", "atom_expr") else None
                if not c or not c[0] or not c[0].endswith(".register"):
                    continue
                registry = _registry_name(p, c[0][: -len(".register")])
                if registry is None or len(c[1].children) < 3:
                    continue
                arg = c[1].children[1]
                if arg.type == "arglist" or arg.type == "argument":
                    continue  # several arguments or a keyword: not the registry's signature
                target = arg.get_code().strip()
                key, local = _op_key(p, arg, 0)
                yield Registration(fn, registry, target, key, local)


def getter_sites(p: Program) -> Iterator[tuple[ClassInfo, Function, Function | None]]:
    """(Primitive class, getter function, inner bprop or None) for get_bprop methods and for
    bprop_getters.register(Cls) where Cls is a Primitive class of this file."""
    for cls in primitive_classes_with_bprop(p):
        getter = cls.members.get("get_bprop")
        if getter is not None and getter.function is not None and not getter.function.is_lambda:
            yield cls, getter.function, inner_bprop(getter.function)
    for reg in registrations(p):
        if reg.local is not None and reg.registry == "bprop_getters" and p.is_primitive(reg.local):
            yield reg.local, reg.getter, inner_bprop(reg.getter)


def _registry_name(p: Program, text: str) -> str | None:
    """"bprop_getters"/"bprops" when ``text`` names one of MindSpore's bprop registries (any import spelling)."""
    leaf = text.rsplit(".", 1)[-1]
    if leaf in BPROP_GETTER_REGISTRIES:
        return leaf
    full = p.resolve_dotted(text)
    if full.startswith("mindspore.") and full.rsplit(".", 1)[-1] in BPROP_GETTER_REGISTRIES:
        return full.rsplit(".", 1)[-1]  # `from ...grad_base import bprop_getters as bg`
    return None


def _op_key(p: Program, node, depth: int) -> tuple[str | None, ClassInfo | None]:
    """The op name a registry key expression stands for: a string literal, a MindSpore op class, a class of
    this file, or a module-level name bound once to one of those."""
    if node.type == "strings" or (node.type == "string" and not _is_fstring(node)):
        try:
            value = node.children if node.type == "strings" else [node]
            if any(_is_fstring(s) for s in value):
                return None, None
            from ast import literal_eval

            text = literal_eval(node.get_code().strip())
        except (ValueError, SyntaxError):
            return None, None
        return (text, None) if isinstance(text, str) else (None, None)
    text = dotted(node)
    if text is None:
        return None, None
    if "." not in text and text not in p.imports:
        local = p.class_named(text)
        if local is not None:
            return local.name, local
        values = p.assignments.get(text, [])
        if len(values) == 1 and depth < 3:
            return _op_key(p, values[0], depth + 1)
        return None, None
    full = p.resolve_dotted(text)
    if full.startswith("mindspore.ops."):
        return full.rsplit(".", 1)[-1], None
    return None, None


def _is_fstring(node) -> bool:
    if node.type == "fstring":
        return True
    if node.type == "string":
        prefix = node.value[: len(node.value) - len(node.value.lstrip("rRbBuUfF"))]
        return "f" in prefix.lower() or "b" in prefix.lower()
    return False
