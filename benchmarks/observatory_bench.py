"""The observatory's figures: the event bus, and the page served by the real language server.

    python benchmarks/observatory_bench.py [--repo rich-13.7.1] [--tmp DIR] [--saves 30]

Prints (and with --json writes):
- publish cost in µs: nobody listening, the log writer on, writer + a subscriber (target:
  <= 100 µs with the writer on);
- first meaningful paint of the Brain view (navigation start to the graph's first frame,
  the page's `brain-painted` mark), in headless Chromium (target: rich <= 1 s, whole
  Django <= 3 s);
- pulse latency: an event's time (the server's clock) to its pulse on the page, for
  didSaves sent through the LSP (target <= 250 ms), and didSave-sent to pulse;
- the server's RSS with the endpoint only, then with the page open and idle (target:
  <= +20 MB);
- the event loop's largest stall during lsp_bench's edit phase (1,000 edits), alternately
  with no page and with the page open and streaming (the stall target: < 20 ms).
Machine load is printed beside the figures: they are noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsp_bench import (
    MCP_ON,
    Client,
    copy_repo,
    pct,
    simulate_edits,
    stall_culprits,
    stalls_between,
)
from playwright.async_api import Browser, Page, async_playwright

from neuralmind.events import EventBus
from neuralmind.events.log import EventLogWriter

CHROMIUM = os.environ.get("NEURALMIND_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-default-apps",
                 "--no-first-run", "--disable-domain-reliability", "--metrics-recording-only"]
VIEWPORT = {"width": 1400, "height": 860}


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def publish_costs(n: int = 20_000, repeats: int = 3) -> dict[str, float]:
    """Median µs per publish over `repeats` runs of `n`, in three configurations."""
    out: dict[str, float] = {}
    tmp = Path(tempfile.mkdtemp(prefix="nm-bus-bench-"))
    try:
        for name in ("idle", "writer", "writer_and_subscriber"):
            runs = []
            for _ in range(repeats):
                bus = EventBus()
                if name != "idle":
                    bus.set_writer(EventLogWriter(tmp, max_bytes=64 * 1024 * 1024))
                if name == "writer_and_subscriber":
                    bus.subscribe(lambda e: None)
                t0 = time.perf_counter()
                for i in range(n):
                    bus.publish("query", source="lsp-1", question="how are invoices totalled",
                                files=["app/billing.py", "app/tax.py"], tokens=1200, n=i)
                runs.append((time.perf_counter() - t0) / n * 1e6)
            out[f"publish_{name}_us"] = round(statistics.median(runs), 2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out["publish_load"] = load()
    return out


async def login_url(c: Client, view: str | None = None) -> str:
    result = await c.request("neuralmind/observatory", {"view": view} if view else {})
    return str(result["url"])


async def first_paint(page: Page, url: str) -> float:
    """ms from navigation start to the Brain view's first frame with the graph."""
    await page.goto(url)
    await page.wait_for_function("() => document.body.dataset.brain === 'painted'",
                                 timeout=120_000)
    return float(await page.evaluate(
        "() => performance.getEntriesByName('brain-painted')[0].startTime"))


async def pulse_latencies(c: Client, page: Page, root: Path, files: list[str],
                          rounds: int) -> tuple[list[float], list[float]]:
    """(event -> pulse ms, didSave sent -> pulse ms) for `rounds` saves."""
    bus_to_pixel, save_to_pixel = [], []
    for i in range(rounds):
        rel = files[i % len(files)]
        sent = time.time()
        c.notify("textDocument/didSave", {"textDocument": {"uri": (root / rel).as_uri()}})
        selector = (f'#pulse-log li[data-kind="file_activity"][data-node="{rel}"]'
                    f'[data-ts]')
        found = await page.wait_for_function(
            """([sel, after]) => { const li = [...document.querySelectorAll(sel)]
                   .find(x => Number(x.dataset.ts) >= after);
                 return li ? [Number(li.dataset.ts), Number(li.dataset.shown)] : null; }""",
            arg=[selector, sent - 0.001], timeout=10_000)
        ts, shown = await found.json_value()
        bus_to_pixel.append((shown - ts) * 1000)
        save_to_pixel.append((shown - sent) * 1000)
        await asyncio.sleep(0.3)
    return bus_to_pixel, save_to_pixel


