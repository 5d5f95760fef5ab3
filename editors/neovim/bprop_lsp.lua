-- bprop-lsp for Neovim 0.11+ (built-in client: vim.lsp.config / vim.lsp.enable).
-- Put this in your init.lua.
-- Needs `bprop-lsp` on PATH (pip install /path/to/bprop-lsp-checkout today; pip install bprop-lsp once
-- released), or give the full path in `cmd`.
vim.lsp.config("bprop_lsp", {
  cmd = { "bprop-lsp", "serve" },
  filetypes = { "python" },
  root_markers = { "pyproject.toml", "setup.cfg", "setup.py", ".git" },
})
vim.lsp.enable("bprop_lsp")
-- Diagnostics appear as you type; on a finding, `gra` (vim.lsp.buf.code_action) offers the quick fix
-- (marked preferred) and "Disable BPxxx for this line".
