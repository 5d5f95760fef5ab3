"""Entry point the VS Code extension runs: ``python -I bprop_lsp_server.py [serve options]``.

It puts the bundled ``libs`` directory (the bprop_lsp package and its pure-Python dependencies, copied
there when the .vsix is built) first on ``sys.path``, so the server runs on any Python >= 3.10 without
installing anything into -- or importing anything from -- the user's environment.

Development hooks (environment variables of the VS Code window, set by .vscode/launch.json):
  BPROP_LSP_DEV_SRC=DIR        import bprop_lsp from DIR (the repo's server/) instead of the bundled copy
  BPROP_LSP_DEBUGPY_PORT=PORT  listen for a debugpy client on 127.0.0.1:PORT (debugpy must be importable)
  BPROP_LSP_DEBUGPY_WAIT=1     ... and wait for it before serving
"""
import os
import sys

if sys.version_info < (3, 10):
    sys.stderr.write(
        "bprop-lsp needs Python >= 3.10, this is %s (%s)\n" % (sys.version.split()[0], sys.executable)
    )
    sys.exit(3)

LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")
sys.path.insert(0, LIBS)
if os.environ.get("BPROP_LSP_DEV_SRC"):
    sys.path.insert(0, os.environ["BPROP_LSP_DEV_SRC"])

if os.environ.get("BPROP_LSP_DEBUGPY_PORT"):
    try:
        import debugpy

        debugpy.listen(("127.0.0.1", int(os.environ["BPROP_LSP_DEBUGPY_PORT"])))
        if os.environ.get("BPROP_LSP_DEBUGPY_WAIT"):
            debugpy.wait_for_client()
    except Exception as exc:  # noqa: BLE001 - debugging is optional, serving is not
        sys.stderr.write("bprop-lsp: debugpy not started: %r\n" % (exc,))

from bprop_lsp.cli.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
