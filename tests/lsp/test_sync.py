"""Incremental sync under fast typing: work is coalesced (debounce), stale results are dropped, the last
version always gets its diagnostics."""
import asyncio

from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import SEED, SEED_DEF_LINE, Session, lines_of, wait_until

URI = "file:///tmp/bprop-lsp-tests/typing.py"


async def test_fast_typing_is_coalesced_and_ends_on_the_last_version(client):
    pushes: list = []
    original = client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params):
        pushes.append(params)
        return original(params)

    client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    caps = client_capabilities("visual-studio-code")
    await client.initialize_session(types.InitializeParams(capabilities=caps))
    s = Session(client, caps)
    s.open(URI, SEED)
    await wait_until(lambda: pushes)
    # Type ", dout" into the bprop's parameter list one character at a time, with no pause.
    col = len(lines_of(SEED)[SEED_DEF_LINE]) - 2
    for i, ch in enumerate(", dout"):
        pos = types.Position(line=SEED_DEF_LINE, character=col + i)
        s.change(URI, [types.TextEdit(range=types.Range(start=pos, end=pos), new_text=ch)])
    last = s.versions[URI]
    await wait_until(lambda: pushes[-1].version == last)
    assert list(pushes[-1].diagnostics) == []  # the final text is fixed
    versions = [p.version for p in pushes]
    assert versions == sorted(versions)  # a stale result is never published after a newer one
    assert len(pushes) < 1 + 6  # fewer analyses than edits
    await asyncio.sleep(0.3)
    assert pushes[-1].version == last  # nothing older arrives late
