"""Layers point down: the server and the CLI use the engine's public API only (the package's ``__all__`` and its
value modules ``model``, ``options``, ``settings`` and ``text``), nothing private; the engine imports no rule, server or CLI
module anywhere (its rules are handed to it: ``bprop_lsp.checker``), and the server imports nothing from the CLI.
Within the engine no import cycle, function-local and ``TYPE_CHECKING`` imports counted; no rule imports another
(shared helpers have modules of their own); and the engine names no rule."""
import ast
import re
import tokenize
from pathlib import Path

import bprop_lsp.engine as engine

PACKAGE = Path(engine.__file__).resolve().parents[1]
PUBLIC_MODULES = {"model", "options", "settings", "text"}


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            yield node.level, node.module or "", [a.name for a in node.names]


def test_server_and_cli_use_only_the_engines_public_api():
    offenders = []
    for folder in ("lsp", "cli"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            for level, module, names in _imports(path):
                if level != 2 or not (module == "engine" or module.startswith("engine.")):
                    continue
                sub = module.split(".", 1)[1] if "." in module else None
                if sub is None:
                    bad = [n for n in names if n not in engine.__all__]
                elif sub in PUBLIC_MODULES:
                    bad = [n for n in names if n.startswith("_")]
                else:
                    bad = names
                offenders += [f"{folder}/{path.name}: {module}.{n}" for n in bad]
    assert offenders == []


def test_the_server_imports_nothing_from_the_cli():
    offenders = [f"lsp/{path.name}: {module}" for path in sorted((PACKAGE / "lsp").glob("*.py"))
                 for level, module, _ in _imports(path) if level == 2 and (module or "").split(".")[0] == "cli"]
    assert offenders == []


# What the engine must not import: the rules (handed to every analysis instead), the composition root that holds
# them, the server and the CLI.
_ABOVE_THE_ENGINE = ("rules", "checker", "lsp", "cli")


def _imports_above_the_engine(source: str) -> list[str]:
    """Every import of ``_ABOVE_THE_ENGINE`` in ``source`` (an engine module, two levels below the package root),
    at any depth (module level, in a function, under ``TYPE_CHECKING``): ``from ..rules import X``,
    ``from .. import rules``, ``from bprop_lsp.rules import X``, ``import bprop_lsp.rules`` and
    ``importlib.import_module("…rules…")`` / ``__import__`` of such a name."""
    found = []

    def above(dotted: str) -> bool:
        parts = dotted.split(".")
        return parts[0] in _ABOVE_THE_ENGINE or (parts[0] == "bprop_lsp" and len(parts) > 1
                                                 and parts[1] in _ABOVE_THE_ENGINE)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 2 and (above(module) or (not module and any(above(a.name) for a in node.names))):
                found.append(f"from {'.' * node.level}{module} import {', '.join(a.name for a in node.names)}")
            elif node.level == 0 and (above(module) or (module == "bprop_lsp"
                                                        and any(above(a.name) for a in node.names))):
                found.append(f"from {module} import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if above(a.name)]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            target = node.args[0].value
            if name in ("import_module", "__import__") and above(target.lstrip(".")):
                found.append(f"{name}({target!r})")
    return found


def test_the_engine_imports_no_rule_server_or_cli_anywhere():
    offenders = []
    for path in sorted((PACKAGE / "engine").glob("*.py")):
        offenders += [f"engine/{path.name}: {imp}" for imp in _imports_above_the_engine(path.read_text("utf-8"))]
    assert offenders == []


def test_the_engine_import_check_sees_imports_at_any_depth():
    # What the engine did before its rules were handed in (analysis.py, settings.py, __init__.py), and the other
    # spellings of the same import.
    lazy = (
        "def _analyze_module(module):\n"
        "    from ..rules import ALL_RULES\n"
        "    return ALL_RULES\n"
    )
    assert _imports_above_the_engine(lazy) == ["from ..rules import ALL_RULES"]
    spellings = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ..lsp.server import Server\n"
        "def f():\n"
        "    from .. import rules\n"
        "    import bprop_lsp.cli.main\n"
        "    from bprop_lsp.checker import RULES\n"
        "    from bprop_lsp import rules as registry\n"
        "    importlib.import_module('bprop_lsp.rules')\n"
        "    from ..engine.model import Finding\n"  # the engine itself: allowed
        "    from .parsing import grammar\n"
    )
    assert len(_imports_above_the_engine(spellings)) == 6


# ----------------------------------------------------------------------------- the engine's own layers
_ENGINE = PACKAGE / "engine"


def _engine_modules_imported(source: str, modules: set[str]) -> set[str]:
    """The engine modules (of ``modules``) that ``source``, an engine module, imports anywhere: at module level, in a
    function, under ``if TYPE_CHECKING:`` (every ``ImportFrom``/``Import`` node of the tree), spelled ``from .x``,
    ``from . import x``, ``from ..engine.x``, ``from bprop_lsp.engine.x`` or ``import bprop_lsp.engine.x``."""
    found = set()

    def add(dotted: str, names=()) -> None:
        # ``dotted``: the module path below the engine package ("" for the package itself)
        head = dotted.split(".")[0]
        if head in modules:
            found.add(head)
        elif not dotted:
            found.update(n for n in names if n in modules)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module, names = node.module or "", [a.name for a in node.names]
            if node.level == 1:
                add(module, names)
            elif node.level == 2 and (module == "engine" or module.startswith("engine.")):
                add(module[len("engine."):] if "." in module else "", names)
            elif node.level == 0 and (module == "bprop_lsp.engine" or module.startswith("bprop_lsp.engine.")):
                add(module[len("bprop_lsp.engine."):] if module != "bprop_lsp.engine" else "", names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("bprop_lsp.engine."):
                    add(alias.name[len("bprop_lsp.engine."):])
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``[a, b, a]``) through each strongly connected set of ``graph``'s nodes that has one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles = []
    for component in components:
        start = min(component)
        path, seen = [start], {start}
        while True:  # walk inside the component until the walk meets itself
            nxt = min(w for w in graph[path[-1]] if w in component)
            if nxt in seen:
                cycles.append(path[path.index(nxt):] + [nxt])
                break
            path.append(nxt)
            seen.add(nxt)
    return cycles


def test_no_import_cycle_among_the_engines_modules_counting_every_import():
    modules = {path.stem for path in _ENGINE.glob("*.py")}
    graph = {path.stem: _engine_modules_imported(path.read_text("utf-8"), modules) - {path.stem}
             for path in sorted(_ENGINE.glob("*.py"))}
    assert [" -> ".join(cycle) for cycle in _cycles(graph)] == []


def test_the_cycle_check_sees_imports_at_any_depth():
    modules = {"program", "values", "context", "model", "parsing"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "from .parsing import POSITIONAL\n"
        "if TYPE_CHECKING:\n    from .context import Context\n"
        "def f():\n"
        "    from .values import const_truth\n"
        "    from . import model\n"
        "    from ..engine.program import Program\n"
        "    import bprop_lsp.engine.parsing\n"
        "    from .rule_memo import RuleMemo\n"  # not among ``modules``
    )
    assert _engine_modules_imported(source, modules) == {"parsing", "context", "values", "model", "program"}
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# ----------------------------------------------------------------------------- the rules
_RULE_MODULE = re.compile(r"bp\d{3}_\w+")


def _rule_modules_imported(source: str) -> list[str]:
    """Every rule module (``bpNNN_*``) ``source`` imports, at any depth and in any spelling."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            parts = (node.module or "").split(".")
            found += [p for p in parts if _RULE_MODULE.fullmatch(p)]
            if not any(_RULE_MODULE.fullmatch(p) for p in parts):
                found += [a.name for a in node.names if _RULE_MODULE.fullmatch(a.name)]
        elif isinstance(node, ast.Import):
            found += [p for a in node.names for p in a.name.split(".") if _RULE_MODULE.fullmatch(p)]
    return found


def test_no_rule_module_imports_another():
    # What two rules share lives in a helper module of its own (``rules/_returns.py``, ``_signature.py``,
    # ``_non_tuple.py`` …), never in one of the rules.
    offenders = [f"rules/{path.name}: {module}" for path in sorted((PACKAGE / "rules").glob("bp*.py"))
                 for module in _rule_modules_imported(path.read_text("utf-8"))]
    assert offenders == []
    assert sorted(_rule_modules_imported("def f():\n    from .bp005_staticmethod import decorator_removal\n"
                                         "from . import bp021_too_few_grads\n"
                                         "import bprop_lsp.rules.bp020_non_tuple_return\n"
                                         "from ._returns import cell_subjects\n")) == [
        "bp005_staticmethod", "bp020_non_tuple_return", "bp021_too_few_grads"]


# What the engine still knows of particular rules: nothing (the rule memo's list of rules' Context memos went with
# the query layer, issue 21).
_KNOWN_RULE_KNOWLEDGE: set = set()
_RULE_CODE = re.compile(r"\bBP\d{3}\b")
# A rule's own memo on the Context: ``ctx.__dict__["_name"]``, ``ctx.__dict__.get("_name")`` …
_CONTEXT_MEMO = re.compile(r"""\.__dict__(?:\[|\.get\(|\.setdefault\(|\.pop\()\s*["'](\w+)["']""")


def _rule_knowledge(path: Path, memo_names: set[str]) -> set[tuple[str, str]]:
    """The rule codes and rules' Context memo names an engine module mentions. Codes in the settings' help texts and
    examples (strings of options.py and settings.py: how a user spells a selector) and in an "e.g." comment do not
    count: they are examples, not knowledge of a rule."""
    found = set()
    with tokenize.open(path) as f:
        tokens = list(tokenize.generate_tokens(f.readline))
    for token in tokens:
        if token.type == tokenize.STRING and path.name in ("options.py", "settings.py"):
            continue
        if token.type == tokenize.COMMENT and "e.g." in token.string:
            continue
        if token.type in (tokenize.STRING, tokenize.COMMENT, tokenize.NAME):
            found.update((path.name, code) for code in _RULE_CODE.findall(token.string))
            found.update((path.name, name) for name in memo_names
                         if re.search(rf"\b{re.escape(name)}\b", token.string))
    return found


def test_the_engine_names_no_rule():
    memo_names = {name for path in (PACKAGE / "rules").glob("*.py")
                  for name in _CONTEXT_MEMO.findall(path.read_text("utf-8"))}
    assert {"_cell_subjects", "_custom_subjects"} <= memo_names  # (the check reads the rules' memos)
    found = set()
    for path in sorted(_ENGINE.glob("*.py")):
        found |= _rule_knowledge(path, memo_names)
    assert sorted(found - _KNOWN_RULE_KNOWLEDGE) == []
    # (a leftover that went away is taken off the list)
    assert sorted(_KNOWN_RULE_KNOWLEDGE - found) == []
