-- bprop-lsp through nvim-lspconfig (for Neovim 0.8 to 0.10, where vim.lsp.config does not exist yet).
-- bprop-lsp is not one of lspconfig's bundled servers, so register it as a custom server first.
-- Needs `bprop-lsp` on PATH (pip install /path/to/bprop-lsp-checkout today; pip install bprop-lsp once
-- released), or give the full path in `cmd`.
local lspconfig = require("lspconfig")
local configs = require("lspconfig.configs")
if not configs.bprop_lsp then
  configs.bprop_lsp = {
    default_config = {
      cmd = { "bprop-lsp", "serve" },
      filetypes = { "python" },
      root_dir = lspconfig.util.root_pattern("pyproject.toml", "setup.cfg", "setup.py", ".git"),
      single_file_support = true,
    },
  }
end
lspconfig.bprop_lsp.setup({})
