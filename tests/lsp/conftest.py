import os
import sys

import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, os.path.dirname(__file__))
from lsp_helpers import SERVER_COMMAND  # noqa: E402

ENV = {**os.environ, "BPROP_LSP_DEBOUNCE_MS": "10"}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, server_env=ENV))
async def client(lsp_client: LanguageClient):
    """A running server process; each test initialises the session with the capabilities it needs."""

    @lsp_client.feature("client/registerCapability")
    def register_capability(params):
        lsp_client.registrations = getattr(lsp_client, "registrations", []) + list(params.registrations)
        return None

    yield lsp_client
    await lsp_client.shutdown_session()