async def docs_screenshots(c: Client, page: Page, root: Path, files: list[str],
                           out: Path) -> None:
    """One screenshot per view, of a workspace with decisions in every state, questions
    asked and files saved: the README's pictures (docs/observatory/)."""
    out.mkdir(parents=True, exist_ok=True)
    titles = ["Console output goes through one render pipeline",
              "Styles are parsed once and cached", "Tables measure before they render"]
    ids = []
    for title, rel in zip(titles, files, strict=False):
        record = await c.request("neuralmind/decisions/record", {
            "title": title, "rationale": "Measured; the alternatives were slower.", "files": [rel]})
        ids.append(record["id"])
    await c.request("workspace/executeCommand", {"command": "neuralmind.decision.invalidate",
                                                 "arguments": [ids[2], "superseded by the new layout"]})
    await asyncio.sleep(1.1)           # the commit comes after the decision, to the second
    path = root / files[1]
    path.write_text(path.read_text() + "\n\ndef screenshot_marker():\n    return 1\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    subprocess.run(["git", "commit", "-qam", "touch a governed file"], cwd=root, env=env,
                   check=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        audit = await c.request("neuralmind/decisions/audit", {})
        if any(d["status"] == "STALE" for d in audit):
            break
        await asyncio.sleep(0.5)

    await remember_some(c, files)

    async def view(name: str, ready: str) -> None:
        await page.evaluate("v => { location.hash = v }", name)
        await page.wait_for_selector(ready, timeout=30_000)
        await asyncio.sleep(1.0)

    await view("#ask", "#ask-question")
    await page.fill("#ask-question", "how does the console render a table?")
    await page.click("#ask-button")
    await page.wait_for_selector("#ask-hits tbody tr", timeout=60_000)
    await page.screenshot(path=str(out / "ask.png"))
    await view(f"#brain/{files[0]}", "#node-panel .node-name")
    for question in ("progress bar refresh rate", "syntax highlighting theme"):
        await c.request("neuralmind/context", {"query": question})
    for rel in files:
        c.notify("textDocument/didSave", {"textDocument": {"uri": (root / rel).as_uri()}})
    await page.click("#brain-fit")          # the whole graph, the file's panel still open
    await asyncio.sleep(0.6)
    await page.screenshot(path=str(out / "brain.png"))
    for name, ready in (("#decisions", "#decisions-board article"), ("#memory", "#memory-board *"),
                        ("#dreams", "#dream-diary *"), ("#savings", "#savings-body *"),
                        ("#debug", "#trace-rows tr")):
        await view(name, ready)
        await page.screenshot(path=str(out / f"{name[1:]}.png"))


async def remember_some(c: Client, files: list[str]) -> None:
    """Memory atoms in each state the Memory view shows: active ones (one rated useful, one
    pinned as a standing directive, an open loop), one proposed (the inbox) and one rated
    noise twice (archived)."""
    async def remember(text: str, kind: str, label: str, **more: Any) -> str:
        atom = await c.request("neuralmind/memory/remember",
                               {"text": text, "type": kind, "label": label, **more})
        return str(atom["id"])

    useful = await remember("Live displays redraw at most 12 times a second; faster only burns "
                            "CPU on slow terminals.", "lesson", "Cap the refresh rate",
                            hubs=["performance"], about=[files[0]])
    for _ in range(2):
        await c.request("neuralmind/memory/rate", {"id": useful, "verdict": "useful"})
    rule = await remember("Run the whole test suite before every commit.", "preference",
                          "Tests before commits")
    await c.request("neuralmind/memory/pin", {"id": rule})
    await remember("Styles are cached by their definition string.", "fact", "Style cache key",
                   hubs=["performance"], about=[files[1]])
    await remember("Find out why wide tables wrap one column too early.", "open_loop",
                   "Wide tables wrap early", about=[files[2]])
    await remember("Markup tags could be parsed with a regular expression.", "note",
                   "Markup by regex", proposed=True, about=[files[1]])
    noise = await remember("Someone said emoji widths are wrong on every terminal.", "note",
                           "Emoji widths rumour")
    for _ in range(2):
        await c.request("neuralmind/memory/rate", {"id": noise, "verdict": "noise"})


async def edit_phase_stall(c: Client, root: Path, files: list[str], edits: int,
                           results: dict[str, Any], name: str) -> float:
    t0 = time.monotonic()
    await simulate_edits(c, root, files, edits)
    await asyncio.sleep(2.5)               # the last batch is learned (and published)
    status = await c.request("neuralmind/status", {})
    worst = [s for s in stall_culprits(status, t0, 3) if s["at_s"] >= 0]
    results[f"{name}_culprits"] = worst
    return stalls_between(status, t0, time.monotonic())


async def run(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"repo": args.repo, **publish_costs()}
    tmp = Path(args.tmp) if args.tmp else Path(tempfile.mkdtemp(prefix="nm-obs-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    root = tmp / args.repo
    if not (root / ".neuralmind").is_dir():
        root = copy_repo(args.repo, tmp)
    env = {**os.environ, "NEURALMIND_LOOP_MONITOR": "1", "ORT_DISABLE_TELEMETRY": "1"}
    MCP_ON[0] = True
    log = open(args.server_log, "ab") if args.server_log else None  # noqa: SIM115
    c = Client(root, env, log)
    try:
        await c.start()
        await c.initialize()
        results["index_s"] = round(await c.wait_indexed(), 1)
        status = await c.request("neuralmind/status", {})
        results["files"], results["nodes"] = status["files"], status["nodes"]
        py_files = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                          if ".neuralmind" not in p.parts)
        by_size = sorted(py_files, key=lambda r: (root / r).stat().st_size)
        picks = [by_size[len(by_size) // 4], by_size[len(by_size) // 2], by_size[-1]]

        await asyncio.sleep(3)
        results["rss_endpoint_only_mb"] = round(c.rss_mb(), 1)
        async with async_playwright() as p:
            browser: Browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                       args=CHROMIUM_ARGS)
            page = await (await browser.new_context(viewport=VIEWPORT)).new_page()
            paints = [await first_paint(page, await login_url(c)) for _ in range(args.paints)]
            results["first_paint_ms"] = [round(x) for x in paints]
            results["first_paint_median_ms"] = round(statistics.median(paints))
            results["first_paint_load"] = load()
            bus, save = await pulse_latencies(c, page, root, picks, args.saves)
            results["pulse_event_to_page_p50_ms"] = round(statistics.median(bus), 1)
            results["pulse_event_to_page_p95_ms"] = round(pct(bus, 95), 1)
            results["pulse_didsave_to_page_p50_ms"] = round(statistics.median(save), 1)
            results["pulse_didsave_to_page_p95_ms"] = round(pct(save, 95), 1)
            results["pulse_load"] = load()
            await asyncio.sleep(10)                       # the page open and idle
            results["rss_page_open_idle_mb"] = round(c.rss_mb(), 1)
            results["rss_page_delta_mb"] = round(results["rss_page_open_idle_mb"]
                                                 - results["rss_endpoint_only_mb"], 1)
            # the edit phase, alternately with no page (about:blank: Chromium idle) and with
            # the page open on the streaming view, so both see the same machine load
            without, streaming = [], []
            for r in range(args.stall_repeats):
                await page.goto("about:blank")
                await asyncio.sleep(1)
                without.append(await edit_phase_stall(c, root, picks, args.edits, results,
                                                      f"edit_phase_without_page_{r}"))
                await page.goto(await login_url(c, args.stream_view))
                await page.wait_for_selector(f"#view-{args.stream_view}:not([hidden])")
                await asyncio.sleep(2)
                streaming.append(await edit_phase_stall(c, root, picks, args.edits, results,
                                                        f"edit_phase_page_streaming_{r}"))
            results["stream_view"] = args.stream_view
            results["edit_phase_max_stall_no_page_ms"] = [round(x, 1) for x in without]
            results["edit_phase_max_stall_page_streaming_ms"] = [round(x, 1) for x in streaming]
            results["events_on_page"] = await page.evaluate(
                "() => document.querySelectorAll('#pulse-log li').length")
            results["edit_phase_load"] = load()
            if args.screenshots:
                await docs_screenshots(c, page, root, picks, Path(args.screenshots))
            await browser.close()
        await c.stop()
    finally:
        if c.proc is not None and c.proc.returncode is None:
            c.proc.kill()
        if not args.keep and not args.tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", default="rich-13.7.1")
    parser.add_argument("--saves", type=int, default=30)
    parser.add_argument("--paints", type=int, default=3)
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--stall-repeats", type=int, default=3)
    parser.add_argument("--stream-view", default="brain",
                        help="the view open while the edit phase streams events")
    parser.add_argument("--tmp", default=None, help="work in this folder (kept; an indexed copy "
                                                    "there is reused) instead of a temp one")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    parser.add_argument("--server-log", default=None, help="append the server's stderr here")
    parser.add_argument("--screenshots", default=None,
                        help="afterwards, one screenshot per view into this folder (the README's)")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} not found: apt-get install chromium (or set NEURALMIND_CHROMIUM)")
    results = asyncio.run(run(args))
    for k, v in results.items():
        if k.endswith("_culprits"):
            print(k)
            for stall in v:
                print(f"  {stall['stall_ms']:6.1f} ms at {stall['at_s']} s")
                threads = stall["threads"] if isinstance(stall["threads"], dict) else {}
                for thread, frames in threads.items():
                    print(f"    {thread}: {' < '.join(reversed(frames))}")
            continue
        print(f"{k:42} {v}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
