-- Drives the NeuralMind Neovim plugin headless, as a user would, against the real server.
-- Each step's outcome (or its error) goes to $NM_OUT as JSON; test_nvim_plugin.py asserts.
local ws = assert(os.getenv("NM_WORKSPACE"), "NM_WORKSPACE unset")
local out_path = assert(os.getenv("NM_OUT"), "NM_OUT unset")
local only = os.getenv("NM_ONLY") -- "missing": just the not-installed path

local results = {}
local function write()
  local f = assert(io.open(out_path, "w"))
  f:write(vim.json.encode(results))
  f:close()
end

local function step(name, fn)
  local ok, val = xpcall(fn, debug.traceback)
  results[name] = ok and val or { error = tostring(val) }
  write()
  return ok
end

local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end

local nm = require("neuralmind")

if only == "missing" then
  step("missing", function()
    nm.setup({ cmd = { "neuralmind-lsp-not-installed-here", "--stdio" } })
    vim.cmd.edit(vim.fn.fnameescape(ws .. "/billing/invoice.py"))
    vim.cmd.edit(vim.fn.fnameescape(ws .. "/auth/session.py"))
    return { notes = notes, clients = #vim.lsp.get_clients({ name = "neuralmind" }) }
  end)
  vim.cmd("qa!")
  return
end

local has_011 = vim.fn.has("nvim-0.11") == 1
local function sync(method, params, timeout)
  local client = assert(nm.client(), "no neuralmind client")
  local done, res, err = false, nil, nil
  local function handler(e, r)
    err, res, done = e, r, true
  end
  if has_011 then
    client:request(method, params, handler)
  else
    client.request(method, params, handler)
  end
  assert(vim.wait(timeout or 15000, function()
    return done
  end, 10), method .. " timed out")
  if err then
    error(method .. ": " .. vim.inspect(err))
  end
  return res
end

local function is_nil(v)
  return v == nil or v == vim.NIL
end

local function edit(rel)
  vim.cmd.edit(vim.fn.fnameescape(ws .. "/" .. rel))
end

--- Records a decision governing `rel` and opens it: the record and the buffer.
local function record_and_edit(title, rationale, rel)
  local record = sync("neuralmind/decisions/record", { title = title, rationale = rationale, files = { rel } })
  edit(rel)
  return record, vim.api.nvim_get_current_buf()
end

local ok = step("setup", function()
  nm.setup({ settings = { debounce_seconds = 0.2, mcp = true, budget = 1200 }, editor_state_debounce_ms = 50 })
  edit("billing/invoice.py")
  assert(vim.wait(30000, function()
    local c = nm.client()
    return c ~= nil and c.initialized == true
  end, 20), "the client did not initialize within 30 s")
  local c = nm.client()
  return {
    name = c.name,
    root_dir = c.root_dir,
    attached = #vim.lsp.get_clients({ name = "neuralmind", bufnr = 0 }),
    version = tostring(vim.version()),
  }
end)

if ok then
  ok = step("indexed", function()
    local deadline = vim.uv.now() + 150000
    local st
    while vim.uv.now() < deadline do
      st = sync("neuralmind/status", vim.empty_dict())
      if is_nil(st.indexing) and (st.nodes or 0) > 0 then
        return st
      end
      vim.wait(250)
    end
    error("indexing did not finish in 150 s: " .. vim.inspect(st))
  end)
end

if ok then
  step("ask", function()
    vim.cmd("NeuralMindAsk how is the invoice total computed with tax?")
    local buf
    assert(vim.wait(20000, function()
      buf = vim.fn.bufnr("neuralmind://context")
      return buf ~= -1 and vim.api.nvim_buf_line_count(buf) > 3
    end, 20), "the context buffer was not filled")
    return {
      lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false),
      shown = vim.fn.bufwinid(buf) ~= -1,
      filetype = vim.bo[buf].filetype,
      buftype = vim.bo[buf].buftype,
    }
  end)

  step("ask_prompt", function()
    edit("billing/invoice.py")
    local prompt
    vim.ui.input = function(opts, on_confirm)
      prompt = opts.prompt
      on_confirm("where is the session token replaced with a random one?")
    end
    vim.cmd("NeuralMindAsk")
    local buf = vim.fn.bufnr("neuralmind://context")
    assert(vim.wait(20000, function()
      return vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == "# where is the session token replaced with a random one?"
    end, 20), "the prompted question did not replace the context")
    return { prompt = prompt, lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false) }
  end)

  step("next", function()
    for round = 1, 3 do
      for _, rel in ipairs({ "billing/invoice.py", "storage/cache.py" }) do
        edit(rel)
        vim.api.nvim_buf_set_lines(0, -1, -1, false, { "# round " .. round })
        vim.cmd.write()
      end
      vim.wait(400) -- past the 0.2 s debounce: one co-edit batch per round
    end
    edit("billing/invoice.py")
    local seen
    vim.ui.select = function(items, opts, on_choice)
      seen = { formatted = {}, uris = {} }
      local pick
      for _, it in ipairs(items) do
        table.insert(seen.formatted, opts.format_item(it))
        table.insert(seen.uris, it.uri)
        if it.uri:match("storage/cache%.py$") then
          pick = it
        end
      end
      seen.picked = pick ~= nil
      on_choice(pick)
    end
    local deadline = vim.uv.now() + 20000
    while vim.uv.now() < deadline do
      seen = nil
      vim.cmd("NeuralMindNext")
      vim.wait(5000, function()
        return seen ~= nil
      end, 20)
      if seen and seen.picked then
        break
      end
      vim.wait(300)
    end
    assert(seen, "NeuralMindNext never offered a choice; notes: " .. vim.inspect(notes))
    seen.opened = vim.api.nvim_buf_get_name(0)
    return seen
  end)

  step("stale", function()
    local record, buf = record_and_edit("Session tokens are 16 random bytes",
      "Shorter tokens failed the security review.", "auth/session.py")
    -- The user edits the governed file, saves, and commits from a terminal.
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "", "", "def drop_session(session):", "    session.token = None" })
    vim.cmd.write()
    local git = vim.fn.system({ "git", "-C", ws, "commit", "-q", "-am", "sessions can be dropped" })
    assert(vim.v.shell_error == 0, "git commit failed: " .. git)
    local found
    assert(vim.wait(30000, function()
      for _, d in ipairs(vim.diagnostic.get(buf)) do
        if d.source == "neuralmind" and tostring(d.code) == tostring(record.id) then
          found = d
          return true
        end
      end
      return false
    end, 50), "no neuralmind diagnostic on auth/session.py within 30 s")
    return {
      id = record.id,
      diagnostic = {
        message = found.message,
        severity = found.severity,
        code = found.code,
        lnum = found.lnum,
      },
      warn = vim.diagnostic.severity.WARN,
    }
  end)

  step("decisions", function()
    vim.fn.setqflist({}, "r", { items = {} })
    vim.cmd("NeuralMindDecisions")
    assert(vim.wait(15000, function()
      return #vim.fn.getqflist() > 0
    end, 20), "the quickfix list stayed empty")
    local items = {}
    for _, it in ipairs(vim.fn.getqflist()) do
      table.insert(items, { text = it.text, file = vim.api.nvim_buf_get_name(it.bufnr), type = it.type })
    end
    return { items = items, title = vim.fn.getqflist({ title = 1 }).title }
  end)

  -- An agent (MCP over the editor's endpoint) reads what the editor shows, and reveals code.
  local python = os.getenv("NM_PYTHON")
  local probe = os.getenv("NM_PROBE")
  local function agent(tool, args)
    local done
    vim.system({ python, probe, ws, tool, vim.json.encode(args or vim.empty_dict()) }, { text = true }, function(r)
      done = r
    end)
    assert(vim.wait(60000, function()
      return done ~= nil
    end, 20), tool .. ": the agent got no answer")
    assert(done.code == 0, tool .. " failed: " .. (done.stderr or ""))
    return vim.json.decode(done.stdout)
  end

  step("editor_state", function()
    edit("billing/invoice.py")
    vim.api.nvim_win_set_cursor(0, { 6, 4 }) -- inside compute_invoice_total
    nm.send_editor_state()
    local state
    local deadline = vim.uv.now() + 20000
    repeat
      state = agent("neuralmind_editor_state")
      if state.symbol ~= nil and state.symbol ~= vim.NIL and state.symbol.name == "compute_invoice_total" then
        break
      end
      vim.wait(200)
    until vim.uv.now() > deadline
    return state
  end)

  step("reveal", function()
    local before = #notes
    local shown = agent("neuralmind_reveal", { file = "storage/cache.py", line = 4, end_line = 5, note = "the cache lives here" })
    assert(vim.wait(10000, function()
      return vim.api.nvim_buf_get_name(0):match("storage/cache%.py$") ~= nil and #notes > before
    end, 20), "the revealed file was not shown")
    return { shown = shown, buffer = vim.api.nvim_buf_get_name(0), cursor = vim.api.nvim_win_get_cursor(0), note = notes[#notes].msg }
  end)

  step("review", function()
    for i = 1, 3 do -- invoice and cache change together in three commits
      for _, rel in ipairs({ "billing/invoice.py", "storage/cache.py" }) do
        vim.fn.writefile({ "# pair " .. i }, ws .. "/" .. rel, "a")
      end
      local out = vim.fn.system({ "git", "-C", ws, "commit", "-q", "-am", "pair " .. i })
      assert(vim.v.shell_error == 0, "git commit failed: " .. out)
    end
    edit("billing/invoice.py")
    vim.cmd("edit!") -- reload what git committed
    vim.api.nvim_buf_set_lines(0, -1, -1, false, { "def refund(invoice):", "    return -invoice.total" })
    vim.fn.setqflist({}, "r", { items = {} })
    vim.cmd("NeuralMindReview")
    assert(vim.wait(20000, function()
      return #vim.fn.getqflist() > 0
    end, 20), "the review filled no quickfix list; notes: " .. vim.inspect(notes))
    local items = {}
    for _, it in ipairs(vim.fn.getqflist()) do
      table.insert(items, { text = it.text, file = vim.api.nvim_buf_get_name(it.bufnr), type = it.type })
    end
    vim.cmd("cclose")
    edit("billing/invoice.py")
    vim.cmd("edit!") -- drop the unsaved change
    return { items = items, title = vim.fn.getqflist({ title = 1 }).title }
  end)

  -- The review's diagnostics on an uncommitted edit: the missed partner (Information) and the
  -- decision at risk (Hint), whose code actions re-affirm it, then supersede it. The edits are
  -- saved: the server's own review knows which buffers are unsaved, not their text.
  step("review_diagnostics", function()
    local record, buf = record_and_edit("Invoice totals round to cents",
      "Accounting reconciles to two decimals.", "billing/invoice.py")
    local function ours(code)
      for _, d in ipairs(vim.diagnostic.get(buf)) do
        if d.source == "neuralmind" and d.code == code then
          return d
        end
      end
    end
    local function actions(d)
      local params = vim.lsp.util.make_range_params(0, "utf-16")
      params.range = d.user_data.lsp.range
      params.context = { diagnostics = { d.user_data.lsp } }
      local titles = {}
      for _, a in ipairs(sync("textDocument/codeAction", params) or {}) do
        table.insert(titles, a.title)
      end
      return titles
    end
    local function apply(d, prefix)
      vim.api.nvim_win_set_cursor(0, { d.lnum + 1, 0 })
      vim.lsp.buf.code_action({
        apply = true,
        filter = function(a)
          return vim.startswith(a.title, prefix)
        end,
      })
    end
    local head_lines = vim.api.nvim_buf_line_count(buf)
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "", "ROUNDING = 3" })
    vim.cmd.write()
    local missed, risk
    assert(vim.wait(30000, function()
      missed, risk = ours("missed-file"), ours("decision-at-risk")
      return missed ~= nil and risk ~= nil
    end, 50), "no missed-file and at-risk diagnostics within 30 s: " .. vim.inspect(vim.diagnostic.get(buf))
      .. "; the review: " .. vim.inspect(sync("neuralmind/review", vim.empty_dict()))
      .. "; the decision: " .. vim.inspect(record))
    local out = {
      id = record.id,
      missed = { message = missed.message, severity = missed.severity, actions = actions(missed) },
      risk = { message = risk.message, severity = risk.severity, lnum = risk.lnum, actions = actions(risk) },
      head_lines = head_lines,
      severity = { info = vim.diagnostic.severity.INFO, hint = vim.diagnostic.severity.HINT },
    }
    apply(risk, "Re-affirm decision")
    assert(vim.wait(20000, function()
      return ours("decision-at-risk") == nil
    end, 50), "the decision stayed at risk after Re-affirm")
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "ROUND_HALF = 'even'" })
    vim.cmd.write()
    assert(vim.wait(20000, function()
      risk = ours("decision-at-risk")
      return risk ~= nil
    end, 50), "a new edit did not put the decision at risk again")
    local asked = {}
    local answers = { "Invoice totals round to mills", "Tax authorities want three decimals." }
    local input = vim.ui.input
    vim.ui.input = function(opts, on_confirm) -- the user types the new decision
      table.insert(asked, opts.prompt)
      on_confirm(answers[#asked])
    end
    local before = #notes
    apply(risk, "Supersede decision")
    local done = vim.wait(20000, function()
      return #notes > before
    end, 50)
    vim.ui.input = input
    assert(done, "Supersede said nothing")
    out.asked = asked
    out.superseded = notes[#notes].msg
    out.audit = sync("neuralmind/decisions/audit", vim.empty_dict())
    vim.fn.system({ "git", "-C", ws, "checkout", "--", "billing/invoice.py" })
    vim.cmd("edit!") -- back to the committed file
    return out
  end)

  step("memory", function()
    edit("billing/invoice.py")
    local before = #notes
    vim.cmd("NeuralMindRemember Invoice totals are rounded once, after tax")
    assert(vim.wait(15000, function()
      return #notes > before
    end, 20), "NeuralMindRemember printed nothing")
    local remembered = notes[#notes].msg
    vim.cmd("NeuralMindRecall how are invoice totals rounded?")
    local lines
    assert(vim.wait(20000, function()
      local buf = vim.fn.bufnr("neuralmind://context")
      if buf == -1 then
        return false
      end
      lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      return table.concat(lines, "\n"):find("rounded once", 1, true) ~= nil
    end, 20), "the recalled memory never showed")
    return { remembered = remembered, lines = lines }
  end)

  step("status", function()
    local before = #notes
    vim.cmd("NeuralMindStatus")
    assert(vim.wait(15000, function()
      return #notes > before
    end, 20), "NeuralMindStatus printed nothing")
    return { text = notes[#notes].msg, statusline = nm.statusline() }
  end)

  step("observatory", function()
    -- The endpoint is on (`mcp = true`): the page opens, through vim.ui.open.
    assert(vim.wait(30000, function()
      return not is_nil(sync("neuralmind/status", vim.empty_dict()).mcp_endpoint)
    end, 100), "the loopback endpoint is not up")
    local opened
    vim.ui.open = function(url)
      opened = url
      return nil, nil
    end
    vim.cmd("NeuralMindObservatory debug")
    assert(vim.wait(15000, function()
      return opened ~= nil
    end, 20), "NeuralMindObservatory opened nothing")
    local shown = notes[#notes].msg
    -- The setting turned off (as a user would): no endpoint, no page, and it says why.
    local client = assert(nm.client())
    local settings = { neuralmind = { debounce_seconds = 0.2, mcp = false, budget = 1200 } }
    if has_011 then
      client:notify("workspace/didChangeConfiguration", { settings = settings })
    else
      client.notify("workspace/didChangeConfiguration", { settings = settings })
    end
    assert(vim.wait(30000, function()
      return is_nil(sync("neuralmind/status", vim.empty_dict()).mcp_endpoint)
    end, 100), "the endpoint did not stop after mcp = false")
    local before = #notes
    vim.cmd("NeuralMindObservatory")
    assert(vim.wait(15000, function()
      return #notes > before
    end, 20), "NeuralMindObservatory said nothing with the endpoint off")
    return { refused = notes[#notes], opened = opened, shown = shown }
  end)
end

results.notes = notes
write()
vim.cmd("qa!")
