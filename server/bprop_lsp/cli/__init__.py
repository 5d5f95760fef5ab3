"""The command-line face: ``bprop-lsp check`` / ``serve`` / ``rule``."""
