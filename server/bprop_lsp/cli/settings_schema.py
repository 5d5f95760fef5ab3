"""The JSON Schema of ``[tool.bprop-lsp]`` in ``pyproject.toml`` (shipped in the package and in docs/).

Generated from the settings loader's keys and the rule registry, so it lists exactly what the loader accepts
(tests/test_packaging.py checks both). Shaped for SchemaStore's pyproject.toml convention: the schema of the
``tool.bprop-lsp`` table itself (draft-07, no ``$id`` until SchemaStore hosts it as ``partial-bprop-lsp.json``,
referenced from pyproject.json's ``tool`` properties).
"""
from __future__ import annotations

import json
from typing import Any

from ..engine.settings import MODES
from ..rules import ALL_RULES

def _codes(what: str) -> dict[str, Any]:
    code = {
        "anyOf": [
            {"enum": [r.code for r in ALL_RULES] + ["ALL"], "description": "a rule code, or ALL"},
            {"type": "string", "pattern": "^[Bb][Pp][0-9]{0,2}$",
             "description": "a code prefix: BP0 is BP001-BP099, BP is every rule"},
        ],
    }
    return {
        "description": f"Rule codes or prefixes to {what}; a comma-separated string is read as a list.",
        "anyOf": [
            {"type": "array", "items": code, "uniqueItems": True},
            {"type": "string", "pattern": "^\\s*([Bb][Pp][0-9]{0,3}|ALL)?(\\s*,\\s*([Bb][Pp][0-9]{0,3}|ALL))*\\s*,?\\s*$"},
        ],
    }


# One entry per key the loader accepts (engine/settings.py); a new key there fails the test until it is here.
PROPERTIES: dict[str, dict[str, Any]] = {
    "mode": {
        "description": "MindSpore execution mode the checks assume: `auto` infers it per file "
                       "(`set_context(mode=...)`, `@jit`); `graph`/`pynative` make that mode's findings errors.",
        "type": "string",
        "enum": list(MODES),
        "default": "auto",
    },
    "select": {**_codes("enable (default: every rule)"), "examples": [["BP0"], ["BP001", "BP020"]]},
    "ignore": {**_codes("disable"), "default": [], "examples": [["BP014"]]},
    "exclude": {
        "description": "Extra glob patterns (matched against paths relative to the checked folder) that "
                       "`bprop-lsp check` skips when walking directories.",
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "examples": [["legacy/*"]],
    },
}


def settings_schema() -> dict[str, Any]:
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "bprop-lsp",
        "description": "Configuration of bprop-lsp (MindSpore custom-bprop checker): the [tool.bprop-lsp] table "
                       "of pyproject.toml. Command-line flags and editor settings override it.",
        "type": "object",
        "properties": PROPERTIES,
        "additionalProperties": False,
    }


def settings_schema_json() -> str:
    return json.dumps(settings_schema(), indent=2, ensure_ascii=False) + "\n"
