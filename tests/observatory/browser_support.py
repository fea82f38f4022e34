"""Headless Chromium for the page tests: Debian's browser (never `playwright install`),
driven by Playwright's async API, and where screenshots go."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM = os.environ.get("NEURALMIND_CHROMIUM", "/usr/bin/chromium")
# No sandbox (containers), software GL, and none of the browser's own network traffic.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-default-apps",
                 "--no-first-run", "--disable-domain-reliability", "--metrics-recording-only"]
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("NEURALMIND_TEST_OUTPUT", ROOT / ".test-output")) / "observatory"

# Records what the page must never do: run injected markup, break its own CSP.
WATCH_PAGE = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
  e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


def chromium_or_fail() -> str:
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        raise RuntimeError(f"the page tests need Debian's Chromium at {CHROMIUM} "
                           "(apt-get install chromium; .ci/run installs it)")
    return CHROMIUM
