-- bprop-lsp for Neovim 0.7 to 0.10 without plugins (on 0.11+ use bprop_lsp.lua instead).
-- Starts one bprop-lsp per project root and attaches it to every Python buffer.
-- Needs `bprop-lsp` on PATH (pip install /path/to/bprop-lsp-checkout today; pip install bprop-lsp once
-- released), or give the full path in `cmd`.
vim.api.nvim_create_autocmd("FileType", {
  group = vim.api.nvim_create_augroup("bprop_lsp", { clear = true }),
  pattern = "python",
  callback = function(args)
    local bufnr = args.buf
    local path = vim.api.nvim_buf_get_name(bufnr)
    local marker = vim.fn.findfile("pyproject.toml", vim.fn.fnamemodify(path, ":p:h") .. ";")
    local root = marker ~= "" and vim.fn.fnamemodify(marker, ":p:h") or vim.fn.fnamemodify(path, ":p:h")
    local config = { name = "bprop_lsp", cmd = { "bprop-lsp", "serve" }, root_dir = root }
    if vim.lsp.start then -- 0.8+
      vim.lsp.start(config, { bufnr = bufnr })
    else -- 0.7: vim.lsp.start does not exist yet
      _G.bprop_lsp_clients = _G.bprop_lsp_clients or {}
      local id = _G.bprop_lsp_clients[root]
      if not id or not vim.lsp.get_client_by_id(id) then
        id = vim.lsp.start_client(config)
        _G.bprop_lsp_clients[root] = id
      end
      if id then vim.lsp.buf_attach_client(bufnr, id) end
    end
  end,
})
