"""Settings traffic: ``workspace/configuration`` pulls, ``workspace/didChangeConfiguration``,
``workspace/didChangeWatchedFiles`` for ``pyproject.toml``; a change re-analyses the open documents and asks
pull clients to refresh."""
from __future__ import annotations

import asyncio
import logging
import uuid

from lsprotocol import types

from .settings import SECTION

log = logging.getLogger(__name__)


async def _request(ls, coro, timeout: float = 10):
    try:
        return await asyncio.wait_for(coro, timeout)
    except Exception as exc:  # noqa: BLE001 - an editor that cannot answer leaves the other sources in force
        log.info("client request failed: %s", exc)
        return None


async def pull_configuration(ls) -> None:
    if not ls.caps.configuration:
        return
    folders = list(ls.settings.folders)
    items = [types.ConfigurationItem(section=SECTION)] + [
        types.ConfigurationItem(scope_uri=f, section=SECTION) for f in folders]
    answer = await _request(ls, ls.workspace_configuration_async(types.ConfigurationParams(items=items)))
    if not isinstance(answer, (list, tuple)) or len(answer) != len(items):
        return
    glob = answer[0]
    per_folder = {}
    for folder, value in zip(folders, answer[1:]):
        if value is not None and value != glob:
            per_folder[folder] = value
    ls.settings.set_configuration(glob, per_folder)


async def on_initialized(ls) -> None:
    registrations = []
    if ls.caps.watch_files_dynamic:
        registrations.append(types.Registration(
            id=str(uuid.uuid4()), method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                          # (modules another document's findings may depend on: projects.py)
                          types.FileSystemWatcher(glob_pattern="**/*.py")])))
    if ls.caps.did_change_configuration_dynamic:
        registrations.append(types.Registration(
            id=str(uuid.uuid4()), method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
            register_options=types.DidChangeConfigurationRegistrationOptions(section=SECTION)))
    if registrations:
        await _request(ls, ls.client_register_capability_async(types.RegistrationParams(registrations=registrations)))
    await pull_configuration(ls)
    settings_changed(ls)


def settings_changed(ls) -> None:
    from .inlay_hint import refresh

    ls.scheduler.schedule_all()
    refresh(ls)  # inlay hints may have been turned on or off
    if ls.caps.pull_diagnostics and ls.caps.diagnostic_refresh:
        try:
            ls.workspace_diagnostic_refresh(None)
        except Exception:  # noqa: BLE001
            log.exception("workspace/diagnostic/refresh failed")


async def did_change_configuration(ls, params: types.DidChangeConfigurationParams) -> None:
    if ls.caps.configuration:
        await pull_configuration(ls)
    else:
        raw = params.settings
        if isinstance(raw, dict) and SECTION in raw:
            raw = raw[SECTION]
        ls.settings.set_configuration(raw, {})
    settings_changed(ls)


def did_change_watched_files(ls, params: types.DidChangeWatchedFilesParams) -> None:
    ls.projects.watched([c.uri for c in params.changes])
    if any(c.uri.endswith("pyproject.toml") for c in params.changes):
        ls.settings.invalidate(files=True)
        settings_changed(ls)
