"""What MindSpore 2.10 itself defines: the qualified names of its Cell, Primitive, ``jit``, ``Parameter`` and
``Custom`` (and what a resolved name is one of), the execution mode a ``set_context`` call sets, and what the wheel
ships.

* The names: ``is_mindspore(qualname, names)`` with the file's imports already applied (``Program.qualname``,
  ``Program.resolve_dotted``); ``Program.is_cell``/``is_primitive`` follow a class's MRO to these.
* Read from the data files that scripts/extract_mindspore_data.py derives from the wheel
  (``bprop_lsp/data/*.txt``; lru_cached, nothing imports MindSpore): built-in Primitive names, the ones with a
  C++ bprop, and the ``mindspore.nn`` Cell classes with their ``construct`` signatures.

Where a file gives a Primitive a Python bprop (``get_bprop``, ``bprop_getters``) is ``primitive_bprops.py``'s.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .trees import call_arguments, call_of

CELL_NAMES = {"mindspore.nn.Cell", "mindspore.nn.cell.Cell", "mindspore.Cell"}
PRIMITIVE_NAMES = {
    f"mindspore.ops.{p}{name}"
    for p in ("", "primitive.", "operations.")
    for name in ("Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck")
} | {"mindspore.ops.primitive.Primitive", "mindspore.Primitive"}
JIT_NAMES = {"mindspore.jit", "mindspore.common.api.jit", "mindspore.ms_function", "mindspore.common.jit"}
PARAMETER_NAMES = {"mindspore.Parameter", "mindspore.common.parameter.Parameter", "mindspore.common.Parameter"}
CUSTOM_NAMES = {"mindspore.ops.Custom", "mindspore.ops.operations.Custom", "mindspore.ops.operations.custom_ops.Custom"}
BPROP_GETTER_REGISTRIES = {"bprop_getters", "bprops"}
# Unimported spellings accepted verbatim (a snippet's ``nn.Cell`` with no import).
CELL_BARE = ("nn.Cell", "Cell")
PRIMITIVE_BARE = ("Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck")

# id of a name set -> (the set, the last parts of its names): read once per set (the sets are this module's
# constants; bounded all the same, for a caller's own set).
_LAST_PARTS: dict[int, tuple[set, set]] = {}


def is_mindspore(qualname: str | None, names: set[str], *, bare: tuple[str, ...] = ()) -> bool:
    """Whether the resolved dotted name ``qualname`` is one of MindSpore's ``names`` (or a re-export of one within
    the ``mindspore`` namespace), or one of the ``bare`` spellings."""
    if qualname is None:
        return False
    if qualname in names:
        return True
    # Re-exports: mindspore.nn.layer.x.Cell etc. are the same objects; compare the last part
    # within the mindspore namespace only.
    if qualname.startswith("mindspore."):
        memo = _LAST_PARTS.get(id(names))
        if memo is None or memo[0] is not names:
            if len(_LAST_PARTS) > 64:
                _LAST_PARTS.clear()
            memo = _LAST_PARTS[id(names)] = (names, {n.rsplit(".", 1)[-1] for n in names})
        if qualname.rsplit(".", 1)[-1] in memo[1]:
            return True
    # Unimported spellings in snippets (`nn.Cell` with no import) are accepted only verbatim.
    return qualname in bare


def is_cell_name(qualname: str | None) -> bool:
    """``mindspore.nn.Cell`` itself (any of its spellings)."""
    return is_mindspore(qualname, CELL_NAMES, bare=CELL_BARE)


def is_primitive_name(qualname: str | None) -> bool:
    """One of MindSpore's Primitive base classes (``Primitive``, ``PrimitiveWithInfer``, ``PrimitiveWithCheck``)."""
    return is_mindspore(qualname, PRIMITIVE_NAMES, bare=PRIMITIVE_BARE)


def is_nn_layer_name(qualname: str, imports: dict[str, str]) -> bool:
    """Whether ``qualname`` (resolved through the file's ``imports``) is a class MindSpore ships in ``mindspore.nn``
    (every one of them is a Cell): ``nn.ReLU``, ``nn.Dense`` …, not ``nn.Cell`` itself."""
    if is_mindspore(qualname, CELL_NAMES):
        return False
    if qualname.startswith("nn.") and ("nn" in imports or qualname.count(".") != 1):
        return False  # `nn` bound to something else
    if is_nn_cell_qualname(qualname):
        return True
    # A public class of mindspore.nn the 2.10 data does not list (a newer release's layer): still a Cell.
    return qualname.startswith("mindspore.nn.") and qualname.rsplit(".", 1)[-1][:1].isupper()



def set_context_mode(node):
    """The ``mode=`` argument of a ``set_context(...)`` call ``node``; None when it is no such call or sets
    something else (device, check_bprop)."""
    c = call_of(node)
    if not c or not c[0] or not c[0].endswith("set_context"):
        return None
    _, kwargs, _ = call_arguments(c[1])
    return kwargs.get("mode")


def mode_value(mode) -> str | None:
    """"graph" / "pynative" for a ``mode=`` argument MindSpore reads as one (``ms.GRAPH_MODE``, ``0`` …), else None."""
    code = mode.get_code().strip()
    if code.endswith("GRAPH_MODE") or code == "0":
        return "graph"
    if code.endswith("PYNATIVE_MODE") or code == "1":
        return "pynative"
    return None


def mode_settings_at(nodes: list) -> list[tuple[object, str]]:
    """(the function it runs in, or None at module level; mode) of each ``set_context(mode=...)`` call among
    ``nodes``."""
    found = []
    for node in nodes:
        mode = set_context_mode(node)
        value = mode_value(mode) if mode is not None else None
        if value is not None:
            found.append((node.search_ancestor("funcdef"), value))
    return found



# ------------------------------------------------------------------------------------ what the wheel ships
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
