-- The issue's editor session in a real Neovim, headless, through its
-- built-in LSP client and editors/nvim/ptoasm.lua: open ffn_grid's shipped
-- kernel, get the WAR at 124:5 (related information at 118), hover
-- tmatmul.acc, jump to %hiddenChunkMat's declaration, complete `tmat`, ask
-- for an inlay hint, apply the race's code action through Neovim's own
-- workspace-edit code, and see the race gone.
--
-- Run by cmd/ptoasm's TestNeovimSession:
--   PTOASM_CONFIG=editors/nvim/ptoasm.lua PTOASM_FILE=... PTOASM_OUT=... \
--   nvim --headless --clean -c 'luafile editors/nvim/session.lua'
-- vim.g.ptoasm_cmd comes from PTOASM_CMD (a JSON list). Each check writes a
-- line "ok ..." or "FAIL ..." to PTOASM_OUT; the last line is "done".
local out = assert(io.open(os.getenv('PTOASM_OUT'), 'w'))
local failed = false
local function say(ok, msg)
  if not ok then failed = true end
  out:write((ok and 'ok ' or 'FAIL ') .. msg .. '\n')
  out:flush()
end
local function finish()
  out:write('done\n')
  out:close()
  vim.cmd(failed and 'cquit 1' or 'qall!')
end

local ok, err = pcall(function()
  vim.g.ptoasm_cmd = vim.fn.json_decode(os.getenv('PTOASM_CMD'))
  dofile(os.getenv('PTOASM_CONFIG'))
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('PTOASM_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  say(vim.bo[buf].filetype == 'pto', 'filetype pto')
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local function find(frag, col)
    for i, l in ipairs(lines) do
      local s = l:find(frag, 1, true)
      if s then return { line = i - 1, character = s - 1 + (col or 0) } end
    end
    error('no line contains ' .. frag)
  end
  local client
  vim.wait(10000, function()
    client = vim.lsp.get_active_clients()[1]
    return client ~= nil and client.initialized
  end, 20)
  say(client ~= nil, 'ptoasm lsp started and initialized')

  -- The WAR at 124:5 with its second site at 118.
  local war
  vim.wait(60000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      local rel = d.user_data and d.user_data.lsp and d.user_data.lsp.relatedInformation
      if d.lnum == 123 and d.col == 4 and d.code == 'WAR' and rel and rel[1] and rel[1].location.range.start.line == 117 then
        war = d
        return true
      end
    end
    return false
  end, 20)
  say(war ~= nil, 'WAR diagnostic at 124:5 with related information at 118')

  local uri = vim.uri_from_bufnr(buf)
  local function request(method, params)
    local res = vim.lsp.buf_request_sync(buf, method, params, 30000)
    for _, r in pairs(res or {}) do
      if r.result then return r.result end
    end
  end
  local hover = request('textDocument/hover', { textDocument = { uri = uri }, position = find('tmatmul.acc %cDown') })
  local value = hover and hover.contents and (hover.contents.value or hover.contents) or ''
  say(type(value) == 'string' and value:find('**tmatmul.acc**', 1, true) ~= nil and value:find('pipe: M', 1, true) ~= nil,
    'hover on tmatmul.acc names it and its pipe')

  local def = request('textDocument/definition', { textDocument = { uri = uri },
    position = find('consume: tmov %aDown, %hiddenChunkMat', #'consume: tmov %aDown, ') })
  if def and def[1] then def = def[1] end
  local decl = find('tile %hiddenChunkMat')
  say(def ~= nil and def.range ~= nil and def.range.start.line == decl.line,
    'definition of %hiddenChunkMat is its tile declaration (line ' .. (decl.line + 1) .. ')')

  local items = request('textDocument/completion', { textDocument = { uri = uri }, position = find('tmatmul.acc %cDown', 4) })
  items = items and (items.items or items) or {}
  local labels = {}
  for _, it in ipairs(items) do labels[it.label] = true end
  say(labels['tmatmul'] and labels['tmatmul.acc'], 'completion of tmat offers tmatmul and tmatmul.acc')

  -- Inlay hints (LSP 3.17; Neovim 0.7 does not draw them, so asked for
  -- directly): the matmul's pipe.
  local mm = find('mm: tmatmul.acc')
  local hints = request('textDocument/inlayHint', { textDocument = { uri = uri },
    range = { start = { line = mm.line, character = 0 }, ['end'] = { line = mm.line + 1, character = 0 } } }) or {}
  say(#hints == 1 and hints[1].label == 'M', 'inlay hint M on the matmul (' .. #hints .. ' hints)')

  if war then
    -- The diagnostic as LSP spells it (Neovim 0.7 keeps only part of it
    -- in user_data.lsp).
    local range = { start = { line = war.lnum, character = war.col }, ['end'] = { line = war.end_lnum, character = war.end_col } }
    local lspdiag = vim.tbl_extend('force', war.user_data.lsp, { range = range, message = war.message, severity = war.severity })
    local actions = request('textDocument/codeAction', { textDocument = { uri = uri }, range = range,
      context = { diagnostics = { lspdiag } } }) or {}
    say(#actions == 1 and actions[1].edit ~= nil, 'one quick fix for the WAR (' .. #actions .. ' actions)')
    if actions[1] and actions[1].edit then
      vim.lsp.util.apply_workspace_edit(actions[1].edit, 'utf-16')
      local gone = vim.wait(60000, function()
        local ds = vim.diagnostic.get(buf)
        for _, d in ipairs(ds) do
          if d.message == war.message or d.message:find('%hiddenChunkMat', 1, true) then return false end
        end
        return #ds > 0 -- the next analysis has arrived (the kernel's other race stays)
      end, 20)
      say(gone, 'after the code action no diagnostic for the race')
    end
  end
  vim.lsp.stop_client(client and client.id)
end)
if not ok then say(false, 'error: ' .. tostring(err)) end
finish()
