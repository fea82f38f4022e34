-- NeuralMind for Neovim (>= 0.10): starts `neuralmind-lsp --stdio` on the built-in client
-- for the project root and offers the server's custom requests as user commands.
-- Stale-decision diagnostics arrive through vim.diagnostic like any server's.
local M = {}

local NAME = "neuralmind"

M.config = {
  -- Command that starts the server; the first element must be executable.
  cmd = { "neuralmind-lsp", "--stdio" },
  -- Files or folders that mark a project root (first match walking up from the buffer).
  root_markers = { ".neuralmind", ".neuralmind.yaml", ".git", "pyproject.toml", "package.json", "go.mod", "Cargo.toml" },
  -- Filetypes to attach to; nil means every file buffer.
  filetypes = nil,
  -- Forwarded to the server under "neuralmind" (initializationOptions and settings):
  -- budget, exclude (globs), learning (bool), debounce_seconds, mcp (bool).
  settings = {},
  -- How many next-likely files to ask for.
  next_k = 10,
  -- Start the server from BufReadPost/FileType autocmds. Set false when the server is
  -- started by vim.lsp.enable("neuralmind") (editors/nvim/lsp/neuralmind.lua) instead.
  autostart = true,
  -- Where :NeuralMindAsk opens its scratch buffer: a command run before showing it.
  ask_split = "botright split",
  -- Tell the server what the editor shows (current file, selection, visible lines, open
  -- files, diagnostics) so agents can see it over MCP and reveal code here. Also sent to the
  -- server as the `editorState` setting: false turns both off.
  editor_state = true,
  -- Quiet time before the editor state is sent (cursor moves come in bursts).
  editor_state_debounce_ms = 300,
}

-- The most an editor-state report carries (the server clips the same way).
local SELECTION_CHARS = 2000
local MAX_FILES = 200
local MAX_DIAGNOSTICS = 200

local function notify(msg, level)
  vim.notify("NeuralMind: " .. msg, level or vim.log.levels.INFO)
end

--- An agent's note with a range it revealed (the range itself arrives as window/showDocument).
function M.reveal_note(_, params)
  if type(params) == "table" and type(params.note) == "string" then
    notify("(agent) " .. params.note)
  end
end

--- Client capabilities: the defaults, plus "this client shows an agent's reveal notes".
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = vim.tbl_extend("force", caps.experimental or {}, { neuralmind = { revealNote = true } })
  return caps
end

--- The LSP config table for vim.lsp.start / vim.lsp.config.
function M.lsp_config(root_dir)
  local server_settings = vim.tbl_extend("force", { editor_state = M.config.editor_state }, M.config.settings)
  local settings = { [NAME] = server_settings }
  return {
    name = NAME,
    cmd = M.config.cmd,
    root_dir = root_dir,
    init_options = settings,
    settings = settings,
    capabilities = M.capabilities(),
    handlers = { ["neuralmind/revealNote"] = M.reveal_note },
  }
end

local warned_missing = false

--- Starts (or reuses) the server for the buffer's project root and attaches the buffer.
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local fname = vim.api.nvim_buf_get_name(bufnr)
  if fname == "" or fname:match("^%a[%w+.-]*://") then
    return nil
  end
  local ft = vim.bo[bufnr].filetype
  if M.config.filetypes and not vim.tbl_contains(M.config.filetypes, ft) then
    return nil
  end
  if vim.fn.executable(M.config.cmd[1]) ~= 1 then
    if not warned_missing then
      warned_missing = true
      notify(
        ("`%s` was not found on PATH. Install the neuralmind Python package in the environment on your PATH"
          .. " (from a NeuralMind checkout: `python3 -m pip install .`), or pass cmd = { '/path/to/neuralmind-lsp', '--stdio' } to setup()."):format(
          M.config.cmd[1]
        ),
        vim.log.levels.ERROR
      )
    end
    return nil
  end
  local root = vim.fs.root(bufnr, M.config.root_markers) or vim.fs.dirname(fname)
  return vim.lsp.start(M.lsp_config(root), { bufnr = bufnr })
