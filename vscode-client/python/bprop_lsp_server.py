"""Entry point the VS Code extension runs: ``python -I bprop_lsp_server.py [serve options]``.

It puts the bundled ``libs`` directory (the bprop_lsp package and its pure-Python dependencies, copied
there when the .vsix is built) first on ``sys.path``, so the server runs on any Python >= 3.10 without
installing anything into -- or importing anything from -- the user's environment.
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

from bprop_lsp.cli.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
