"""The engine's settings and how they are read from ``[tool.bprop-lsp]`` in ``pyproject.toml``.

One typed model serves the CLI and the server. Unknown keys and ill-typed values never
raise: they are reported as warnings and the default is kept.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

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


def _codes(value: Any, key: str, warnings: list[str]) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        warnings.append(f"setting '{key}' must be a list of rule codes such as [\"BP001\"]; ignored")
        return None
    bad = [v for v in value if not CODE_PATTERN.match(v.upper())]
    if bad:
        warnings.append(f"setting '{key}': unknown rule code(s) {', '.join(map(repr, bad))}; ignored them")
    return tuple(v.upper() for v in value if CODE_PATTERN.match(v.upper()))


def merge(base: Settings, raw: Mapping[str, Any] | None, source: str) -> SettingsResult:
    """Overlay ``raw`` (a TOML table or an LSP settings object) on ``base``."""
    warnings: list[str] = []
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
            warnings.append(f"{source}: unknown setting '{key}'; ignored")
            continue
        if value is None:
            continue
        if name == "mode":
            if isinstance(value, str) and value.lower() in MODES:
                changes["mode"] = value.lower()
            else:
                warnings.append(f"{source}: setting 'mode' must be one of {', '.join(MODES)}, got {value!r}; kept {base.mode!r}")
        elif name in ("select", "ignore"):
            codes = _codes(value, key, warnings)
            if codes is not None:
                changes[name] = codes
        elif name == "exclude":
            if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                changes["exclude"] = tuple(value)
            else:
                warnings.append(f"{source}: setting 'exclude' must be a list of glob patterns; ignored")
    return SettingsResult(replace(base, **changes), [w if w.startswith(source) else f"{source}: {w}" for w in warnings])


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


def settings_from_pyproject(path: Path, base: Settings = Settings()) -> SettingsResult:
    table, error = read_pyproject(path)
    result = merge(base, table, str(path))
    if error:
        result.warnings.insert(0, error)
    return result
