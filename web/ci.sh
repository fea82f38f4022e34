#!/usr/bin/env bash
# The observatory's part of .ci/run (issue #19):
# 1. Debian's Chromium, which the page tests in pytest drive through Playwright (never
#    `playwright install`: it would download a browser);
# 2. the page rebuilt from web/ with the pinned toolchain (package-lock.json), type-checked,
#    and compared with the committed bundle in neuralmind/observatory/static: a change to
#    web/src must ship its build (pip installs the bundle; it never needs Node).
set -euo pipefail
cd "$(dirname "$0")"
start=$(date +%s)

if ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed"; then
  echo "observatory: apt-get install chromium"
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo "sudo")
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends chromium
fi

npm ci --prefer-offline --no-audit --no-fund --loglevel=error
npm run --silent check
npm run --silent build
static=../neuralmind/observatory/static
if ! git diff --quiet HEAD -- "$static" || [ -n "$(git ls-files --others --exclude-standard -- "$static")" ]; then
  echo "observatory: the committed bundle differs from what web/ builds:" >&2
  git diff --stat HEAD -- "$static" >&2
  git ls-files --others --exclude-standard -- "$static" >&2
  echo "run 'cd web && npm ci && npm run build' and commit neuralmind/observatory/static" >&2
  exit 1
fi
echo "observatory: bundle reproduced from web/ in $(( $(date +%s) - start )) s"
