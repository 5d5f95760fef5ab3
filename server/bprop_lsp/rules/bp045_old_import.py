"""BP045: importing from ``mindspore.ops._grad`` (the MindSpore 1.x module path)."""
from __future__ import annotations

from ..engine.context import Context
from ..engine.model import Edit, Fix
from ..engine.trees import call_of
from .base import BOTH, Draft, Invalid, Rule, Valid

OLD_ROOT = "mindspore.ops._grad"
NEW_ROOT = "mindspore.ops._grad_experimental"
OLD = "mindspore.ops._grad.grad_base"
NEW = "mindspore.ops._grad_experimental.grad_base"
# Modules of mindspore.ops._grad_experimental in the 2.10 wheel: an old path to one of them has a known new home.
NEW_MODULES = frozenset({
    "grad_array_ops", "grad_base", "grad_comm_ops", "grad_debug_ops", "grad_implementations", "grad_inner_ops",
    "grad_math_ops", "grad_nn_ops", "grad_quant_ops", "grad_sparse", "grad_sparse_ops", "taylor_rule",
})
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def is_old_path(path: str) -> bool:
    return path == OLD_ROOT or path.startswith(OLD_ROOT + ".")


def new_path(path: str) -> str | None:
    """The 2.x home of an old module path, when the 2.10 wheel has that module."""
    rest = path[len(OLD_ROOT) + 1:] if path.startswith(OLD_ROOT + ".") else ""
    if rest and rest.split(".")[0] in NEW_MODULES:
        return f"{NEW_ROOT}.{rest}"
    return None


def _handles_import_error(clause) -> bool:
    if clause.type == "keyword":  # bare `except:`
        return True
    caught = clause.children[1]
    names = caught.children[1].children[::2] if caught.type == "atom" and caught.children[1].type == "testlist_comp" \
        else [caught.children[1]] if caught.type == "atom" else [caught]
    return any(n.get_code().strip().rsplit(".", 1)[-1] in IMPORT_ERRORS for n in names)


def _recovers(suite) -> bool:
    """Whether an except block goes on without raising: it imports a fallback, or it has no ``raise``."""
    imports = raises = False
    stack = [suite]
    while stack:
        node = stack.pop()
        if node.type in ("import_name", "import_from"):
            imports = True
        elif node.type == "raise_stmt" or (node.type == "keyword" and node.value == "raise"):
            raises = True
        elif node.type in ("power", "atom_expr"):
            c = call_of(node)
            if c and c[0] and (c[0].endswith("import_module") or c[0] == "__import__"):
                imports = True
        if node.type not in ("funcdef", "classdef"):
            stack.extend(getattr(node, "children", ()))
    return imports or not raises


def guarded(node) -> bool:
    """Whether an import that fails in MindSpore 2.x cannot raise here: it sits in the body of a ``try`` whose
    ImportError handler imports a fallback (or at least does not raise), or under ``if TYPE_CHECKING:``."""
    child, parent = node, node.parent
    while parent is not None and parent.type not in ("funcdef", "classdef", "file_input"):
        if parent.type == "try_stmt" and child is parent.children[2]:
            kids = parent.children
            for i, clause in enumerate(kids):
                if clause.type == "except_clause" or (clause.type == "keyword" and clause.value == "except"):
                    if _handles_import_error(clause) and _recovers(kids[i + 2]):
                        return True
        if parent.type == "if_stmt" and child is parent.children[3]:
            test = parent.children[1].get_code().strip()
            if test in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                return True
        child, parent = parent, parent.parent
    if parent is not None and parent.type in ("funcdef", "classdef"):
        return guarded(parent)  # the def itself may sit in a guarded block
    return False


