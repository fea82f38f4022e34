#!/usr/bin/env bash
# Build, lint, test and package the VS Code extension. Needs Node >= 20 and the npm
# registry (or a warm npm cache). The integration tests use $NEURALMIND_LSP or the
# `neuralmind-lsp` on PATH (the project's venv when .ci/run has activated it).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

# --ignore-scripts: no install script is needed (esbuild's binary comes as an optional
# package), and keytar's native build (an optional dependency of vsce) is never wanted.
npm ci --prefer-offline --ignore-scripts --no-audit --no-fund --loglevel=error
npm run --silent build
npm run --silent lint
npm test
npm run --silent package
ls -l neuralmind.vsix
echo "editors/vscode: ci.sh finished in $(( $(date +%s) - start )) s"
