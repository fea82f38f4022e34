// The custom requests the extension sends, against the real Python server over stdio.
// Skips only when `neuralmind-lsp` is not installed yet; otherwise every step must pass.
import { after, before, test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import type { ContextResult, DecisionRecord, NextLikelyItem, ReviewResult, StatusResult } from "../src/protocol";
import { Methods, Notifications } from "../src/protocol";
import { reviewItems, statusView } from "../src/render";
import { editorStateParams } from "../src/editorState";
import { didChangeConfigurationParams, mapSettings } from "../src/settings";
import { commandsToRegister } from "../src/commands";
import { OBSERVATORY_METHOD } from "../src/observatory";
import { findServer, git, makeWorkspace, notYetAvailable, Session, until, uriOf } from "./lspHarness";

const FILES: Record<string, string> = {
  "billing/invoice.py": [
    '"""Invoices: line items, taxes and the total a customer pays."""',
    "",
    "",
    "def compute_invoice_total(items, tax_rate):",
    '    """Sum the line items of an invoice and add the tax."""',
    "    subtotal = sum(item.price * item.quantity for item in items)",
    "    return round(subtotal * (1 + tax_rate), 2)",
    "",
    "",
    "class InvoiceRenderer:",
    '    """Render an invoice as plain text for e-mail."""',
    "",
    "    def render(self, invoice):",
    "        return f\"Invoice {invoice.number}: {compute_invoice_total(invoice.items, invoice.tax_rate)}\"",
    "",
  ].join("\n"),
  "auth/session.py": [
    '"""Login sessions and their tokens."""',
    "",
    "import secrets",
    "",
    "",
    "def refresh_session_token(session):",
    '    """Replace the session token with a fresh random one."""',
    "    session.token = secrets.token_hex(16)",
    "    return session",
    "",
  ].join("\n"),
  "storage/cache.py": [
    '"""An in-memory LRU cache for rendered pages."""',
    "",
    "",
    "class PageCache:",
    "    def __init__(self, size=128):",
    "        self.size = size",
    "        self.entries = {}",
    "",
  ].join("\n"),
  "README.md": "# Shop\n\nA tiny shop backend: billing, auth and storage.\n",
};

const found = findServer();
let session: Session | undefined;
let root = "";
let skipReason = found.skip;

before(async () => {
  if (skipReason) return;
  root = makeWorkspace(FILES);
  try {
    // Every setting the extension forwards, mapped from VS Code's names by the real module.
    const { settings } = mapSettings(
      (name) => ({ budget: 1200, exclude: ["build/**"], learning: true, debounceSeconds: 0.2, mcp: false, mcpReadOnly: false, editorState: true, mcpTools: "default" })[name],
    );
    session = await Session.start(found.command!, root, settings);
  } catch (e) {
    if (notYetAvailable(String(e))) skipReason = `${found.command} is installed but says the server is not available yet`;
    else throw e;
  }
});

after(async () => {
  if (session) {
    const code = await session.stop();
    assert.equal(code, 0, `server exit code ${code}; stderr:\n${session.stderr.slice(-4000)}`);
  }
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

/** Each test either skips with the reason or runs against the live session. */
function live(name: string, fn: (s: Session) => Promise<void>): void {
  test(name, { timeout: 180_000 }, async (t) => {
    if (skipReason) {
      t.skip(skipReason);
      return;
    }
    try {
      await fn(session!);
    } catch (e) {
      const tail = session!.stderr.slice(-3000);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- server stderr (tail) ---\n${tail}`);
    }
  });
}

live("status reports the indexed workspace once background indexing ends", async (s) => {
  const status = await until("indexing to finish", 150_000, async () => {
    const st = await s.request<StatusResult>(Methods.status, {});
    return !st.indexing && (st.nodes ?? 0) > 0 ? st : undefined;
  }, 250);
  assert.ok(status.nodes! >= 5, `nodes: ${status.nodes}`);
  assert.equal(typeof status.files_pending, "number");
  assert.ok("last_full_build" in status && "model_state" in status && "embedded_nodes" in status, JSON.stringify(status));
  assert.match(statusView(status, Date.now()).text, /NeuralMind: [\d,]+ nodes indexed/);
});

live("every forwarded setting is accepted by the server", async (s) => {
  assert.deepEqual(s.messages, [], "the server warned about the settings");
});

live("context for a question names the file that answers it", async (s) => {
  const result = await s.request<ContextResult>(Methods.context, {
    query: "how is the invoice total computed with tax?",
    uri: uriOf(s.root, "README.md"),
  });
  assert.ok(result.context.includes("billing/invoice.py"), result.context);
  assert.ok(result.tokens > 0 && result.tokens <= 1200, `tokens ${result.tokens}`);
  assert.equal(result.partial, false);
  assert.ok(result.hits && result.hits.length > 0);
  assert.equal(result.hits[0].file.replace(/\\/g, "/").endsWith("billing/invoice.py"), true, JSON.stringify(result.hits));
  for (const layer of ["L0", "L1", "L2", "L3"]) assert.equal(typeof result.layers?.[layer], "number", layer);
});

live("a budget changed through didChangeConfiguration bounds the next answer", async (s) => {
  const question = { query: "how is the invoice total computed with tax?" };
  const before = await s.request<ContextResult>(Methods.context, question);
  assert.ok(before.tokens > 100, `the answer under the 1200 budget is already small (${before.tokens})`);
  await s.connection.sendNotification("workspace/didChangeConfiguration", didChangeConfigurationParams({ budget: 100 }));
  const after = await until("an answer within the new budget", 10_000, async () => {
    const r = await s.request<ContextResult>(Methods.context, question);
    return r.tokens <= 100 ? r : undefined;
  });
  assert.ok(after.tokens > 0);
  assert.deepEqual(s.messages, []);
  await s.connection.sendNotification("workspace/didChangeConfiguration", didChangeConfigurationParams({ budget: 1200 }));
});

live("next likely files follow what was edited together", async (s) => {
  s.open("billing/invoice.py");
  s.open("storage/cache.py");
  for (let round = 0; round < 3; round++) {
    s.editAndSave("billing/invoice.py", `# round ${round}`);
    s.editAndSave("storage/cache.py", `# round ${round}`);
    await new Promise((r) => setTimeout(r, 400)); // past the 0.2 s debounce: one co-edit batch per round
  }
  const invoice = uriOf(s.root, "billing/invoice.py");
  const items = await until("cache.py among the next likely files of invoice.py", 20_000, async () => {
    const got = await s.request<NextLikelyItem[]>(Methods.nextLikely, { uri: invoice, k: 5 });
    return got.some((i) => i.uri.endsWith("storage/cache.py")) ? got : undefined;
  });
  for (const item of items) {
    assert.ok(item.probability > 0 && item.probability <= 1, JSON.stringify(item));
    assert.ok(item.uri.startsWith("file://"), item.uri);
  }
  assert.ok(!items.some((i) => i.uri === invoice), "a file is not its own next file");
});

live("a recorded decision is in the audit, then goes STALE when a commit changes its file", async (s) => {
  const record = await s.request<DecisionRecord>(Methods.decisionsRecord, {
    title: "Invoice totals are rounded to cents",
    rationale: "Accounting requires cent precision; rounding happens once, at the total.",
    files: ["auth/session.py"],
  });
  assert.ok(record.id, JSON.stringify(record));
  assert.equal(record.status, "ACTIVE");
  const audit = await s.request<DecisionRecord[]>(Methods.decisionsAudit, {});
  assert.ok(audit.some((d) => d.id === record.id), JSON.stringify(audit));
  const got = await s.request<DecisionRecord>(Methods.decisionsGet, { id: record.id });
  assert.equal(got.title, record.title);

  // Changed as an editor changes it (change, save), so the buffer left open holds the file's text and
  // later tests' reviews do not see it as unsaved.
  s.open("auth/session.py");
  s.editAndSave("auth/session.py", "\n\ndef drop_session(session):\n    session.token = None");
  git(s.root, "commit", "-q", "-am", "sessions can be dropped");
  const stale = await until("the decision to go STALE after the commit", 30_000, async () => {
    const list = await s.request<DecisionRecord[]>(Methods.decisionsAudit, {});
    return list.find((d) => d.id === record.id && d.status === "STALE");
  }, 250);
  assert.ok(stale);
  const diags = await until("a diagnostic on the governed file", 10_000, async () => {
    const d = s.diagnostics.get(uriOf(s.root, "auth/session.py"));
    return d && d.some((x) => String(x.code) === String(record.id)) ? d : undefined;
  });
  assert.ok(diags.length >= 1);

  // The "Restore decision" code action, through the command route the extension registers.
  await s.request("workspace/executeCommand", { command: "neuralmind.decision.restore", arguments: [record.id] });
  const restored = await s.request<DecisionRecord>(Methods.decisionsGet, { id: record.id });
  assert.equal(restored.status, "ACTIVE");
  await until("the diagnostic to clear after restore", 10_000, async () => {
    const d = s.diagnostics.get(uriOf(s.root, "auth/session.py")) ?? [];
    return d.some((x) => String(x.code) === String(record.id)) ? undefined : true;
  });
});

live("the server's code-action commands are registered once for all folders, never over the extension's own", async (s) => {
  const advertised = s.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
  const first = commandsToRegister(advertised, new Set());
  for (const id of ["neuralmind.decision.restore", "neuralmind.decision.invalidate", "neuralmind.decision.show"]) {
    assert.ok(first.includes(id), `${id} not routable; advertised: ${advertised.join(", ")}`);
  }
  assert.ok(!first.includes("neuralmind.nextLikely"), "the extension's own command must not be re-registered");
  assert.deepEqual(commandsToRegister(advertised, new Set(first)), [], "a second folder registers nothing again");
});

live("the observatory request says why there is no page when the loopback endpoint is off", async (s) => {
  // This session runs with `mcp: false`; the page is served by that endpoint.
  await assert.rejects(s.request(OBSERVATORY_METHOD, {}), (e: Error) => /mcp/.test(e.message) && /neuralmind serve/.test(e.message));
});

live("the review names the partner a change left out, takes unsaved buffers, and opens the partner", async (s) => {
  for (let i = 0; i < 3; i++) {
    fs.appendFileSync(path.join(s.root, "billing/invoice.py"), `# pair ${i}\n`);
    fs.appendFileSync(path.join(s.root, "storage/cache.py"), `# pair ${i}\n`);
    git(s.root, "commit", "-q", "-am", `invoice and cache ${i}`);
  }
  const invoice = uriOf(s.root, "billing/invoice.py");
  const text = fs.readFileSync(path.join(s.root, "billing/invoice.py"), "utf8") + "\ndef refund(invoice):\n    return -invoice.total\n";
  const result = await s.request<ReviewResult>(Methods.review, { buffers: [{ uri: invoice, text }] });
  assert.deepEqual(result.unsaved_files, ["billing/invoice.py"]);
  const missed = result.missing.find((m) => m.file === "storage/cache.py");
  assert.ok(missed, JSON.stringify(result));
  assert.equal(missed.because[0].changed_file, "billing/invoice.py");
  assert.equal(missed.uri, uriOf(s.root, "storage/cache.py"));
  const [first] = reviewItems(result);
  assert.equal(first.file, "storage/cache.py");
  assert.match(first.detail, /^usually changes with billing\/invoice\.py \(\d+ of \d+ commits\)/);

  await s.request("workspace/executeCommand", { command: "neuralmind.review.open", arguments: [missed.uri] });
  assert.equal(s.shownDocuments.at(-1)?.uri, missed.uri);
});

live("the editor state notification is accepted as the extension sends it", async (s) => {
  const active = uriOf(s.root, "billing/invoice.py");
  const params = editorStateParams(
    {
      activeFile: active,
      selection: { start: { line: 3, character: 0 }, end: { line: 4, character: 0 }, text: "def compute_invoice_total(items, tax_rate):" },
      visibleRanges: [{ start: { line: 0, character: 0 }, end: { line: 14, character: 0 } }],
      openFiles: [active, "file:///elsewhere/other.py"],
      diagnostics: [{ range: { start: { line: 3, character: 4 }, end: { line: 3, character: 9 } }, message: "too long", severity: 2, source: "ruff" }],
    },
    (uri) => uri.startsWith(uriOf(s.root, "")),
  );
  assert.deepEqual(params.openFiles, [active]);
  await s.connection.sendNotification(Notifications.editorState, params);
  const status = await s.request<StatusResult>(Methods.status, {}); // still serving after it
  assert.ok((status.nodes ?? 0) > 0);
  assert.ok(!/ignoring an editor state/.test(s.stderr), s.stderr.slice(-2000));
});
