-- Headless Neovim driver for tests/editors/test_neovim.py (Neovim 0.7 and 0.11).
-- The user's configuration (the snippets in editors/neovim/) is loaded with -u before this runs (-S):
--   nvim --headless --clean -u INIT.lua -S nvim_e2e.lua FILE.py
-- E2E_MODE=quickfix : wait for the diagnostic, pick the preferred quick fix from the code-action menu (or the one
--                     titled E2E_PICK...), apply it, :write, wait for the diagnostic to go away.
-- E2E_MODE=save     : wait for the diagnostic, :write (fix-on-save must fix the file).
-- Prints one event per line on stdout: ENCODING, DIAG/MENU json, APPLIED, CLEARED, RESULT ok | RESULT fail N why.
local timeout = tonumber(os.getenv("E2E_TIMEOUT_MS") or "15000")
local mode = os.getenv("E2E_MODE") or "quickfix"
local has011 = vim.fn.has("nvim-0.11") == 1
local json = vim.json and vim.json.encode or vim.fn.json_encode

local function out(s) io.stdout:write(s .. "\n"); io.stdout:flush() end
local function get_clients(filter)
  if vim.lsp.get_clients then return vim.lsp.get_clients(filter) end
  local res = {}
  for _, c in pairs(vim.lsp.get_active_clients()) do
    if not filter.name or c.name == filter.name then table.insert(res, c) end
  end
  return res
end
local function finish(code, why)
  out(code == 0 and "RESULT ok" or ("RESULT fail " .. code .. " " .. (why or "")))
  for _, c in pairs(get_clients({})) do
    pcall(function() if has011 then c:stop() else c.stop() end end)
  end
  vim.cmd(code == 0 and "qall!" or ("cquit " .. code))
end

local watchdog = vim.loop.new_timer()
watchdog:start(timeout * 3, 0, vim.schedule_wrap(function() finish(5, "watchdog") end))


-- the code-action menu: a user picks the action the server marks preferred (or, with E2E_PICK, the first
-- action whose title starts with E2E_PICK)
local want = os.getenv("E2E_PICK")
local menu_seen = false
vim.ui.select = function(items, opts, on_choice)
  menu_seen = true
  local pick
  for i, item in ipairs(items) do
    local action = item.action or item[2] -- 0.10+: {action=, ctx=}; 0.7-0.9: {client_id, action}
    out("MENU " .. json({ title = action.title, kind = action.kind or vim.NIL, isPreferred = action.isPreferred or false,
                          edit = action.edit or vim.NIL }))
    local match
    if want then match = action.title:sub(1, #want) == want else match = action.isPreferred end
    if not pick and match then pick = i end
  end
  if pick then on_choice(items[pick], pick) else on_choice(nil, nil) end
end

local function run()
  local bufnr = vim.api.nvim_get_current_buf()
  if not vim.wait(timeout, function() return #get_clients({ name = "bprop_lsp" }) > 0 end, 20) then
    return finish(6, "bprop_lsp did not start (filetype=" .. vim.bo.filetype .. ")")
  end
  local client = get_clients({ name = "bprop_lsp" })[1]
  if not vim.wait(timeout, function() return #vim.diagnostic.get(bufnr) > 0 end, 20) then
    return finish(2, "no diagnostics within timeout")
  end
  out("ENCODING " .. tostring(client.offset_encoding))
  local diags = vim.diagnostic.get(bufnr)
  for _, d in ipairs(diags) do
    -- lnum/col: 0-based, col in bytes (Neovim converted the server's columns)
    out("DIAG " .. json({ lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
                          code = d.code or vim.NIL, message = d.message, source = d.source or vim.NIL }))
  end

  if mode == "save" then
    vim.cmd("silent write")
  else
    local d = diags[1]
    vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
    local tick = vim.api.nvim_buf_get_changedtick(bufnr)
    if has011 then
      vim.lsp.buf.code_action({ context = { only = { "quickfix" } } })
    else
      vim.lsp.buf.code_action({ only = { "quickfix" } })
    end
    if not vim.wait(timeout, function() return vim.api.nvim_buf_get_changedtick(bufnr) ~= tick end, 20) then
      return finish(3, menu_seen and "the preferred action changed nothing" or "no code-action menu")
    end
    out("APPLIED")
    vim.cmd("silent write")
  end
  -- the server reports on the edited document again (pushed, or pulled by Neovim 0.11 after the change):
  -- the finding must be gone
  local ok = vim.wait(timeout, function() return #vim.diagnostic.get(bufnr) == 0 end, 20)
  if not ok then return finish(7, "diagnostic still reported after the fix") end
  out("CLEARED")
  finish(0)
end

local ok, err = pcall(run)
if not ok then finish(8, tostring(err)) end
