"""One typed settings model per document, merged from every source.

Precedence (later wins, keys left unset or null never override): the engine defaults, ``[tool.bprop-lsp]``
in the nearest ``pyproject.toml`` above the file, ``initializationOptions`` (global, then the workspace
folder's), then what the client answers for ``workspace/configuration`` section ``bprop-lsp`` (global, then
the folder's) or pushes with ``workspace/didChangeConfiguration``.

``initializationOptions`` may be the VS Code shape ``{"settings": {...} | [{"workspace": uri, ...}],
"globalSettings": {...}}``, a plain settings object, or ``{"bprop-lsp": {...}}``. Keys an editor client keeps for
itself (``workspace``, ``interpreter``, ``path``, ``trace`` …) are dropped silently; any other unknown or
ill-typed key is reported once through ``window/logMessage`` and the default is kept.
"""
from __future__ import annotations

import os
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
    def __init__(self, warn: Callable[[str], None]):
        self._warn = warn
        self._warned: set[str] = set()
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
        from ..engine.settings import Settings

        path = uris.to_fs_path(uri)
        key = os.path.dirname(path) if path else ""
        pyproject = self._pyproject_for(key) if path else None
        cache_key = f"{key}\x00{pyproject[0] if pyproject else ''}\x00{pyproject[1] if pyproject else ''}"
        cached = self._cache.get(cache_key)
        if cached is not None:
            return cached
        settings = Settings()
        if pyproject is not None:
            table = pyproject[2]
            settings = self._merge(settings, table, str(pyproject[0]))
        folder = _folder_for(path, self.folders)
        settings = self._merge(settings, self.init_global, "initializationOptions")
        if folder is not None:
            settings = self._merge(settings, self.init_folders.get(folder.rstrip("/")), f"initializationOptions ({folder})")
        settings = self._merge(settings, self.config_global, f"workspace configuration '{SECTION}'")
        if folder is not None:
            settings = self._merge(settings, self.config_folders.get(folder.rstrip("/")),
                                   f"workspace configuration '{SECTION}' ({folder})")
        self._cache[cache_key] = settings
        return settings

    def _merge(self, base: "Settings", raw: Any, label: str) -> "Settings":
        from ..engine.settings import merge

        if raw is None:
            return base
        result = merge(base, raw, label)
        for warning in result.warnings:
            self._once(warning)
        return result.settings

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