class OldGradBaseImport(Rule):
    code = "BP045"
    name = "old-grad-base-import"
    summary = ("mindspore.ops._grad was removed in MindSpore 2.x; bprop_getters lives in "
               "mindspore.ops._grad_experimental.grad_base (a private API). An import in a `try` whose "
               "ImportError handler imports a fallback (or does not raise), or under `if TYPE_CHECKING:`, is fine.")
    mindspore_says = "ModuleNotFoundError: No module named 'mindspore.ops._grad'"
    fix_title = "Import from mindspore.ops._grad_experimental"
    valid = (
        Valid(f"from {NEW} import bprop_getters\n"),
        Valid(f"try:  # MindSpore 1.x\n    from {OLD} import bprop_getters\nexcept ImportError:  # MindSpore 2.x\n"
              f"    from {NEW} import bprop_getters\n", "a version-compatibility fallback"),
        Valid(f"from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from {OLD} import bprop_getters\n"),
    )
    invalid = (
        Invalid(f"from {OLD} import bprop_getters\n", fixed=f"from {NEW} import bprop_getters\n",
                at="1:1", message=("`mindspore.ops._grad.grad_base` does not exist in MindSpore 2.x "
                                   "(ModuleNotFoundError); use mindspore.ops._grad_experimental.grad_base")),
        Invalid("import importlib\n\nbprop_getters = importlib.import_module(\"mindspore.ops._grad.grad_base\").bprop_getters\n",
                note="the same path as a string",
                at="3:41", message=("`mindspore.ops._grad.grad_base` does not exist in MindSpore 2.x "
                                    "(ModuleNotFoundError); use mindspore.ops._grad_experimental.grad_base")),
    )

    def check(self, ctx: Context):
        p = ctx.program
        for node in p.import_nodes:
            if guarded(node):
                continue
            if node.type == "import_from":
                try:
                    names = node.get_from_names()
                except (AttributeError, IndexError):
                    continue
                if node.level or not names:
                    continue
                path = ".".join(n.value for n in names)
                if not is_old_path(path):
                    continue
                new = new_path(path)
                fix = None
                if new is not None:
                    fix = Fix(f"Import from {new}", (Edit(p.span(names[0].start_pos, names[-1].end_pos), new),))
                yield Draft(p.span(node), f"`{path}` does not exist in MindSpore 2.x (ModuleNotFoundError); "
                            f"{'use ' + new if new else 'bprop_getters is in ' + NEW}", fails_in=BOTH, fix=fix,
                            noqa_line=node.start_pos[0] - 1)
            else:
                for path in node.get_paths():
                    dotted_path = ".".join(n.value for n in path)
                    if is_old_path(dotted_path):
                        yield Draft(p.span(node), f"`{dotted_path}` does not exist in MindSpore 2.x "
                                    f"(ModuleNotFoundError); use {new_path(dotted_path) or NEW}", fails_in=BOTH,
                                    noqa_line=node.start_pos[0] - 1)
        yield from self._dynamic_imports(ctx)

    def _dynamic_imports(self, ctx: Context):
        """``importlib.import_module("mindspore.ops._grad...")`` / ``__import__(...)`` with a literal path."""
        p = ctx.program
        if not p.text_contains("_grad"):
            return
        for word in ("import_module", "__import__"):
            for node in p.nodes_matching(word, ("power", "atom_expr")):
                arg = _literal_argument(node, word)
                if arg is None:
                    continue
                path = arg.value.strip("'\"")
                if not is_old_path(path) or guarded(node):
                    continue
                yield Draft(p.span(arg), f"`{path}` does not exist in MindSpore 2.x (ModuleNotFoundError); use "
                            f"{new_path(path) or NEW}", fails_in=BOTH, noqa_line=arg.start_pos[0] - 1)


def _literal_argument(node, word: str):
    """The string literal passed first to the ``word(...)`` call inside ``node`` (``importlib.import_module(
    "...")``, also followed by ``.attr``), or None."""
    kids = node.children
    for i, kid in enumerate(kids[:-1]):
        named = (kid.type == "name" and kid.value == word) or (
            kid.type == "trailer" and kid.children[0] == "." and kid.children[1].value == word)
        call = kids[i + 1]
        if not named or call.type != "trailer" or call.children[0] != "(" or len(call.children) < 3:
            continue
        arg = call.children[1]
        if arg.type == "arglist":
            arg = arg.children[0]
        if arg.type == "string" and arg.value[:1] in ("'", '"'):
            return arg
    return None
