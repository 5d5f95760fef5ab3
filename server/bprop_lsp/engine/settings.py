"""The engine's settings and how they are read from ``[tool.bprop-lsp]`` in ``pyproject.toml``.

One typed model serves the CLI and the server. Unknown keys and ill-typed values never
raise: they are reported as warnings and the default is kept.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from .options import ENGINE_OPTIONS, MODES, OPTIONS, FilePattern, option

CODE_PATTERN = re.compile(r"^BP\d{0,3}$|^ALL$")
TOOL_SECTION = "bprop-lsp"


@dataclass(frozen=True)
class Settings:
    """The resolved settings (fields: ``engine/options.py``'s ``OPTIONS``, the one definition)."""

    # "auto" infers the execution mode from the file; "graph"/"pynative" force it.
    mode: str = "auto"
    # Rule codes or prefixes to enable (None = all), to enable on top, and to disable.
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    # Glob patterns the walk skips (FilePattern: anchored where they were set).
    exclude: tuple[FilePattern, ...] = ()
    extend_exclude: tuple[FilePattern, ...] = ()
    # (pattern, selectors): rules disabled in the files a pattern matches (``for_file`` applies them).
    per_file_ignores: tuple[tuple[FilePattern, tuple[str, ...]], ...] = ()
    force_exclude: bool = False

    def enabled(self, code: str) -> bool:
        def hits(patterns) -> bool:
            return any(p == "ALL" or code.startswith(p) for p in patterns)

        if self.select is not None and not hits(self.select) and not hits(self.extend_select):
            return False
        return not hits(self.ignore)

    @property
    def excludes(self) -> tuple[FilePattern, ...]:
        return self.exclude + self.extend_exclude

    def is_excluded(self, path: str, *, parents: bool = True) -> bool:
        """Whether ``exclude``/``extend-exclude`` match ``path`` (or, with ``parents``, a folder it is in)."""
        return any(p.matches_or_parent(path) if parents else p.matches(path) for p in self.excludes)

    def file_ignores(self, path: str) -> tuple[str, ...]:
        """The selectors ``per-file-ignores`` disables for ``path``."""
        found: list[str] = []
        for pattern, codes in self.per_file_ignores:
            if pattern.matches(path) != pattern.negated:
                found.extend(codes)
        return tuple(dict.fromkeys(found))

    def for_file(self, path: str | None) -> "Settings":
        """These settings for one file: its ``per-file-ignores`` folded into ``ignore`` (the engine knows no paths)."""
        if not self.per_file_ignores:
            return self
        extra = self.file_ignores(path) if path else ()
        return replace(self, ignore=tuple(dict.fromkeys(self.ignore + extra)), per_file_ignores=())


@dataclass
class SettingsResult:
    settings: Settings
    # Problems that change nothing important (an unknown key): reported, the rest applies.
    warnings: list[str] = field(default_factory=list)
    # Values that would silently change what is checked (an unknown rule code in select/ignore): the CLI exits 2
    # with them, the server shows them to the user; the valid parts still apply.
    errors: list[str] = field(default_factory=list)
    # attribute -> the source that set it (``--show-settings``).
    origins: dict[str, str] = field(default_factory=dict)


# The keys a settings table may have (any spelling: ``per-file-ignores``, ``per_file_ignores``, ``perFileIgnores``).
_KEYS = {o.attr for o in ENGINE_OPTIONS}
# Keys only the language server reads (lsp/settings.py); accepted silently here so a pyproject.toml that sets
# them is not an error for the CLI.
EDITOR_KEYS = frozenset(s for o in OPTIONS if not o.engine for s in o.spellings())


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


def suggest(value: str, rules: Mapping[str, str]) -> list[str]:
    """The rule codes nearest to ``value`` (a code, a look-alike or a rule's name), at most three."""
    return _suggest(value, rules)


def selector_message(value: Any, suggestions: list[str], where: str) -> str:
    """``unknown rule selector `BP0O1` in --select; did you mean BP001?``"""
    hint = (f"did you mean {', '.join(suggestions[:-1]) + ' or ' if len(suggestions) > 1 else ''}{suggestions[-1]}?"
            if suggestions else "`bprop-lsp rule` lists the rules")
    return f"unknown rule selector `{value}` in {where}; {hint}"


def _codes(value: Any, key: str, warnings: list[str], errors: list[str],
           rules: Mapping[str, str]) -> tuple[str, ...] | None:
    """The selectors of a ``select``-like value, or None (keep what was in force).

    A list may be empty (it selects nothing); a string is split at commas and must name something: ``""`` (what
    ``--select ''`` gives) is an error, as in ruff, not "every rule" nor "no rule"."""
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
        if not items:
            errors.append(f"setting '{key}' is an empty string, which names no rule (a list, [], selects none)")
            return None
        value = items
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        warnings.append(f"setting '{key}' must be a list of rule codes such as [\"BP001\"]; ignored")
        return None
    bad = invalid_selectors(value, rules)
    for selector, suggestions in bad:
        errors.append(selector_message(selector, suggestions, f"'{key}'"))
    bad_values = {selector for selector, _ in bad}
    kept = tuple(dict.fromkeys(v.strip().upper() for v in value if v not in bad_values))
    if value and not kept:
        return None  # every entry was wrong: keep what was in force rather than select nothing
    return kept


def _globs(value: Any, key: str, root: str, warnings: list[str]) -> tuple[FilePattern, ...] | None:
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(FilePattern(v, root) for v in value if v.strip())
    warnings.append(f"setting '{key}' must be a list of glob patterns such as [\"legacy/*\"]; ignored")
    return None


def _per_file_ignores(value: Any, key: str, root: str, warnings: list[str], errors: list[str],
                      rules: Mapping[str, str]) -> tuple | None:
    if not isinstance(value, Mapping):
        warnings.append(f"setting '{key}' must be a table of glob pattern = [rule codes], such as "
                        f"{{\"tests/**\" = [\"BP050\"]}}; ignored")
        return None
    found = []
    for pattern, codes in value.items():
        selected = _codes(codes, f"{key}.{pattern}", warnings, errors, rules)
        if selected is not None and str(pattern).strip():
            found.append((FilePattern(str(pattern), root), selected))
    return tuple(found)


def merge(base: Settings, raw: Mapping[str, Any] | None, source: str, *, rules: Mapping[str, str],
          root: str | None = None, origins: Mapping[str, str] | None = None) -> SettingsResult:
    """Overlay ``raw`` (a TOML table or an LSP settings object) on ``base``; ``rules`` (code -> name, every rule
    there is) is what ``select``/``ignore`` are checked against (``invalid_selectors``); ``root`` is the folder
    glob patterns are anchored at (default: the current folder); ``origins`` (attribute -> source) of ``base``,
    carried on into the result's.

    Unknown keys and ill-typed values are ``warnings`` (the rest applies). Rule selectors that match no rule are
    ``errors``: they are dropped (a list left empty by that keeps the value in force, so a typo never turns every
    rule off) and the CLI exits 2 with them. ``select`` resets the ``extend-select`` of the layers below (as in
    ruff); ``extend-select`` and ``extend-exclude`` add to them; every other key replaces.
    """
    warnings: list[str] = []
    errors: list[str] = []
    seen_origins = dict(origins or {})
    if raw is None:
        return SettingsResult(base, warnings, errors, seen_origins)
    if not isinstance(raw, Mapping):
        return SettingsResult(base, [f"{source}: settings must be a table/object, got {type(raw).__name__}; ignored"],
                              errors, seen_origins)
    root = os.path.abspath(root or ".")
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        opt = option(key)
        if opt is not None and opt.kind == "paths":
            # (the workspace's own: read by ``engine.roots``; checked here so that a mistake is said once)
            if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                warnings.append(f"setting '{key}' must be a list of folders, got {value!r}; ignored")
            continue
        if opt is not None and not opt.engine:
            # (the server's own: read there; checked here so that the CLI and the schema agree on it)
            if value is not None and not (isinstance(value, bool) or (
                    isinstance(value, Mapping) and set(value) <= {"enable"} and isinstance(value.get("enable", False), bool))):
                warnings.append(f"setting '{key}' must be true, false or {{\"enable\": true|false}}, got {value!r}; "
                                f"ignored")
            continue
        if opt is None:
            import difflib

            known = sorted(o.key for o in OPTIONS)
            near = difflib.get_close_matches(str(key).replace("_", "-"), known, n=1, cutoff=0.6)
            hint = f" (did you mean '{near[0]}'?)" if near else f" (known: {', '.join(known)})"
            warnings.append(f"{source}: unknown setting '{key}'{hint}; ignored")
            continue
        if value is None:
            continue
        name, kind = opt.attr, opt.kind
        if kind == "mode":
            if isinstance(value, str) and value.strip().lower() in MODES:
                changes["mode"] = value.strip().lower()
            else:
                warnings.append(f"setting 'mode' must be one of {', '.join(MODES)}, got {value!r}; kept {base.mode!r}")
        elif kind == "selectors":
            codes = _codes(value, str(key), warnings, errors, rules)
            if codes is not None:
                if name == "extend_select":
                    changes[name] = tuple(dict.fromkeys(changes.get(name, base.extend_select) + codes))
                else:
                    changes[name] = codes
                    if name == "select":
                        changes.setdefault("extend_select", ())
        elif kind == "globs":
            globs = _globs(value, str(key), root, warnings)
            if globs is not None:
                changes[name] = base.extend_exclude + globs if name == "extend_exclude" else globs
        elif kind == "per-file-ignores":
            found = _per_file_ignores(value, str(key), root, warnings, errors, rules)
            if found is not None:
                changes[name] = found
        elif kind == "bool":
            if isinstance(value, bool):
                changes[name] = value
            else:
                warnings.append(f"setting '{key}' must be true or false, got {value!r}; ignored")
        if name in changes:
            seen_origins[name] = source
    if changes.get("select") == () and not changes.get("extend_select"):
        warnings.append("setting 'select' is empty: no rule is checked (remove it to check every rule)")
    return SettingsResult(replace(base, **changes), _prefixed(warnings, source), _prefixed(errors, source),
                          seen_origins)


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
    result = merge(base, table, str(path), rules=rules, root=str(path.parent))
    if error:
        result.warnings.insert(0, error)
    return result
