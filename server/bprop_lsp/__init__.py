"""bprop-lsp: find MindSpore custom-bprop mistakes before MindSpore compiles a graph."""

__version__ = "0.1.0"
# Where "internal error" messages ask to be reported.
ISSUES_URL = "https://github.com/bprop-lsp/bprop-lsp/issues"
