-- Driven by test_lsp_neovim.py: a real Neovim client against neuralmind-lsp.
-- Arguments come in environment variables; results go to NM_OUT as JSON.
local repo, out, python = os.getenv("NM_REPO"), os.getenv("NM_OUT"), os.getenv("NM_PYTHON")
local result = { steps = {} }

local function finish(err)
  result.error = err
  vim.fn.writefile({ vim.json.encode(result) }, out)
  vim.cmd("qa!")
end

local function step(name, ok, detail)
  table.insert(result.steps, { name = name, ok = ok, detail = detail })
  if not ok then finish(name .. " failed: " .. vim.inspect(detail)) end
  return ok
end

local ok, err = pcall(function()
  vim.cmd("edit " .. repo .. "/app/billing.py")
  local buf = vim.api.nvim_get_current_buf()
  local cmd = { python, "-m", "neuralmind.cli.server_cmds", "--stdio" }
  if os.getenv("NM_LSP_LOG") then
    vim.list_extend(cmd, { "--log-file", os.getenv("NM_LSP_LOG"), "-vv" })
  end
  local client_id = vim.lsp.start({
    name = "neuralmind",
    cmd = cmd,
    root_dir = repo,
    init_options = { neuralmind = { mcp = false, debounceSeconds = 0.2 } },
  })
  local client = vim.lsp.get_client_by_id(client_id)
  if not step("attached", client ~= nil and vim.wait(20000, function()
    return client.initialized and vim.lsp.buf_is_attached(buf, client_id)
  end, 20), client_id) then return end

  local function request(method, params)
    local resp = client:request_sync(method, params, 30000, buf)
    if not resp then return nil, "timeout" end
    return resp.result, resp.err
  end

  -- the first index: poll status until no build is running and nodes exist
  local indexed, last = false, nil
  local deadline = vim.uv.now() + 60000
  while not indexed and vim.uv.now() < deadline do
    local st, serr = request("neuralmind/status", {})
    last = st or serr
    indexed = st ~= nil and st.indexing == vim.NIL and st.nodes > 0
    if not indexed then vim.wait(100) end
  end
  if not step("indexed", indexed, last) then return end

  local rec, rerr = request("neuralmind/decisions/record", {
    title = "Invoice totals round once, after tax",
    rationale = "Per-line rounding drifted from the ledger.",
    files = { "app/billing.py" }, symbols = { "app/billing.py::compute_invoice_total" },
  })
  if not step("recorded", rec ~= nil and rec.id ~= nil, rerr) then return end
  result.decision = rec.id

  -- edit the governed function in the buffer, save, commit
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for i, line in ipairs(lines) do
    if line:find("round%(subtotal") then
      lines[i] = line:gsub(", 2%)", ", 4)")
    end
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.cmd("write")
  local commit = vim.fn.system({ "git", "-C", repo, "commit", "-qam", "more precision" })
  if not step("committed", vim.v.shell_error == 0, commit) then return end

  local got = vim.wait(30000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == "neuralmind" then return true end
    end
    return false
  end, 50)
  local diags = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(diags, { source = d.source, code = d.code, lnum = d.lnum,
                          severity = d.severity, message = d.message })
  end
  result.diagnostics = diags
  if not step("stale diagnostic", got, diags) then return end

  local ctx, cerr = request("neuralmind/context", { query = "invoice total with tax", budget = 600 })
  if not step("context", ctx ~= nil, cerr) then return end
  result.context_files = {}
  for _, h in ipairs(ctx.hits) do table.insert(result.context_files, h.file) end
  result.context_tokens = ctx.tokens

  vim.lsp.stop_client(client_id)
  result.stopped = vim.wait(5000, function() return client:is_stopped() end, 20)
end)
if not ok then finish(tostring(err)) else finish(result.error) end
