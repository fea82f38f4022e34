-- NeuralMind for Neovim >= 0.11's native config: with editors/nvim on 'runtimepath',
-- `vim.lsp.enable("neuralmind")` starts the server; override fields with vim.lsp.config().
-- The user commands (:NeuralMindAsk ...) come from require("neuralmind").setup().
return {
  cmd = { "neuralmind-lsp", "--stdio" },
  root_markers = { ".neuralmind", ".neuralmind.yaml", ".git", "pyproject.toml", "package.json", "go.mod", "Cargo.toml" },
  init_options = { neuralmind = {} },
  settings = { neuralmind = {} },
  capabilities = require("neuralmind").capabilities(),
  handlers = { ["neuralmind/revealNote"] = require("neuralmind").reveal_note },
}
