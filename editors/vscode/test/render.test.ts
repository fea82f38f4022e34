// Rendering server answers: context panel HTML, status bar text, decisions, quick picks.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { contextPanelHtml, decisionMarkdown, groupDecisions, linkLocations, nextLikelyItems, relativeTime, reviewItems, reviewSummary, statusLines, statusView } from "../src/render";
import type { DecisionRecord } from "../src/protocol";

const NOW = Date.parse("2026-01-01T12:00:00Z");

test("the context panel escapes the context, shows tokens, layers and hits, and copies via the host", () => {
  const html = contextPanelHtml(
    "where is <auth>?",
    {
      context: "## L3\nsrc/auth.py:10 def login(user) -> \"</pre><script>alert(1)</script>\"",
      tokens: 1234,
      layers: { L0: 90, L1: 400, L2: 300, L3: 444 },
      mode: "hybrid",
      hits: [{ file: "src/auth.py", line: 10, symbol: "login", kind: "function", score: 0.9 }],
      partial: true,
    },
    { cspSource: "vscode-resource:", nonce: "abc123" },
  );
  assert.ok(!html.includes("<script>alert(1)"), "context must be escaped");
  assert.ok(html.includes("&lt;/pre&gt;&lt;script&gt;alert(1)"));
  assert.ok(html.includes("where is &lt;auth&gt;?"));
  assert.ok(html.includes("1,234 tokens"));
  assert.ok(html.includes("L0 90 · L1 400 · L2 300 · L3 444"));
  assert.ok(html.includes('data-file="src/auth.py" data-line="10"'));
  assert.ok(html.includes("src/auth.py:10"));
  assert.ok(html.includes("Indexing is still running"));
  assert.ok(html.includes("script-src 'nonce-abc123'"));
  assert.equal((html.match(/<script nonce="abc123">/g) ?? []).length, 1);
  assert.ok(html.includes('postMessage({ type: "copy" })'));
});

test("locations named in the context become links; everything else stays escaped text", () => {
  const html = linkLocations(
    "**f** (function) `shop/invoice.py:4-7`\n- `class C:` (shop/cache.py:5)\n`../etc/passwd:1` `a.py:2) <b>x</b>",
  );
  assert.ok(html.includes('`<a href="#" class="loc" data-file="shop/invoice.py" data-line="4" title="Open shop/invoice.py:4-7">shop/invoice.py:4-7</a>`'), html);
  assert.ok(html.includes('(<a href="#" class="loc" data-file="shop/cache.py" data-line="5" title="Open shop/cache.py:5">shop/cache.py:5</a>)'), html);
  assert.ok(html.includes("`class C:`"), "a code span without a location stays text");
  assert.ok(!html.includes('data-file="../etc/passwd"'), "no link climbs out of the folder");
  assert.ok(!html.includes('data-file="a.py"'), "mismatched delimiters are not a location");
  assert.ok(html.includes("&lt;b&gt;x&lt;/b&gt;"));
  assert.equal((html.match(/<a /g) ?? []).length, 2);
});

