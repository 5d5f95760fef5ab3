"""Settings from every source: initializationOptions (plain and VS Code shapes), workspace/configuration,
didChangeConfiguration, [tool.bprop-lsp] in the nearest pyproject.toml (and its change); bad settings warn."""
import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import SEED, SEED_DEF_LINE, Session, file_uri, wait_until

IGNORE = {"ignore": ["BP001"]}
CLEAN = lambda d: d == []  # noqa: E731
FLAGGED = lambda d: [x.code for x in d] == ["BP001"]  # noqa: E731


async def _start(client, tmp_path, name="neovim", options=None, caps=None) -> tuple[Session, str]:
    caps = caps or client_capabilities(name)
    folder = file_uri(tmp_path)
    result = await client.initialize_session(types.InitializeParams(
        capabilities=caps, initialization_options=options,
        workspace_folders=[types.WorkspaceFolder(uri=folder, name="ws")]))
    enc = result.capabilities.position_encoding
    s = Session(client, caps, str(getattr(enc, "value", enc) or "utf-16"))
    (tmp_path / "pkg").mkdir(exist_ok=True)
    uri = file_uri(tmp_path / "pkg" / "mod.py")
    return s, uri


@pytest.mark.parametrize("shape", ["plain", "vscode-list", "vscode-dict", "section"])
async def test_initialization_options(client, tmp_path, shape):
    folder = file_uri(tmp_path)
    options = {
        "plain": IGNORE,
        "vscode-list": {"settings": [{"workspace": folder, "interpreter": ["python3"], **IGNORE}],
                        "globalSettings": {"mode": "auto"}},
        "vscode-dict": {"settings": IGNORE, "globalSettings": {}},
        "section": {"bprop-lsp": IGNORE},
    }[shape]
    s, uri = await _start(client, tmp_path, options=options)
    s.open(uri, SEED)
    assert await s.diagnostics(uri, expect=CLEAN) == []
    assert not [m for m in client.log_messages if m.type == types.MessageType.Warning]


async def test_workspace_configuration(client, tmp_path):
    client.set_configuration(IGNORE, section="bprop-lsp")
    s, uri = await _start(client, tmp_path)
    s.open(uri, SEED)
    assert await s.diagnostics(uri, expect=CLEAN) == []


@pytest.mark.parametrize("pull_config", [True, False], ids=["re-pull", "in-notification"])
async def test_did_change_configuration(client, tmp_path, pull_config):
    caps = client_capabilities("neovim")
    if not pull_config:
        caps.workspace.configuration = False
    s, uri = await _start(client, tmp_path, caps=caps)
    s.open(uri, SEED)
    await s.diagnostics(uri, expect=FLAGGED)
    if pull_config:
        client.set_configuration(IGNORE, section="bprop-lsp")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    else:
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"bprop-lsp": IGNORE}))
    assert await s.diagnostics(uri, expect=CLEAN) == []


async def test_pyproject_and_editor_precedence(client, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.bprop-lsp]\nignore = ["BP001"]\n')
    s, uri = await _start(client, tmp_path)
    s.open(uri, SEED)
    assert await s.diagnostics(uri, expect=CLEAN) == []
    # an editor setting that is set wins over the file
    client.set_configuration({"ignore": []}, section="bprop-lsp")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await s.diagnostics(uri, expect=FLAGGED)


@pytest.mark.parametrize("name", ["visual-studio-code", "pull-with-refresh"])
async def test_pyproject_change_reanalyses(client, tmp_path, name):
    caps = client_capabilities("visual-studio-code")
    if name == "pull-with-refresh":
        caps.text_document.diagnostic = types.DiagnosticClientCapabilities()
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    s, uri = await _start(client, tmp_path, caps=caps)
    s.open(uri, SEED)
    (diag,) = await s.diagnostics(uri, expect=FLAGGED)
    assert diag.range.start.line == SEED_DEF_LINE
    watchers = [r for r in getattr(client, "registrations", []) if r.method == "workspace/didChangeWatchedFiles"]
    assert watchers and "pyproject.toml" in str(watchers[0].register_options)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.bprop-lsp]\nignore = ["BP001"]\n')
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=file_uri(pyproject), type=types.FileChangeType.Created)]))
    if name == "pull-with-refresh":
        await wait_until(lambda: client.diagnostic_refresh_count > 0)
    assert await s.diagnostics(uri, expect=CLEAN) == []


@pytest.mark.parametrize("source", ["initializationOptions", "pyproject"])
async def test_bad_settings_warn_and_keep_defaults(client, tmp_path, source):
    options = None
    if source == "pyproject":
        (tmp_path / "pyproject.toml").write_text('[tool.bprop-lsp]\nmode = "turbo"\nbogus = 1\n')
    else:
        options = {"mode": "turbo", "bogus": 1, "select": 7}
    s, uri = await _start(client, tmp_path, options=options)
    s.open(uri, SEED)
    await s.diagnostics(uri, expect=FLAGGED)  # defaults in force
    warnings = await wait_until(lambda: [m.message for m in client.log_messages
                                         if m.type == types.MessageType.Warning] or None)
    text = "\n".join(warnings)
    assert "'mode'" in text and "bogus" in text
    await asyncio.sleep(0)
