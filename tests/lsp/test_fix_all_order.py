"""A fix-all asked for by kind right after an edit (lsp-mode's fix-all on save, just after the quick fix) is
answered for the text as it is now, and only after that text's diagnostics have been published.

lsp-mode 8 (Debian 12's elpa-lsp-mode) reads the server's output in chunks and, while it waits for the answer
to a request of its own, drops every message that came in the same chunk after that answer. A publish written
just after the answer to the fix-all-on-save request was therefore lost, and the finding the quick fix had just
fixed stayed on screen (tests/editors/test_emacs.py::test_lsp_mode_quick_fix failed 7 times in 28 runs on a
loaded machine). The server used to answer that request at once, from no analysis of the new text at all, with
a fix-all action whose resolved edit was empty.
"""
from lsp_helpers import SEED, SEED_DEF_LINE
from raw_client import RawServer

URI = "file:///tmp/bprop-lsp-fix-all-order/muladd.py"
# what lsp-mode 8.0 announces that matters here: push diagnostics, code actions resolved lazily
CAPS = {
    "workspace": {"workspaceEdit": {"documentChanges": True}, "applyEdit": True},
    "textDocument": {
        "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
        "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source"]}},
                       "resolveSupport": {"properties": ["edit", "command"]}, "dataSupport": True},
    },
}
FIX_ALL = "source.fixAll.bprop-lsp"


def _publish(version: int):
    return lambda m: m["method"] == "textDocument/publishDiagnostics" and m["params"].get("version") == version


def test_fix_all_right_after_the_fix_waits_for_the_new_text_and_its_publish():
    s = RawServer()
    try:
        s.initialize(CAPS)
        s.open(URI, SEED, version=0)
        (diag,) = s.wait_notification(_publish(0))["params"]["diagnostics"]
        line = SEED.splitlines()[SEED_DEF_LINE]
        at = {"line": SEED_DEF_LINE, "character": line.index("out)") + len("out")}
        # the quick fix, as the editor applies it, and at once the save's fix-all request (its context still
        # carrying the diagnostic of the old text)
        s.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 1},
                                             "contentChanges": [{"range": {"start": at, "end": at}, "text": ", dout"}]})
        rid = s.request_async("textDocument/codeAction", {
            "textDocument": {"uri": URI}, "range": {"start": diag["range"]["start"], "end": diag["range"]["start"]},
            "context": {"diagnostics": [diag], "only": [FIX_ALL]}})
        answer = s.response(rid)
        assert not answer.get("result"), answer  # nothing is left to fix: no action that would fix nothing
        with s.cond:
            arrivals = list(s.arrivals)
        published = next(i for i, m in enumerate(arrivals) if m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"].get("version") == 1)
        answered = next(i for i, m in enumerate(arrivals) if m.get("id") == rid and "method" not in m)
        assert published < answered, [m.get("method") or f"answer {m.get('id')}" for m in arrivals]
        assert arrivals[published]["params"]["diagnostics"] == []
    finally:
        s.close()


def test_fix_all_asked_for_by_kind_is_offered_while_there_is_a_fix():
    s = RawServer()
    try:
        s.initialize(CAPS)
        s.open(URI, SEED, version=0)
        rid = s.request_async("textDocument/codeAction", {
            "textDocument": {"uri": URI}, "range": {"start": {"line": 0, "character": 0},
                                                     "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": [], "only": [FIX_ALL]}})
        (action,) = s.response(rid)["result"]
        assert action["kind"] == FIX_ALL and "edit" not in action
        resolved = s.request("codeAction/resolve", action)["result"]
        (change,) = resolved["edit"]["documentChanges"]
        assert [e["newText"] for e in change["edits"]] == [", dout"]
    finally:
        s.close()
