"""What MindSpore 2.10 itself defines and how a file hooks into it.

* Read from the data files that scripts/extract_mindspore_data.py derives from the wheel
  (``bprop_lsp/data/*.txt``; lru_cached, nothing imports MindSpore): built-in Primitive names, the ones with a
  C++ bprop, and the ``mindspore.nn`` Cell classes with their ``construct`` signatures.
* Where a file gives a Primitive a Python bprop: ``get_bprop`` methods and ``bprop_getters``/``bprops``
  registrations, with the op name each one is keyed by (what MindSpore looks the bprop up by).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Iterator

from .program import BPROP_GETTER_REGISTRIES, ClassInfo, Function, Program, call_of, dotted, iter_scope_nodes


@dataclass(frozen=True)
class ConstructSig:
    """The ``construct`` signature a MindSpore Cell class has (its own or inherited), ``self`` excluded."""

    cls: str  # defining module.class, e.g. mindspore.nn.layer.activation.ReLU
    params: tuple[str, ...]  # positional parameters after self
    defaults: int  # how many of the trailing positional parameters have defaults
    vararg: str | None
    varkw: str | None
    kwonly: tuple[str, ...]  # keyword-only names
    kwonly_defaults: int  # how many keyword-only parameters have defaults
    defined_in: str  # the class whose construct this is (module.class)

    @property
    def required(self) -> int:
        return len(self.params) - self.defaults


def _data_lines(name: str) -> list[str]:
    text = resources.files("bprop_lsp").joinpath(f"data/{name}").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


@lru_cache(maxsize=1)
def builtin_ops() -> frozenset[str]:
    """Every public Primitive class name exported by ``mindspore.ops.operations`` (with or without a C++ bprop)."""
    return frozenset(line.strip() for line in _data_lines("builtin_ops.txt"))


@lru_cache(maxsize=1)
def ops_with_cpp_bprop() -> frozenset[str]:
    """Primitive names whose gradient GRAPH_MODE takes from a built-in C++ bprop, so a Python bprop registered or
    declared under the name is never called (probed on the wheel; names the probe could not settle are absent)."""
    return frozenset(line.strip() for line in _data_lines("cpp_bprop_ops.txt"))


@lru_cache(maxsize=1)
def nn_cells() -> dict[str, ConstructSig]:
    """Every exported dotted path of a ``mindspore.nn`` / ``mindspore.mint.nn`` Cell class -> its construct
    signature (``mindspore.nn.ReLU``, ``mindspore.nn.layer.activation.ReLU``, ... map to the same value)."""
    result: dict[str, ConstructSig] = {}
    for line in _data_lines("nn_cells.txt"):
        cols = line.split("\t")
        if len(cols) != 8 or cols[2] == "?":
            continue
        key, paths, params, defaults, vararg, varkw, kwonly, owner = cols
        kw = tuple(k for k in kwonly.split() if k != "-")
        sig = ConstructSig(
            cls=key,
            params=tuple(p for p in params.split() if p != "-"),
            defaults=int(defaults),
            vararg=None if vararg == "-" else vararg,
            varkw=None if varkw == "-" else varkw,
            kwonly=tuple(k.rstrip("=") for k in kw),
            kwonly_defaults=sum(1 for k in kw if k.endswith("=")),
            defined_in=owner,
        )
        for path in [key, *paths.split()]:
            result[path] = sig
    return result


def nn_cell_signature(qualname: str | None) -> ConstructSig | None:
    """The construct signature of the MindSpore Cell class ``qualname`` names, or None when it names none.

    Exact exported paths match; so does any other ``mindspore.nn.``/``mindspore.mint.nn.`` path whose last part
    is the name of an exported Cell class (a re-export the data does not list), when that name is unambiguous,
    and ``nn.X`` left unresolved (a snippet without imports, as the engine accepts a bare ``nn.Cell``)."""
    if not qualname:
        return None
    if qualname.startswith("nn.") and qualname.count(".") == 1:
        qualname = "mindspore." + qualname
    cells = nn_cells()
    sig = cells.get(qualname)
    if sig is not None:
        return sig
    for root in ("mindspore.nn.", "mindspore.mint.nn."):
        if qualname.startswith(root):
            leaf = qualname.rsplit(".", 1)[-1]
            found = {s for q, s in cells.items() if q.startswith(root) and q.rsplit(".", 1)[-1] == leaf}
            return found.pop() if len(found) == 1 else None
    return None


def is_nn_cell_qualname(qualname: str | None) -> bool:
    """Whether ``qualname`` (a resolved dotted name such as ``mindspore.nn.ReLU``) is a MindSpore Cell class."""
    return nn_cell_signature(qualname) is not None


# ------------------------------------------------------------------------------------ Primitive bprops in a file
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
