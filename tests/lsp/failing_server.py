"""The language server with an engine whose analysis raises for texts marked ``RAISE_IN_ANALYSIS`` (a stand-in for
an engine bug) and a ``didChange`` handler that raises for a change marked ``RAISE_IN_DID_CHANGE``; every analysis
appends a line to the file named by ``BPROP_TEST_ANALYSES``."""
import os
import sys

from bprop_lsp.checker import DocumentSession

_analyse = DocumentSession.analyse


def analyse(self, text, *args, **kwargs):
    with open(os.environ["BPROP_TEST_ANALYSES"], "a", encoding="utf-8") as fh:
        fh.write("analysis\n")
    if "RAISE_IN_ANALYSIS" in text:
        raise RuntimeError("planted")
    return _analyse(self, text, *args, **kwargs)


DocumentSession.analyse = analyse


def _raising_did_change(original):
    def did_change(ls, params):
        if any("RAISE_IN_DID_CHANGE" in change.text for change in params.content_changes):
            raise RuntimeError("planted in didChange")
        return original(ls, params)

    return did_change


from bprop_lsp.lsp import did_change as _did_change  # noqa: E402

_did_change.did_change = _raising_did_change(_did_change.did_change)

if __name__ == "__main__":
    from bprop_lsp.cli.main import main

    sys.argv = ["bprop-lsp", "serve"]
    sys.exit(main())
