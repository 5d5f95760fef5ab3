"""The one definition of bprop-lsp's settings: plain data, no CLI, LSP or JSON Schema types.

Everything else is derived from ``OPTIONS`` and a test fails when one drifts:

- the loader (``engine/settings.py``: which keys ``[tool.bprop-lsp]`` and an editor may set, how each is read);
- the ``check`` flags (``cli/main.py`` adds one per option with a ``flag``);
- the editor keys the server reads (``lsp/settings.py``) and VS Code's ``contributes.configuration``
  (``vscode-client/package.json``, compared by tests/test_settings_definition.py);
- the JSON Schema of ``[tool.bprop-lsp]`` and docs/settings.md (``python -m bprop_lsp.cli.rule_docs``).

Glob patterns (``exclude``, ``extend-exclude``, ``per-file-ignores``) mean what they mean in ruff: a pattern
is matched against a file's name and, anchored at the folder of the ``pyproject.toml`` that sets it (the
current folder for a command-line flag, the workspace folder for an editor setting), against its whole path;
``*`` and ``**`` match any characters including ``/``, ``?`` one character, ``[abc]`` a set, ``{a,b}`` either
alternative; a ``per-file-ignores`` pattern starting with ``!`` applies to the files it does *not* match.
"""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from typing import Any

MODES = ("auto", "graph", "pynative")
MODE_DESCRIPTIONS = {
    "auto": "Infer the execution mode per file (context.set_context / @jit).",
    "graph": "Check as if every Cell runs in GRAPH_MODE.",
    "pynative": "Check as if every Cell runs in PYNATIVE_MODE.",
}

# Kinds of value (what the loader accepts, the schema allows and the CLI parses):
#   mode             one of MODES, any case
#   selectors        a list of rule selectors (ALL, a code or a code prefix, any case), or one comma-separated string
#   globs            a list of glob patterns
#   per-file-ignores a table {glob: [selectors]} (the CLI: GLOB:CODES, repeatable)
#   bool             true/false
#   inlay-hints      true/false or {"enable": true/false} (the server's own; no CLI counterpart)
#   paths            a list of folders, relative to the pyproject.toml that sets them (the workspace's ``src``)
KINDS = ("mode", "selectors", "globs", "per-file-ignores", "bool", "inlay-hints", "paths")


@dataclass(frozen=True)
class Option:
    key: str  # in pyproject.toml (kebab-case; snake_case and the editor's camelCase name the same key)
    kind: str
    default: Any  # as JSON (None: unset, a lower layer or the built-in behaviour decides)
    description: str  # Markdown, for the schema, the docs and VS Code
    flag: str | None = None  # the ``check`` flag, or None
    flag_help: str = ""
    editor: str | None = None  # the VS Code setting under ``bprop-lsp.``, or None (not offered there)
    engine: bool = True  # False: only the language server reads it (the CLI accepts it silently)
    # The VS Code setting's default when it differs from ``default`` (inlay hints are on in VS Code).
    editor_default: Any = None
    editor_description: str = ""  # VS Code's wording when it needs more than ``description``
    examples: tuple = ()

    @property
    def attr(self) -> str:
        """The ``Settings`` field (snake_case)."""
        return self.key.replace("-", "_")

    @property
    def camel(self) -> str:
        head, *rest = self.key.split("-")
        return head + "".join(p.title() for p in rest)

    def spellings(self) -> frozenset[str]:
        return frozenset({self.key, self.attr, self.camel})


