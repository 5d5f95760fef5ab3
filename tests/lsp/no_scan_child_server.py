"""The language server where no workspace-scan process can start (its interpreter exits at once, before it is
ready): the scan must analyse in the server's process instead."""
import sys

if __name__ == "__main__":
    from bprop_lsp.cli.main import main

    sys.executable = "/bin/false"
    sys.argv = ["bprop-lsp", "serve", *sys.argv[1:]]
    sys.exit(main())