end

--- The neuralmind client for a buffer, else any running neuralmind client.
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local attached = vim.lsp.get_clients({ name = NAME, bufnr = bufnr })
  if attached[1] then
    return attached[1]
  end
  return vim.lsp.get_clients({ name = NAME })[1]
end

-- Neovim 0.11 made client methods colon-calls; 0.10 has dot-calls.
local has_011 = vim.fn.has("nvim-0.11") == 1

local function request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- Sends a neuralmind/* request; `on_result(result)` runs on success, errors are notified.
function M.request(method, params, on_result, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    notify("the server is not running (open a file of the project first)", vim.log.levels.WARN)
    return false
  end
  -- An empty Lua table would encode as a JSON array; the server wants an object.
  if params == nil or (type(params) == "table" and next(params) == nil) then
    params = vim.empty_dict()
  end
  request(client, method, params, function(err, result)
    if err then
      notify(("%s failed: %s"):format(method, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    on_result(result, client)
  end, bufnr)
  return true
end

local function buf_uri(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  return vim.uri_from_bufnr(bufnr)
end

local function is_nil(v)
  return v == nil or v == vim.NIL
end

-- :NeuralMindAsk ------------------------------------------------------------------------

local CONTEXT_BUF = "neuralmind://context"

--- Lines of the scratch buffer for a context answer.
function M.context_lines(question, result)
  local layers = {}
  for _, name in ipairs({ "L0", "L1", "L2", "L3" }) do
    local n = type(result.layers) == "table" and result.layers[name]
    if not is_nil(n) and n then
      table.insert(layers, ("%s %d"):format(name, n))
    end
  end
  local meta = ("<!-- %d tokens%s%s -->"):format(
    result.tokens or 0,
    #layers > 0 and (" · " .. table.concat(layers, " · ")) or "",
    is_nil(result.mode) and "" or (" · " .. result.mode)
  )
  local lines = { "# " .. question, meta }
  if result.partial == true then
    table.insert(lines, "<!-- indexing is still running: this answer uses what is indexed so far -->")
  end
  table.insert(lines, "")
  vim.list_extend(lines, vim.split(result.context or "", "\n", { plain = true }))
  return lines
end

local function show_context(question, result)
  local buf = vim.fn.bufnr(CONTEXT_BUF)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, CONTEXT_BUF)
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = "markdown"
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.context_lines(question, result))
  vim.bo[buf].modifiable = false
  vim.b[buf].neuralmind_result = result
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd(M.config.ask_split)
    vim.api.nvim_win_set_buf(0, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  notify(("context: %d tokens (yank it with ggyG)"):format(result.tokens or 0))
  return buf
end

--- Calls `send` with the trimmed `question`, or asks for one with `prompt` when it is empty.
local function with_question(question, prompt, send)
  local function go(q)
    if q and vim.trim(q) ~= "" then
      send(vim.trim(q))
    end
  end
  if question and vim.trim(question) ~= "" then
    go(question)
  else
    vim.ui.input({ prompt = prompt }, go)
  end
end

--- Asks for the context of `question` (prompts when nil or empty).
function M.ask(question)
  local bufnr = vim.api.nvim_get_current_buf()
  with_question(question, "NeuralMind: ", function(q)
    M.request("neuralmind/context", { query = q, uri = buf_uri(bufnr) }, function(result)
      show_context(q, result)
    end, bufnr)
  end)
end

-- :NeuralMindRecall / :NeuralMindRemember ------------------------------------------------

--- Recalls the memories a question needs into the context buffer (prompts when empty).
function M.recall(question)
  local bufnr = vim.api.nvim_get_current_buf()
  with_question(question, "NeuralMind recall: ", function(q)
    M.request("neuralmind/memory/recall", { query = q }, function(result)
      if is_nil(result.atoms) or #result.atoms == 0 then
        notify("no memories for: " .. q .. (is_nil(result.notice) and "" or (" (" .. result.notice .. ")")))
        return
      end
      show_context(q, { context = result.context, tokens = result.tokens, mode = result.mode })
    end, bufnr)
  end)
end

--- Remembers `text` as a note about the current file (a person's memory: active at once).
function M.remember(text)
  if not text or vim.trim(text) == "" then
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = buf_uri(bufnr)
  M.request("neuralmind/memory/remember", { text = vim.trim(text), type = "note", uris = uri and { uri } or {} },
    function(atom)
      notify(("remembered %s: %s"):format(atom.id, atom.label))
    end, bufnr)
end

-- :NeuralMindNext -----------------------------------------------------------------------

function M.next_likely()
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = buf_uri(bufnr)
  if not uri then
    notify("open a file of the project first", vim.log.levels.WARN)
    return
  end
  M.request("neuralmind/nextLikely", { uri = uri, k = M.config.next_k }, function(items)
    if is_nil(items) or #items == 0 then
      notify("no next-likely files yet: they are learned from the files you edit together")
      return
    end
    table.sort(items, function(a, b)
      return a.probability > b.probability
    end)
    vim.ui.select(items, {
      prompt = "NeuralMind: next likely files",
      format_item = function(item)
        return ("%s  (%d%%)"):format(vim.fn.fnamemodify(vim.uri_to_fname(item.uri), ":~:."), math.floor(item.probability * 100 + 0.5))
      end,
    }, function(choice)
      if choice then
        vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(choice.uri)))
      end
    end)
  end, bufnr)
end

-- :NeuralMindDecisions ------------------------------------------------------------------

local QF_TYPE = { STALE = "W", INVALIDATED = "I", ACTIVE = "N" }

--- Quickfix items for decision records: one per governed file (or one without a file).
function M.decision_items(records, root)
  local items = {}
  for _, d in ipairs(records) do
    local status = tostring(d.status or "?")
    local text = ("[%s] %s (%s)"):format(status, d.title or "", d.id or "?")
    local files = is_nil(d.files_affected) and {} or d.files_affected
    if #files == 0 then
      table.insert(items, { text = text, type = QF_TYPE[status] or "" })
    end
    for _, f in ipairs(files) do
      local path = f
      if not f:match("^/") and not f:match("^%a:[/\\]") then
        path = vim.fs.joinpath(root, f)
      end
      table.insert(items, { filename = path, lnum = 1, col = 1, text = text, type = QF_TYPE[status] or "" })
    end
  end
  local rank = { W = 1, I = 2, N = 3 }
  table.sort(items, function(a, b)
    local ra, rb = rank[a.type] or 4, rank[b.type] or 4
    if ra ~= rb then
      return ra < rb
    end
    return a.text < b.text
  end)
  return items
end

--- Fills the quickfix list with decisions; `status` (ACTIVE/STALE/INVALIDATED) filters.
function M.decisions(status)
  local wanted = status and status ~= "" and status:upper() or nil
  M.request("neuralmind/decisions/audit", {}, function(records, client)
    records = is_nil(records) and {} or records
    if wanted then
      records = vim.tbl_filter(function(d)
        return tostring(d.status):upper() == wanted
      end, records)
    end
    local items = M.decision_items(records, client.root_dir or vim.fn.getcwd())
    vim.fn.setqflist({}, " ", { title = "NeuralMind decisions" .. (wanted and (" (" .. wanted .. ")") or ""), items = items })
    if #items == 0 then
      notify("no decisions" .. (wanted and (" with status " .. wanted) or " recorded yet"))
    else
      vim.cmd("copen")
    end
  end)
end

-- :NeuralMindStatus ---------------------------------------------------------------------

local function ago(ts)
  if is_nil(ts) then
    return "never"
  end
  local t = tonumber(ts)
  if not t then
    return tostring(ts)
  end
  if t > 1e11 then
    t = t / 1000
  end
  local s = math.max(0, os.time() - t)
  if s < 45 then
    return "just now"
  elseif s < 5400 then
    return ("%d min ago"):format(math.max(1, math.floor(s / 60 + 0.5)))
  elseif s < 129600 then
    return ("%d h ago"):format(math.floor(s / 3600 + 0.5))
  end
  return ("%d d ago"):format(math.floor(s / 86400 + 0.5))
end

--- Status fields as lines (what :NeuralMindStatus shows).
function M.status_lines(st)
  local lines = {}
  if not is_nil(st.indexing) then
    table.insert(lines, ("Indexing: %s %s/%s"):format(st.indexing.phase, st.indexing.done, st.indexing.total))
  end
  table.insert(lines, ("Nodes: %s (embedded: %s)"):format(st.nodes or "?", st.embedded_nodes or "?"))
  table.insert(lines, "Last full build: " .. ago(st.last_full_build))
  table.insert(lines, "Last update: " .. ago(st.last_incremental_update))
  table.insert(lines, ("Files pending: %s"):format(st.files_pending or 0))
  if not is_nil(st.model_state) then
    table.insert(lines, "Embedding model: " .. tostring(st.model_state))
  end
  table.insert(lines, "MCP endpoint: " .. (is_nil(st.mcp_endpoint) and "off" or tostring(st.mcp_endpoint)))
  return lines
end

function M.status()
  M.request("neuralmind/status", {}, function(st, client)
    M.last_status = st
    notify(("%s\n%s"):format(client.root_dir or "", table.concat(M.status_lines(st), "\n")))
  end)
end

--- A short string for a statusline: indexing progress or node count (from the last status).
function M.statusline()
  local st = M.last_status
  if not st then
    return ""
  end
  if not is_nil(st.indexing) and st.indexing.total and st.indexing.total > 0 then
    return ("NM %s %d%%"):format(st.indexing.phase, math.floor(100 * st.indexing.done / st.indexing.total))
  end
  return ("NM %s nodes"):format(st.nodes or "?")
end

-- :NeuralMindObservatory ---------------------------------------------------------------

--- Whether `url` is a login URL of the observatory on loopback (the only kind opened).
function M.is_observatory_url(url)
  if type(url) ~= "string" then
    return false
  end
  for _, host in ipairs({ "127%.0%.0%.1", "localhost" }) do
    if url:match("^http://" .. host .. ":%d+/observatory/login%?") then
      return true
    end
  end
  return false
end

--- Open the observatory: the server mints a one-time login URL for the page it serves on
--- loopback; it opens in the browser (vim.ui.open), and is printed when that fails.
function M.observatory(view)
  local params = (view and view ~= "") and { view = view } or vim.empty_dict()
  M.request("neuralmind/observatory", params, function(res)
    local url = type(res) == "table" and res.url or nil
    if not M.is_observatory_url(url) then
      notify("the server gave no observatory URL: " .. vim.inspect(res), vim.log.levels.ERROR)
      return
    end
    local ok, err = pcall(function()
      local _, open_err = vim.ui.open(url)
      assert(not open_err, open_err)
    end)
    if ok then
      -- the link too: over SSH the browser may open on no screen (it works once either way)
      notify(("observatory opened in the browser: %s"):format(url))
    else
      notify(("open %s in a browser (the link works once): %s"):format(url, tostring(err)), vim.log.levels.WARN)
    end
  end)
end

-- :NeuralMindReview ---------------------------------------------------------------------

local function file_path(root, rel)
  if rel:match("^/") or rel:match("^%a:[/\\]") then
    return rel
  end
  return vim.fs.joinpath(root, rel)
end

--- Quickfix items for a review: each probably-missed file, then each decision at risk.
function M.review_items(result, root)
  local items = {}
  for _, m in ipairs(result.missing or {}) do
    local b = (m.because or {})[1] or {}
    table.insert(items, {
      filename = file_path(root, m.file),
      lnum = 1,
      col = 1,
      type = "I",
      text = ("probably missed (%d%%): usually changes with %s (%s of %s %s)"):format(
        math.floor((m.confidence or 0) * 100 + 0.5), tostring(b.changed_file), tostring(b.together), tostring(b.of), tostring(b.source)),
    })
  end
  for _, d in ipairs(result.decisions_at_risk or {}) do
    table.insert(items, {
      filename = file_path(root, d.file),
      lnum = d.line or 1,
      col = 1,
      type = "W",
      text = ("governed by '%s' (%s): %s; reconsider before committing"):format(d.title or "", d.id or "?", d.reason or ""),
      user_data = { decision = d.id },
    })
  end
  return items
end

--- Unsaved buffers of the client's workspace, sent with the review so they count as they are.
local function unsaved_buffers(client)
  local out = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified and buf_uri(buf) then
      local name = vim.api.nvim_buf_get_name(buf)
      if client.root_dir == nil or vim.startswith(name, client.root_dir) then
        local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
        table.insert(out, { uri = buf_uri(buf), text = text })
      end
    end
  end
  return out
end

--- Fills the quickfix list with what the pending change probably misses and the decisions
--- it puts at risk (`base`: compare with the merge base of that ref, default HEAD).
function M.review(base)
  local client = M.client()
  if not client then
    notify("the server is not running (open a file of the project first)", vim.log.levels.WARN)
    return
  end
  local params = { buffers = unsaved_buffers(client) }
  if base and base ~= "" then
    params.base = base
  end
  M.request("neuralmind/review", params, function(result, c)
    local items = M.review_items(result, c.root_dir or vim.fn.getcwd())
    local changed = #(result.changed_files or {}) + #(result.unsaved_files or {})
    vim.fn.setqflist({}, " ", { title = ("NeuralMind review (%d changed against %s)"):format(changed, result.base_ref or "HEAD"), items = items })
    if #items == 0 then
      notify("nothing usually changed with your changes is missing, and no decision is at risk")
    else
      vim.cmd("copen")
    end
  end)
end

--- The code action "Supersede decision" carries [id]: ask for the new title and rationale.
local function supersede(command, ctx)
  local args = command.arguments or {}
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return
  end
  vim.ui.input({ prompt = "New decision title: " }, function(title)
    if not title or vim.trim(title) == "" then
      return
    end
    vim.ui.input({ prompt = "Why it replaces the old one: " }, function(rationale)
      if not rationale or vim.trim(rationale) == "" then
        return
      end
      request(client, "workspace/executeCommand", {
        command = command.command,
        arguments = { args[1], vim.trim(title), vim.trim(rationale) },
      }, function(err, result)
        if err then
          notify("supersede failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
        else
          notify(("recorded '%s', superseding '%s'"):format(result.title, result.superseded.title))
        end
      end, ctx.bufnr)
    end)
  end)
end

-- The editor state, for agents -------------------------------------------------------------

--- What the editor shows now, as the `neuralmind/editorState` params (0-based positions).
function M.editor_state(root)
  local buf = vim.api.nvim_get_current_buf()
  local inside = function(name)
    return name ~= "" and (root == nil or vim.startswith(name, root))
  end
  local open = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if #open < MAX_FILES and vim.bo[b].buflisted and buf_uri(b) and inside(vim.api.nvim_buf_get_name(b)) then
      table.insert(open, buf_uri(b))
    end
  end
  local state = { activeFile = vim.NIL, selection = vim.NIL, visibleRanges = {}, openFiles = open, diagnostics = {} }
  local uri = buf_uri(buf)
  if not uri or not inside(vim.api.nvim_buf_get_name(buf)) then
    return state
  end
  state.activeFile = uri
  local mode = vim.api.nvim_get_mode().mode
  local first, last
  if mode:match("^[vV\22]") then
    first, last = vim.fn.line("v"), vim.fn.line(".")
    if first > last then
      first, last = last, first
    end
  else
    first = vim.fn.line(".")
    last = first
  end
  local lines = vim.api.nvim_buf_get_lines(buf, first - 1, last, false)
  local text = mode:match("^[vV\22]") and table.concat(lines, "\n") or ""
  state.selection = {
    start = { line = first - 1, character = 0 },
    ["end"] = { line = last - 1, character = #(lines[#lines] or "") },
    text = text:sub(1, SELECTION_CHARS),
  }
  state.visibleRanges = { { start = { line = vim.fn.line("w0") - 1, character = 0 }, ["end"] = { line = vim.fn.line("w$") - 1, character = 0 } } }
  for i, d in ipairs(vim.diagnostic.get(buf)) do
    if i > MAX_DIAGNOSTICS then
      break
    end
    table.insert(state.diagnostics, {
      range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col } },
      message = d.message,
      severity = d.severity,
      source = d.source,
      code = d.code ~= nil and tostring(d.code) or nil,
    })
  end
  return state
end

local last_sent = {}
local timer = nil

--- Sends the editor state to each running neuralmind client, when it changed.
function M.send_editor_state()
  if not M.config.editor_state then
    return
  end
  for _, client in ipairs(vim.lsp.get_clients({ name = NAME })) do
    local params = M.editor_state(client.root_dir)
    local text = vim.json.encode(params)
    if last_sent[client.id] ~= text then
      last_sent[client.id] = text
      if has_011 then
        client:notify("neuralmind/editorState", params)
      else
        client.notify("neuralmind/editorState", params)
      end
    end
  end
end

local function schedule_editor_state()
  if not M.config.editor_state then
    return
  end
  if timer == nil then
    timer = vim.uv.new_timer()
  end
  timer:stop()
  timer:start(M.config.editor_state_debounce_ms, 0, vim.schedule_wrap(M.send_editor_state))
end

-- setup ---------------------------------------------------------------------------------

function M.setup(opts)
  opts = opts or {}
  M.config = vim.tbl_deep_extend("force", M.config, opts)
  -- Lists replace the defaults instead of merging index by index.
  for _, key in ipairs({ "cmd", "root_markers", "filetypes" }) do
    if opts[key] ~= nil then
      M.config[key] = opts[key]
    end
  end
  local group = vim.api.nvim_create_augroup("neuralmind", { clear = true })
  if M.config.autostart then
    vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "FileType" }, {
      group = group,
      callback = function(ev)
        M.start(ev.buf)
      end,
    })
  end
  local cmd = vim.api.nvim_create_user_command
  cmd("NeuralMindAsk", function(a)
    M.ask(a.args)
  end, { nargs = "*", desc = "NeuralMind: context for a question, in a scratch buffer" })
  cmd("NeuralMindNext", M.next_likely, { nargs = 0, desc = "NeuralMind: pick a next-likely file" })
  cmd("NeuralMindRecall", function(a)
    M.recall(a.args)
  end, { nargs = "*", desc = "NeuralMind: memories for a question, in a scratch buffer" })
  cmd("NeuralMindRemember", function(a)
    M.remember(a.args)
  end, { nargs = "+", desc = "NeuralMind: remember a note about the current file" })
  cmd("NeuralMindDecisions", function(a)
    M.decisions(a.args)
  end, {
    nargs = "?",
    complete = function()
      return { "ACTIVE", "STALE", "INVALIDATED" }
    end,
    desc = "NeuralMind: decisions in the quickfix list",
  })
  cmd("NeuralMindStatus", M.status, { nargs = 0, desc = "NeuralMind: index freshness" })
  cmd("NeuralMindObservatory", function(a)
    M.observatory(a.args)
  end, {
    nargs = "?",
    complete = function()
      return { "brain", "ask", "memory", "decisions", "dreams", "savings", "debug" }
    end,
    desc = "NeuralMind: open the observatory page in the browser",
  })
  cmd("NeuralMindReview", function(a)
    M.review(a.args)
  end, { nargs = "?", desc = "NeuralMind: missed files and decisions at risk, in the quickfix list" })
  vim.lsp.commands["neuralmind.decision.supersede"] = supersede
  vim.api.nvim_create_autocmd({ "BufEnter", "CursorMoved", "CursorMovedI", "ModeChanged", "WinScrolled", "DiagnosticChanged", "BufAdd", "BufDelete", "LspAttach" }, {
    group = group,
    callback = schedule_editor_state,
  })
  -- Buffers already open when setup runs (lazy loading).
  if M.config.autostart then
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) then
        M.start(buf)
      end
    end
  end
end

return M
