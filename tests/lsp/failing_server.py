"""The language server with an engine whose analysis raises for texts marked ``RAISE_IN_ANALYSIS`` (a stand-in for
an engine bug); every analysis appends a line to the file named by ``BPROP_TEST_ANALYSES``."""
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

if __name__ == "__main__":
    from bprop_lsp.cli.main import main

    sys.argv = ["bprop-lsp", "serve"]
    sys.exit(main())
