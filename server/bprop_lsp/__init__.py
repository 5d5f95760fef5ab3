"""bprop-lsp: find MindSpore custom-bprop mistakes before MindSpore compiles a graph."""

__version__ = "0.1.0"