test("the panel uses theme colours only and is usable from the keyboard", () => {
  const html = contextPanelHtml("q", { context: "`a.py:3`", tokens: 1 }, { cspSource: "c", nonce: "n" });
  const style = html.slice(html.indexOf("<style>"), html.indexOf("</style>"));
  assert.ok(!/#[0-9a-f]{3,6}\b|rgb\(/i.test(style), "no hard-coded colour");
  assert.match(style, /:focus-visible[^{]*\{ outline: 1px solid var\(--vscode-focusBorder\)/);
  assert.match(html, /<button id="copy"[^>]*autofocus/);
  assert.ok(html.includes('data-file="a.py" data-line="3"'));
});

test("a complete answer has no partial warning", () => {
  const html = contextPanelHtml("q", { context: "x", tokens: 1 }, { cspSource: "c", nonce: "n" });
  assert.ok(!html.includes("Indexing is still running"));
});

test("status bar: indexing progress, then node count; warnings for keyword-only mode", () => {
  const indexing = statusView({ nodes: 10, indexing: { phase: "embedding", done: 25, total: 100 }, model_state: "loaded" }, NOW);
  assert.equal(indexing.text, "$(sync~spin) NeuralMind embedding 25%");
  const idle = statusView({ nodes: 12345, files_pending: 2, model_state: "not_loaded", last_incremental_update: (NOW - 120_000) / 1000 }, NOW);
  assert.equal(idle.text, "$(database) NeuralMind: 12,345 nodes indexed · 2 pending");
  assert.equal(idle.warning, false);
  assert.match(idle.tooltip, /Last update: 2 min ago/);
  const keywordOnly = statusView({ nodes: 5, model_state: "unavailable", model_error: "model files not found" }, NOW);
  assert.match(keywordOnly.tooltip, /Embedding model: unavailable \(keyword-only search\) — model files not found/);
  assert.ok(keywordOnly.text.startsWith("$(warning)"));
  assert.equal(keywordOnly.warning, true);
  assert.equal(statusView(undefined, NOW).warning, true);
  assert.equal(statusView({ nodes: 0 }, NOW).text, "$(database) NeuralMind: no index");
});

test("the status bar says fresh, or what is pending and unsaved", () => {
  const fresh = { head: "0123456789abcdef", index_generation: 7, dirty_files: [], unsaved_files: [], pending_files: [], counts: { dirty: 0, unsaved: 0, pending: 0 }, truncated: false };
  assert.equal(statusView({ nodes: 12, model_state: "loaded", freshness: fresh }, NOW).text, "$(database) NeuralMind: 12 nodes indexed · fresh");
  const busy = { ...fresh, unsaved_files: ["a.py"], pending_files: ["a.py", "b.py"], counts: { dirty: 3, unsaved: 1, pending: 2 } };
  const view = statusView({ nodes: 12, model_state: "loaded", freshness: busy }, NOW);
  assert.equal(view.text, "$(database) NeuralMind: 12 nodes indexed · 2 pending · 1 unsaved");
  assert.match(view.tooltip, /Fresh against: 0123456789, index generation 7/);
  assert.match(view.tooltip, /Unsaved buffers indexed: 1: a\.py/);
  const many = { ...busy, dirty_files: ["1", "2", "3", "4", "5", "6"], counts: { dirty: 40, unsaved: 1, pending: 2 } };
  assert.match(statusLines({ nodes: 1, freshness: many }, NOW).join("\n"), /Changed since HEAD: 40: 1, 2, 3, 4, 5 \(\+35 more\)/);
  const savings = { answers: 3, tokens_served: 3000, codebase_tokens: 300000, tokens_saved: 297000, ratio: 100, settled: 2, acted_on: 1, files_used_per_answer: 1.5, precision_at_5: 0.4 };
  const lines = statusLines({ nodes: 1, savings: { overall: savings, days: [], codebase_tokens_now: 100000 } }, NOW);
  assert.ok(lines.includes("Answers: 3, 3,000 tokens instead of 300,000 (100x fewer)"));
  const tiny = { ...savings, tokens_served: 706, codebase_tokens: 361, ratio: 0.5 };
  const tinyLines = statusLines({ nodes: 1, savings: { overall: tiny, days: [], codebase_tokens_now: 361 } }, NOW);
  assert.ok(tinyLines.includes("Answers: 3, 706 tokens instead of 361"));
  assert.ok(lines.includes("Used: 1.5 files per answer, precision@5 0.4 (1 answers acted on)"));
});

test("status lines name every freshness field", () => {
  const lines = statusLines(
    { last_full_build: "2026-01-01T09:00:00+00:00", last_incremental_update: null, files_pending: 0, files: 2, nodes: 3, embedded_nodes: 2, model_state: "loaded", mcp_endpoint: "http://127.0.0.1:1234/mcp", last_error: null },
    NOW,
  );
  assert.deepEqual(lines, [
    "Files: 2",
    "Nodes: 3 (embedded: 2)",
    "Last full build: 3 h ago",
    "Last update: never",
    "Files pending: 0",
    "Embedding model: loaded",
    "MCP endpoint: http://127.0.0.1:1234/mcp",
  ]);
});

test("relative times accept epoch seconds, epoch ms and ISO strings", () => {
  assert.equal(relativeTime(NOW / 1000 - 10, NOW), "just now");
  assert.equal(relativeTime(NOW - 5 * 60_000, NOW), "5 min ago");
  assert.equal(relativeTime(new Date(NOW - 3 * 86_400_000).toISOString(), NOW), "3 d ago");
  assert.equal(relativeTime("not a date", NOW), "never");
});

const rec = (id: string, title: string, status: string): DecisionRecord => ({ id, title, rationale: "because", status, files_affected: ["a.py"] });

test("decisions group by status in a fixed order, sorted by title", () => {
  const groups = groupDecisions([rec("3", "Zeta", "STALE"), rec("1", "Beta", "ACTIVE"), rec("2", "Alpha", "active"), rec("4", "Odd", "SUPERSEDED")]);
  assert.deepEqual([...groups.keys()], ["ACTIVE", "STALE", "INVALIDATED", "SUPERSEDED"]);
  assert.deepEqual(groups.get("ACTIVE")!.map((r) => r.title), ["Alpha", "Beta"]);
  assert.equal(groups.get("INVALIDATED")!.length, 0);
});

test("a decision renders as markdown with status, files, alternatives and evidence", () => {
  const md = decisionMarkdown({
    ...rec("d-1", "Use SQLite", "STALE"),
    commit_sha: "abc123",
    decision_type: "architecture",
    attention: ["stale"],
    rejected_alternatives: ["Postgres: a server to run"],
    evidence: ["bench/sqlite.txt"],
  });
  assert.ok(md.startsWith("# Use SQLite\n"));
  assert.ok(md.includes("**Status:** STALE"));
  assert.ok(md.includes("**Anchored at commit:** `abc123`"));
  assert.ok(md.includes("> Needs attention: stale"));
  assert.ok(md.includes("## Files\n\n- `a.py`"));
  assert.ok(md.includes("## Rejected alternatives\n\n- Postgres: a server to run"));
  assert.ok(md.includes("## Evidence\n\n- bench/sqlite.txt"));
});

test("next-likely picks are sorted by probability with folder as description", () => {
  const picks = nextLikelyItems(
    [
      { uri: "file:///w/pkg/b.py", probability: 0.2 },
      { uri: "file:///w/a.py", probability: 0.7 },
    ],
    (u) => u.replace("file:///w/", ""),
  );
  assert.deepEqual(picks.map((p) => [p.label, p.description, p.detail]), [
    ["a.py", "", "70% likely next"],
    ["b.py", "pkg", "20% likely next"],
  ]);
});

test("the review's quick pick lists missed files, then decisions at risk", () => {
  const result = {
    base: "abc", base_ref: "HEAD", changed_files: ["app/sessions.py"], unsaved_files: ["app/pool.py"], min_confidence: 0.6,
    missing: [{ file: "tests/test_sessions.py", confidence: 0.625, because: [{ changed_file: "app/sessions.py", together: 5, of: 7, source: "commits" }] }],
    decisions_at_risk: [{ id: "d1", title: "Pool of four", file: "app/pool.py", symbol: "Pool.size", line: 7, end_line: 9, reason: "symbol Pool.size changed" }],
  };
  const [missed, risky] = reviewItems(result);
  assert.equal(missed.file, "tests/test_sessions.py");
  assert.equal(missed.detail, "usually changes with app/sessions.py (5 of 7 commits)");
  assert.match(missed.description, /63%/);
  assert.deepEqual([risky.what, risky.decision, risky.line], ["at_risk", "d1", 7]);
  assert.equal(reviewSummary(result), "NeuralMind: 2 changed files against HEAD: 1 probably missed, 1 decision at risk.");
  assert.match(reviewSummary({ ...result, missing: [], decisions_at_risk: [] }), /no file usually changed with them is missing/);
});
