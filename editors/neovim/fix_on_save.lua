-- Optional, Neovim 0.11+: apply bprop-lsp's safe fixes (code action kind `source.fixAll.bprop-lsp`)
-- to the whole buffer every time a Python file is written.
vim.api.nvim_create_autocmd("BufWritePre", {
  group = vim.api.nvim_create_augroup("bprop_lsp_fix_on_save", { clear = true }),
  pattern = { "*.py", "*.pyi" },
  callback = function(args)
    local client = vim.lsp.get_clients({ bufnr = args.buf, name = "bprop_lsp" })[1]
    if not client then return end
    local last = vim.api.nvim_buf_line_count(args.buf)
    local params = {
      textDocument = vim.lsp.util.make_text_document_params(args.buf),
      range = { start = { line = 0, character = 0 }, ["end"] = { line = last, character = 0 } },
      context = { only = { "source.fixAll.bprop-lsp" }, diagnostics = {} },
    }
    local resp = client:request_sync("textDocument/codeAction", params, 2000, args.buf)
    for _, action in ipairs(resp and resp.result or {}) do
      if not action.edit then -- the server computes the edit only when asked (codeAction/resolve)
        local resolved = client:request_sync("codeAction/resolve", action, 2000, args.buf)
        action = resolved and resolved.result or action
      end
      if action.edit then vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding) end
    end
  end,
})
