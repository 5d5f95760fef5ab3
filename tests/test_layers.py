"""Layers point down: the server and the CLI use the engine's public API only (the package's ``__all__`` and its
value modules ``model``, ``settings`` and ``text``), nothing private; the engine imports no rule, server or CLI
module at import time, and the server imports nothing from the CLI."""
import ast
from pathlib import Path

import bprop_lsp.engine as engine

PACKAGE = Path(engine.__file__).resolve().parents[1]
PUBLIC_MODULES = {"model", "settings", "text"}


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


def test_the_engine_imports_no_rule_server_or_cli_at_module_level():
    offenders = []
    for path in sorted((PACKAGE / "engine").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only: the rule registry is imported when rules run
            if isinstance(node, ast.ImportFrom) and node.level == 2 and (node.module or "").split(".")[0] in \
                    ("rules", "lsp", "cli"):
                offenders.append(f"engine/{path.name}: {node.module}")
    assert offenders == []