OPTIONS: tuple[Option, ...] = (
    Option("mode", "mode", "auto",
           "MindSpore execution mode the checks assume: `auto` infers it per file (`set_context(mode=...)`, `@jit`); "
           "`graph`/`pynative` make that mode's findings errors (any case: `GRAPH` is `graph`).",
           flag="--mode", flag_help="execution mode (default: inferred per file)", editor="mode"),
    Option("select", "selectors", None,
           "Rule codes or prefixes to enable (`BP0` is BP001-BP099, `ALL` every rule; any case). Unset: every rule "
           "(in an editor: the project's `[tool.bprop-lsp]` value first). An empty list enables no rule, as in ruff "
           "(a warning says so).",
           flag="--select", flag_help="comma-separated rule codes or prefixes to enable (replaces `select`)",
           editor="select", examples=(["BP0"], ["BP001", "BP020"])),
    Option("extend-select", "selectors", [],
           "Rule codes or prefixes to enable in addition to `select`.",
           flag="--extend-select", flag_help="comma-separated rule codes or prefixes to enable on top of `select`",
           editor="extendSelect", examples=(["BP050"],)),
    Option("ignore", "selectors", [],
           "Rule codes or prefixes to disable (it wins over `select`).",
           flag="--ignore", flag_help="comma-separated rule codes or prefixes to disable",
           editor="ignore", examples=(["BP014"],)),
    Option("exclude", "globs", [],
           "Glob patterns of files and folders `bprop-lsp check` (and the server's workspace scan) skips when "
           "walking directories, on top of the built-in ones (`.git`, `.venv`, `build`, …). A file named on "
           "the command line is still checked unless `force-exclude` is on.",
           flag="--exclude", flag_help="glob patterns to skip (comma-separated or repeated; replaces `exclude`)",
           examples=(["legacy/*"],)),
    Option("extend-exclude", "globs", [],
           "Glob patterns to skip in addition to `exclude`.",
           flag="--extend-exclude", flag_help="glob patterns to skip on top of `exclude`",
           examples=(["generated/**"],)),
    Option("per-file-ignores", "per-file-ignores", {},
           "Rule codes or prefixes to disable in the files a glob pattern matches, e.g. "
           "`{\"tests/**\" = [\"BP050\"]}`; a pattern starting with `!` applies to the files it does not match.",
           flag="--per-file-ignores", flag_help="GLOB:CODES, rules to disable in matching files (repeatable; replaces "
                                                "`per-file-ignores`)",
           examples=({"tests/**": ["BP050"], "legacy_*.py": ["BP0"]},)),
    Option("force-exclude", "bool", False,
           "Apply `exclude`/`extend-exclude` to files named on the command line as well (what a pre-commit hook "
           "needs: pre-commit names every staged file).",
           flag="--force-exclude", flag_help="apply the excludes to files named on the command line too"),
    Option("src", "paths", None,
           "The folders the project's modules are named from, relative to this `pyproject.toml` (as ruff's `src`): "
           "a base class imported from another module of the project (`from .base import ScaleBase`, "
           "`from mylib.layers import Base`) is read there. Unset: the project folder and, when it has one, its "
           "`src/` folder. Read from the project's own `pyproject.toml` (the folder with `pyproject.toml` or "
           "`.git` above a file); modules outside these folders (third-party) stay unknown: no finding.",
           engine=False, examples=(["src", "lib"],)),
    Option("inlay-hints", "inlay-hints", False,
           "Editors: show inlay hints on a `bprop`'s parameters (what MindSpore passes to each: the forward input, "
           "`out`, `dout`). `true`/`false` or `{\"enable\": true}`; the language server's own setting (the CLI "
           "ignores it).",
           editor="inlayHints.enable", engine=False, editor_default=True,
           editor_description="Show inlay hints on a `bprop`'s parameters: what MindSpore passes to each (the forward "
                              "input, `out`, `dout`). Sent to the server as `inlayHints: {enable}`; VS Code's "
                              "`editor.inlayHints.enabled` must be on too."),
)

OPTIONS_BY_KEY: dict[str, Option] = {spelling: o for o in OPTIONS for spelling in o.spellings()}
ENGINE_OPTIONS: tuple[Option, ...] = tuple(o for o in OPTIONS if o.engine)


def option(key: str) -> Option | None:
    """The option a key names in any spelling (``per-file-ignores``, ``per_file_ignores``, ``perFileIgnores``)."""
    return OPTIONS_BY_KEY.get(str(key))


# ------------------------------------------------------------------------------------------------ glob patterns

def _expand_braces(pattern: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", pattern)
    if m is None:
        return [pattern]
    head, tail = pattern[:m.start()], pattern[m.end():]
    return [x for alt in m.group(1).split(",") for x in _expand_braces(head + alt + tail)]


@dataclass(frozen=True)
class FilePattern:
    """A glob pattern as written and, anchored at ``root``, as an absolute path pattern (ruff's semantics)."""

    pattern: str
    root: str

    @property
    def negated(self) -> bool:
        return self.pattern.startswith("!")

    def _regexes(self) -> list[re.Pattern]:
        found = _COMPILED.get(self)
        if found is None:
            body = self.pattern[1:] if self.negated else self.pattern
            body = body.replace("\\", "/")
            anchored = body if os.path.isabs(body) else _posix(os.path.join(self.root, body))
            found = _COMPILED[self] = [re.compile(fnmatch.translate(p)) for p in
                                       dict.fromkeys(_expand_braces(body) + _expand_braces(_normal(anchored)))]
        return found

    def matches(self, path: str) -> bool:
        """Whether the pattern (negation aside) matches ``path``: its name or its absolute path."""
        absolute = _posix(os.path.abspath(path))
        name = absolute.rsplit("/", 1)[-1]
        return any(r.match(name) or r.match(absolute) for r in self._regexes())

    def matches_or_parent(self, path: str) -> bool:
        """Whether the pattern matches ``path`` or a folder it is in (how an exclude applies to a file)."""
        here = os.path.abspath(path)
        while True:
            if self.matches(here):
                return True
            parent = os.path.dirname(here)
            if parent == here:
                return False
            here = parent


_COMPILED: dict[FilePattern, list[re.Pattern]] = {}


def _posix(path: str) -> str:
    return path.replace(os.sep, "/")


def _normal(path: str) -> str:
    # Collapse "./" and "x/../" without touching glob characters.
    return _posix(os.path.normpath(path)) if "*" not in path.split("/")[0] else path
