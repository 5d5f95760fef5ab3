"""One typed settings model per document, merged from every source.

Precedence (later wins, keys left unset or null never override): the engine defaults, ``[tool.bprop-lsp]``
in the nearest ``pyproject.toml`` above the file, ``initializationOptions`` (global, then the workspace
folder's), then what the client answers for ``workspace/configuration`` section ``bprop-lsp`` (global, then
the folder's) or pushes with ``workspace/didChangeConfiguration``.

``initializationOptions`` may be the VS Code shape ``{"settings": {...} | [{"workspace": uri, ...}],
"globalSettings": {...}}``, a plain settings object, or ``{"bprop-lsp": {...}}``. Keys an editor client keeps for
itself (``workspace``, ``interpreter``, ``path``, ``trace`` …) are dropped silently; any other unknown or
ill-typed key is reported once through ``window/logMessage`` and the default is kept.

Mistakes a user should see (an unknown key, a ``select``/``ignore`` entry that names no rule) are also shown once
per distinct problem with ``window/showMessage``, with the nearest valid names; the valid entries still apply (a
typo must not turn every check off). ``inlayHints`` (a bool or ``{"enable": bool}``, off by default) is the
server's own setting (``EditorSettings``); the rest is the engine's ``Settings``, shared with the CLI.
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from pygls import uris


if TYPE_CHECKING:
    from ..engine.settings import Settings

SECTION = "bprop-lsp"
CLIENT_ONLY_KEYS = frozenset({
    "workspace", "cwd", "interpreter", "path", "importStrategy", "showNotifications", "trace", "logLevel",
    "serverTrace", "enable", "args",
})


def _inlay_hint_keys() -> frozenset[str]:
    from ..engine.options import OPTIONS_BY_KEY

    return OPTIONS_BY_KEY["inlay-hints"].spellings()


INLAY_HINT_KEYS = _inlay_hint_keys()


@dataclass(frozen=True)
class EditorSettings:
    """What only the server reads (the engine's ``Settings`` is shared with the CLI)."""

    inlay_hints: bool = False


def _engine_keys() -> set[str]:
    from ..engine.options import ENGINE_OPTIONS

    return {o.attr for o in ENGINE_OPTIONS}


def _inlay_hints(value: Any) -> bool | None:
    """``true``/``false`` or ``{"enable": bool}``; None when ill-typed."""
    if isinstance(value, Mapping) and set(value) <= {"enable"}:
        value = value.get("enable", False)
    return value if isinstance(value, bool) else None


def _did_you_mean(options: list[str]) -> str:
    if not options:
        return ""
    return f" (did you mean {options[0] if len(options) == 1 else ', '.join(options[:-1]) + ' or ' + options[-1]}?)"


def check_selectors(key: str, value: Any) -> tuple[Any, str | None]:
    """(``value`` without the entries that name no rule, a message naming them) for ``select``/``ignore``.

    The value is returned unchanged when it is not a list of strings (the engine reports that); None when
    every entry was bad, so the setting falls back to the next source instead of selecting nothing.
    """
    entries = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
    if not isinstance(entries, (list, tuple)) or not all(isinstance(v, str) for v in entries):
        return value, None
    from ..checker import RULE_NAMES
    from ..engine.settings import invalid_selectors  # one validation for the CLI, pyproject and the server

    problems = invalid_selectors(entries, RULE_NAMES)
    if not problems:
        return value, None
    bad = [v for v, _ in problems]
    good = [v for v in entries if v not in bad]
    named = ", ".join(f"'{v}'{_did_you_mean(suggestions)}" for v, suggestions in problems)
    verb = "matches no rule" if len(bad) == 1 else "match no rule"
    if good:
        rest = f"ignored; {', '.join(good)} still appl{'ies' if len(good) == 1 else 'y'}"
    else:
        rest = "the setting is ignored"
    return (good or None), f"setting '{key}': {named} {verb} (`bprop-lsp rule` lists them); {rest}"


def _clean(raw: Any) -> Any:
    if isinstance(raw, Mapping):
        return {k: v for k, v in raw.items() if k not in CLIENT_ONLY_KEYS}
    return raw


def split_initialization_options(options: Any) -> tuple[Any, dict[str, Any]]:
    """(global settings, {workspace folder uri: settings}) from either initializationOptions shape."""
    if not isinstance(options, Mapping) or not options:
        return (options if options not in ({}, None) else None), {}
    if SECTION in options and len(options) == 1:
        return _clean(options[SECTION]), {}
    if "settings" in options or "globalSettings" in options:
        glob = _clean(options.get("globalSettings"))
        per_folder: dict[str, Any] = {}
        settings = options.get("settings")
        if isinstance(settings, list):
            for item in settings:
                if isinstance(item, Mapping) and isinstance(item.get("workspace"), str):
                    per_folder[item["workspace"].rstrip("/")] = _clean(item)
                elif isinstance(item, Mapping):
                    glob = {**(glob or {}), **_clean(item)}
        elif isinstance(settings, Mapping):
            glob = {**(glob or {}), **_clean(settings)}
        return glob, per_folder
    return _clean(options), {}


def _folder_for(path: str | None, folders: list[str]) -> str | None:
    if path is None:
        return None
    best = None
    for folder in folders:
        fpath = uris.to_fs_path(folder)
        if fpath and (path == fpath or path.startswith(fpath.rstrip(os.sep) + os.sep)):
            if best is None or len(folder) > len(best):
                best = folder
    return best


class SettingsStore:
    def __init__(self, warn: Callable[[str], None], show: Callable[[str], None] | None = None):
        self._warn = warn
        self._warned: set[str] = set()
        # window/showMessage: once per distinct problem for the whole session (never on every re-analysis).
        self._show = show
        self._shown: set[str] = set()
        # uri -> whether inlay hints were on when the client last asked (inlay_hint.refresh compares).
        self.inlay_hints_answered: dict[str, bool] = {}
        self.init_global: Any = None
        self.init_folders: dict[str, Any] = {}
        self.config_global: Any = None
        self.config_folders: dict[str, Any] = {}
        self.folders: list[str] = []
        # directory -> nearest pyproject path (or None); path -> (mtime_ns, table or None)
        self._nearest: dict[str, Path | None] = {}
        self._tables: dict[Path, tuple[int, Any]] = {}
        self._cache: dict[str, Any] = {}

    # ----------------------------------------------------------------- sources
    def set_initialization_options(self, options: Any) -> None:
        self.init_global, self.init_folders = split_initialization_options(options)
        self.invalidate(editor=True)

    def set_configuration(self, glob: Any, folders: dict[str, Any]) -> None:
        self.config_global = _clean(glob)
        self.config_folders = {k.rstrip("/"): _clean(v) for k, v in folders.items()}
        self.invalidate(editor=True)

    def invalidate(self, *, editor: bool = False, files: bool = False) -> None:
        self._cache.clear()
        if files:
            self._nearest.clear()
            self._tables.clear()
        if editor or files:
            self._warned.clear()  # a setting still wrong after a change is reported again

    # ----------------------------------------------------------------- reading
    def for_uri(self, uri: str) -> "Settings":
        """The settings of one document (its ``per-file-ignores`` applied)."""
        return self._resolve(uri)[0].for_file(uris.to_fs_path(uri))

    def for_folder(self, uri: str) -> "Settings":
        """The settings of a folder's files before ``per-file-ignores`` (the workspace scan's excludes)."""
        return self._resolve(uri)[0]

    def editor_for_uri(self, uri: str) -> EditorSettings:
        return self._resolve(uri)[1]

    def _resolve(self, uri: str) -> "tuple[Settings, EditorSettings]":
        from ..engine.settings import Settings

        path = uris.to_fs_path(uri)
        key = os.path.dirname(path) if path else ""
        pyproject = self._pyproject_for(key) if path else None
        cache_key = f"{key}\x00{pyproject[0] if pyproject else ''}\x00{pyproject[1] if pyproject else ''}"
        cached = self._cache.get(cache_key)
        if cached is not None:
            return cached
        merged = (Settings(), EditorSettings())
        if pyproject is not None:
            table = pyproject[2]
            merged = self._merge(merged, table, str(pyproject[0]), str(pyproject[0].parent))
        folder = _folder_for(path, self.folders)
        # Editor settings' glob patterns are anchored at the workspace folder (the file's own folder without one).
        root = (uris.to_fs_path(folder) if folder is not None else None) or key or None
        merged = self._merge(merged, self.init_global, "initializationOptions", root)
        if folder is not None:
            merged = self._merge(merged, self.init_folders.get(folder.rstrip("/")), f"initializationOptions ({folder})",
                                 root)
        merged = self._merge(merged, self.config_global, f"workspace configuration '{SECTION}'", root)
        if folder is not None:
            merged = self._merge(merged, self.config_folders.get(folder.rstrip("/")),
                                 f"workspace configuration '{SECTION}' ({folder})", root)
        self._cache[cache_key] = merged
        return merged

    def _merge(self, base: "tuple[Settings, EditorSettings]", raw: Any, label: str,
               root: str | None = None) -> "tuple[Settings, EditorSettings]":
        from ..checker import RULE_NAMES
        from ..engine.settings import merge

        if raw is None:
            return base
        settings, editor = base
        if isinstance(raw, Mapping):
            raw, editor = self._take_editor_keys(raw, editor, label)
        result = merge(settings, raw, label, rules=RULE_NAMES, root=root)
        for warning in result.warnings:
            self._once(warning)
        for error in result.errors:  # (per-file-ignores' selectors: select/ignore's were reported above)
            self._problem(error)
        return result.settings, editor

    def _take_editor_keys(self, raw: Mapping, editor: EditorSettings, label: str) -> tuple[dict, EditorSettings]:
        """The server's own keys read into ``editor``; unknown keys and selectors naming no rule reported (shown
        to the user) and removed, so the engine merges only what is valid."""
        known = _engine_keys()
        rest: dict = {}
        from ..engine.options import option

        for key, value in raw.items():
            opt = option(key)
            name = opt.attr if opt is not None else str(key).replace("-", "_")
            if key in INLAY_HINT_KEYS:
                if value is None:
                    continue
                enabled = _inlay_hints(value)
                if enabled is None:
                    self._problem(f"{label}: setting '{key}' must be true, false or {{\"enable\": true|false}}, "
                                  f"got {value!r}; kept {'on' if editor.inlay_hints else 'off'}")
                else:
                    editor = EditorSettings(inlay_hints=enabled)
            elif name not in known:
                options = difflib.get_close_matches(name, sorted(known) + ["inlayHints"], 1)
                self._problem(f"{label}: unknown setting '{key}'{_did_you_mean([repr(o) for o in options])}; ignored")
            elif opt is not None and opt.kind == "selectors" and value is not None:
                cleaned, message = check_selectors(str(key), value)
                if message is not None:
                    self._problem(f"{label}: {message}")
                if cleaned is not None:
                    rest[key] = cleaned
            else:
                rest[key] = value
        return rest, editor

    def _problem(self, message: str) -> None:
        """A settings mistake the user should see: logged (again after a settings change), shown once; the first
        time, showing it is what logs it (``show`` logs too): one log line per problem, not two."""
        if self._show is not None and message not in self._shown:
            self._shown.add(message)
            self._warned.add(message)
            self._show(f"bprop-lsp: {message}")
            return
        self._once(message)

    def _once(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self._warn(message)

    def _pyproject_for(self, directory: str) -> tuple[Path, int, Any] | None:
        from ..engine.settings import find_pyproject, read_pyproject

        if directory not in self._nearest:
            self._nearest[directory] = find_pyproject(Path(directory)) if directory else None
        path = self._nearest[directory]
        if path is None:
            return None
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            self._nearest.pop(directory, None)
            return None
        cached = self._tables.get(path)
        if cached is None or cached[0] != mtime:
            table, error = read_pyproject(path)
            if error:
                self._once(error)
            cached = (mtime, table)
            self._tables[path] = cached
        return path, cached[0], cached[1]

    def pyproject_paths(self) -> set[Path]:
        return set(self._tables)
