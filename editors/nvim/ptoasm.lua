-- ptoasm in Neovim's built-in LSP client (Neovim 0.7 or later): .pto files
-- get the filetype `pto` and `ptoasm lsp` attached. Put this file in your
-- config (e.g. ~/.config/nvim/plugin/ptoasm.lua) or `luafile` it;
-- vim.g.ptoasm_cmd overrides the command (default { 'ptoasm', 'lsp' }).
vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
  pattern = '*.pto',
  callback = function(args) vim.bo[args.buf].filetype = 'pto' end,
})

local client_id -- one server for every .pto buffer (Neovim 0.7 path)

vim.api.nvim_create_autocmd('FileType', {
  pattern = 'pto',
  callback = function(args)
    local cmd = vim.g.ptoasm_cmd or { 'ptoasm', 'lsp' }
    local root = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(args.buf), ':p:h')
    if vim.lsp.start then -- Neovim 0.8+
      vim.lsp.start({ name = 'ptoasm', cmd = cmd, root_dir = root }, { bufnr = args.buf })
      return
    end
    if not client_id or vim.lsp.client_is_stopped(client_id) then
      client_id = vim.lsp.start_client({ name = 'ptoasm', cmd = cmd, root_dir = root })
    end
    vim.lsp.buf_attach_client(args.buf, client_id)
  end,
})
