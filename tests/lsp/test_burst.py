"""Bursts of edits (sent back to back, as a macro or key repeat sends them; lsp/pacing.py): the last version gets
its diagnostics, and nothing of an older version is published after them, push and pull."""
import asyncio

from lsprotocol import types
from pytest_lsp import client_capabilities

from lsp_helpers import SEED, SEED_DEF_LINE, TIMEOUT, Session, lines_of, wait_until

URI = "file:///tmp/bprop-lsp-tests/burst.py"
# Correct Cells after the seed's broken one: an analysis long enough for edits to arrive while it runs.
PAD = "".join(f"\nclass Pad{i}(nn.Cell):\n    def construct(self, x):\n        return x * {i}\n\n"
              f"    def bprop(self, x, out, dout):\n        return (dout * {i},)\n" for i in range(300))
TEXT = SEED + PAD
COL = len(lines_of(SEED)[SEED_DEF_LINE]) - 2  # before "):" of the seed's bprop


def _record_pushes(client) -> list[types.PublishDiagnosticsParams]:
    pushes: list = []
    original = client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params):
        pushes.append(params)
        return original(params)

    client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    return pushes


async def _burst(s: Session, typed: str, *, delete: bool, gap: float = 0.0, start: int = 0) -> None:
    """Type ``typed`` at the seed's bprop parameters (``start`` characters after "out") one character an edit (or,
    ``delete``, delete that many characters there one backspace an edit), ``gap`` seconds apart (0: back to
    back)."""
    for i in range(start, start + len(typed)):
        if delete:
            at = COL + len(typed) - 1 - i
            rng = types.Range(start=types.Position(line=SEED_DEF_LINE, character=at),
                              end=types.Position(line=SEED_DEF_LINE, character=at + 1))
            s.change(URI, [types.TextEdit(range=rng, new_text="")])
        else:
            pos = types.Position(line=SEED_DEF_LINE, character=COL + i)
            s.change(URI, [types.TextEdit(range=types.Range(start=pos, end=pos), new_text=typed[i - start])])
        if gap:
            await asyncio.sleep(gap)


def _keys(diagnostics) -> list:
    return sorted((d.code, d.range.start.line, d.range.start.character, d.message) for d in diagnostics)


async def _push_session(client) -> tuple[Session, list]:
    pushes = _record_pushes(client)
    caps = client_capabilities("visual-studio-code")
    await client.initialize_session(types.InitializeParams(capabilities=caps))
    s = Session(client, caps)
    s.open(URI, TEXT)
    await wait_until(lambda: pushes and pushes[-1].version == 1)
    return s, pushes


async def _ends_on_the_last_version(s: Session, pushes: list, expected: list) -> None:
    last = s.versions[URI]
    await wait_until(lambda: pushes[-1].version == last)
    assert _keys(pushes[-1].diagnostics) == expected
    await asyncio.sleep(0.4)  # (longer than the wait before fixes are checked: their re-publish is the last version)
    assert pushes[-1].version == last and _keys(pushes[-1].diagnostics) == expected
    versions = [p.version for p in pushes]
    assert versions == sorted(versions)  # nothing older is published after something newer


async def test_a_burst_sent_back_to_back_ends_on_its_last_version_push(client):
    s, pushes = await _push_session(client)
    broken = _keys(pushes[-1].diagnostics)
    assert broken and broken[0][1] == SEED_DEF_LINE
    # Fixed, broken again, fixed: 18 edits back to back, the findings changing on the way.
    await _burst(s, ", dout", delete=False)
    await _burst(s, ", dout", delete=True)
    await _burst(s, ", dout", delete=False)
    before = len(pushes)
    await _ends_on_the_last_version(s, pushes, [])
    assert len(pushes) - before < 18  # coalesced: fewer analyses published than edits
    await _burst(s, ", dout", delete=True)
    await _ends_on_the_last_version(s, pushes, broken)


async def test_key_repeat_ends_on_its_last_version_push(client):
    s, pushes = await _push_session(client)
    broken = _keys(pushes[-1].diagnostics)
    await _burst(s, ", dout", delete=False, gap=0.03)
    await _ends_on_the_last_version(s, pushes, [])
    await _burst(s, ", dout", delete=True, gap=0.03)
    await _ends_on_the_last_version(s, pushes, broken)


async def test_a_pull_right_after_a_burst_gets_the_last_version(client):
    pushes = _record_pushes(client)
    caps = client_capabilities("visual-studio-code")
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=False)
    await client.initialize_session(types.InitializeParams(capabilities=caps))
    s = Session(client, caps)
    s.open(URI, TEXT)

    async def pull():
        report = await asyncio.wait_for(client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=URI))), TIMEOUT)
        return _keys(report.items)

    broken = await pull()
    assert broken and broken[0][1] == SEED_DEF_LINE
    for gap in (0.0, 0.03):
        await _burst(s, ", dout", delete=False, gap=gap)
        assert await pull() == []  # answered for the text after the last edit, not an older one
        await _burst(s, ", dout", delete=True, gap=gap)
        await _burst(s, ", dout", delete=False, gap=gap)
        await _burst(s, ", dout", delete=True, gap=gap)
        assert await pull() == broken
    # A pull in the middle of a burst: the text as it stands then (half typed: ", d" is a new parameter "d").
    await _burst(s, ", d", delete=False)
    middle = await pull()
    await _burst(s, "out", delete=False, start=3)
    assert lines_of(s.texts[URI])[SEED_DEF_LINE].endswith("out, dout):")
    assert await pull() == []
    assert middle != []  # "d" is not "dout": still broken there
    assert pushes == []  # a pulling client gets nothing pushed


async def test_a_burst_that_does_not_end_still_gets_diagnostics(client):
    """Edits every few milliseconds for 1.5 s, each closer behind the last than the wait: the burst never pauses,
    yet an analysis runs at least every ``pacing.MAX_STALL_S`` and its diagnostics are pushed (for the version it
    analysed: by then an older one), in order, and the last version's after the burst."""
    s, pushes = await _push_session(client)
    broken = _keys(pushes[-1].diagnostics)
    first = s.versions[URI]
    loop = asyncio.get_running_loop()
    end = loop.time() + 1.5
    during = 0
    while loop.time() < end:
        await _burst(s, ", dout", delete=False, gap=0.002)
        await _burst(s, ", dout", delete=True, gap=0.002)
        during = len([p for p in pushes if p.version > first])
    assert during >= 2, f"{during} pushes in 1.5 s of edits"
    await _ends_on_the_last_version(s, pushes, broken)
