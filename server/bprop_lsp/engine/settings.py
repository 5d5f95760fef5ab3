"""The engine's settings and how they are read from ``[tool.bprop-lsp]`` in ``pyproject.toml``.

One typed model serves the CLI and the server. Unknown keys and ill-typed values never
raise: they are reported as warnings and the default is kept.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

MODES = ("auto", "graph", "pynative")
CODE_PATTERN = re.compile(r"^BP\d{0,3}$|^ALL$")
TOOL_SECTION = "bprop-lsp"


@dataclass(frozen=True)
class Settings:
    # "auto" infers the execution mode from the file; "graph"/"pynative" force it.
    mode: str = "auto"
    # Rule codes or prefixes to enable (None = all) and to disable.
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    # Extra glob patterns the CLI skips when walking directories.
    exclude: tuple[str, ...] = ()

    def enabled(self, code: str) -> bool:
        def hits(patterns) -> bool:
            return any(p == "ALL" or code.startswith(p) for p in patterns)

        if self.select is not None and not hits(self.select):
            return False
        return not hits(self.ignore)


@dataclass
class SettingsResult:
    settings: Settings
    # Problems that change nothing important (an unknown key): reported, the rest applies.
    warnings: list[str] = field(default_factory=list)
    # Values that would silently change what is checked (an unknown rule code in select/ignore): the CLI exits 2
    # with them, the server shows them to the user; the valid parts still apply.
    errors: list[str] = field(default_factory=list)


# The keys a settings table may have (TOML kebab-case and snake_case are the same here).
_KEYS = {"mode", "select", "ignore", "exclude"}
# Keys only the language server reads (lsp/settings.py); accepted silently here so a pyproject.toml that sets
# them is not an error for the CLI.
EDITOR_KEYS = frozenset({"inlay_hints", "inlayHints"})


# Characters people type for one another in a rule code ("BP0O1", "BPOO1", "BP0l1").
_CONFUSABLE = str.maketrans({"O": "0", "Q": "0", "D": "0", "I": "1", "L": "1", "|": "1", "Z": "2", "S": "5",
                             "B": "8", "-": "", "_": "", " ": ""})


def invalid_selectors(values: Iterable[str], rules: Mapping[str, str]) -> list[tuple[str, list[str]]]:
    """The values of a ``select``/``ignore`` list that select no rule, each with the nearest valid codes.

    A selector is ``ALL`` or a code or code prefix (any case) that at least one rule code starts with.
    Suggestions come from ``difflib`` over the codes and the rule names (a name suggests its code), with
    look-alike characters (``O`` for ``0``) tried first. ``rules`` maps code to name (``BP001`` ->
    ``bprop-missing-params``) for every rule there is (the engine knows none of its own).
    """
    codes = list(rules)
    bad: list[tuple[str, list[str]]] = []
    for value in values:
        selector = value.strip().upper() if isinstance(value, str) else ""
        if selector == "ALL" or (selector and any(code.startswith(selector) for code in codes)):
            continue
        bad.append((value, _suggest(value if isinstance(value, str) else "", rules)))
    return bad


def _suggest(value: str, rules: Mapping[str, str]) -> list[str]:
    upper = value.strip().upper()
    if not upper:
        return []
    lookalike = "BP" + upper[2:].translate(_CONFUSABLE) if upper.startswith("BP") else ""
    if lookalike in rules:
        return [lookalike]
    by_name = {name: code for code, name in rules.items()}
    lowered = value.strip().lower().replace("_", "-")
    if lowered in by_name:
        return [by_name[lowered]]
    import difflib  # (only for a selector that matches nothing)

    found = difflib.get_close_matches(upper, list(rules), n=3, cutoff=0.6)
    found += [by_name[n] for n in difflib.get_close_matches(lowered, list(by_name), n=3, cutoff=0.6)]
    return list(dict.fromkeys(found))[:3]


def selector_message(value: Any, suggestions: list[str], where: str) -> str:
    """``unknown rule selector `BP0O1` in --select; did you mean BP001?``"""
    hint = (f"did you mean {', '.join(suggestions[:-1]) + ' or ' if len(suggestions) > 1 else ''}{suggestions[-1]}?"
            if suggestions else "`bprop-lsp rule` lists the rules")
    return f"unknown rule selector `{value}` in {where}; {hint}"


def _codes(value: Any, key: str, warnings: list[str], errors: list[str],
           rules: Mapping[str, str]) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        warnings.append(f"setting '{key}' must be a list of rule codes such as [\"BP001\"]; ignored")
        return None
    bad = invalid_selectors(value, rules)
    for selector, suggestions in bad:
        errors.append(selector_message(selector, suggestions, f"'{key}'"))
    bad_values = {selector for selector, _ in bad}
    kept = tuple(v.strip().upper() for v in value if v not in bad_values)
    if value and not kept:
        return None  # every entry was wrong: keep what was in force rather than select nothing
    return kept


def merge(base: Settings, raw: Mapping[str, Any] | None, source: str, *, rules: Mapping[str, str]) -> SettingsResult:
    """Overlay ``raw`` (a TOML table or an LSP settings object) on ``base``; ``rules`` (code -> name, every rule
    there is) is what ``select``/``ignore`` are checked against (``invalid_selectors``).

    Unknown keys and ill-typed values are ``warnings`` (the rest applies). Rule selectors that match no rule are
    ``errors``: they are dropped (a list left empty by that keeps the value in force, so a typo never turns every
    rule off) and the CLI exits 2 with them.
    """
    warnings: list[str] = []
    errors: list[str] = []
    if raw is None:
        return SettingsResult(base, warnings)
    if not isinstance(raw, Mapping):
        return SettingsResult(base, [f"{source}: settings must be a table/object, got {type(raw).__name__}; ignored"])
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        name = str(key).replace("-", "_")
        if name in EDITOR_KEYS:
            continue
        if name not in _KEYS:
            import difflib

            near = difflib.get_close_matches(name, sorted(_KEYS), n=1, cutoff=0.6)
            hint = f" (did you mean '{near[0]}'?)" if near else f" (known: {', '.join(sorted(_KEYS))})"
            warnings.append(f"{source}: unknown setting '{key}'{hint}; ignored")
            continue
        if value is None:
            continue
        if name == "mode":
            if isinstance(value, str) and value.lower() in MODES:
                changes["mode"] = value.lower()
            else:
                warnings.append(f"{source}: setting 'mode' must be one of {', '.join(MODES)}, got {value!r}; kept {base.mode!r}")
        elif name in ("select", "ignore"):
            codes = _codes(value, key, warnings, errors, rules)
            if codes is not None:
                changes[name] = codes
        elif name == "exclude":
            if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                changes["exclude"] = tuple(value)
            else:
                warnings.append(f"{source}: setting 'exclude' must be a list of glob patterns; ignored")
    return SettingsResult(replace(base, **changes), _prefixed(warnings, source), _prefixed(errors, source))


def _prefixed(messages: list[str], source: str) -> list[str]:
    return [m if m.startswith(source) else f"{source}: {m}" for m in messages]


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` (a file or a folder)."""
    here = start if start.is_dir() else start.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_pyproject(path: Path) -> tuple[Mapping[str, Any] | None, str | None]:
    """The ``[tool.bprop-lsp]`` table of ``path`` (None if absent) and an error message if unreadable."""
    # Imported here: a run in a tree without pyproject.toml never needs a TOML parser.
    try:  # Python 3.11+
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path}: cannot read: {exc}"
    except tomllib.TOMLDecodeError as exc:
        return None, f"{path}: invalid TOML: {exc}"
    tool = data.get("tool")
    if not isinstance(tool, dict):
        return None, None
    table = tool.get(TOOL_SECTION)
    if table is None:
        return None, None
    if not isinstance(table, dict):
        return None, f"{path}: [tool.{TOOL_SECTION}] must be a table"
    return table, None


def settings_from_pyproject(path: Path, base: Settings = Settings(), *, rules: Mapping[str, str]) -> SettingsResult:
    """``[tool.bprop-lsp]`` of ``path`` over ``base`` (``merge``; ``rules``: code -> name of every rule)."""
    table, error = read_pyproject(path)
    result = merge(base, table, str(path), rules=rules)
    if error:
        result.warnings.insert(0, error)
    return result
