// Turning server answers into what the user sees: the context panel's HTML, the status
// bar text, a decision as markdown, quick-pick labels. No `vscode` import: tested in Node.
import type { Because, ContextResult, DecisionRecord, NextLikelyItem, ReviewResult, StatusResult } from "./protocol";

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** Seconds-since-epoch, milliseconds, or an ISO string -> epoch milliseconds. */
export function toEpochMs(value: string | number | null | undefined): number | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  if (typeof value === "number") return value < 1e11 ? value * 1000 : value;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

export function relativeTime(value: string | number | null | undefined, now: number): string {
  const ms = toEpochMs(value);
  if (ms === undefined) return "never";
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 45) return "just now";
  if (s < 90 * 60) return `${Math.max(1, Math.round(s / 60))} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

const fmt = (n: number | undefined): string => (n === undefined ? "?" : n.toLocaleString("en-US"));

export interface StatusView {
  /** Status bar text, with a codicon. */
  text: string;
  /** Hover text. */
  tooltip: string;
  /** True when something needs the user's attention (keyword-only mode, no index). */
  warning: boolean;
}

/** The status bar item: indexing progress while indexing, else node count and freshness. */
export function statusView(status: StatusResult | undefined, now: number): StatusView {
  if (!status) return { text: "$(circle-slash) NeuralMind", tooltip: "NeuralMind: server not running", warning: true };
  const modelOk = status.model_state !== "unavailable" && !status.model_error;
  const lines = statusLines(status, now);
  const idx = status.indexing;
  let text: string;
  if (idx) {
    const pct = idx.total > 0 ? ` ${Math.floor((100 * idx.done) / idx.total)}%` : "";
    text = `$(sync~spin) NeuralMind ${idx.phase}${pct}`;
  } else if (!status.nodes) {
    text = "$(database) NeuralMind: no index";
  } else {
    text = `$(database) NeuralMind: ${fmt(status.nodes)} nodes indexed${freshnessText(status)}`;
  }
  if (!modelOk) text = text.replace(/^\$\([^)]+\)/, "$(warning)");
  return { text, tooltip: lines.join("\n"), warning: !modelOk || (!idx && !status.nodes) };
}

/** The freshness indicator: "· fresh", or what is not in the index yet (pending files,
 * unsaved buffers the index holds). Servers without a stamp: their pending count only. */
export function freshnessText(status: StatusResult): string {
  const f = status.freshness;
  if (!f) return status.files_pending ? ` · ${status.files_pending} pending` : "";
  const parts: string[] = [];
  if (f.counts.pending) parts.push(`${fmt(f.counts.pending)} pending`);
  if (f.counts.unsaved) parts.push(`${fmt(f.counts.unsaved)} unsaved`);
  return ` · ${parts.length ? parts.join(" · ") : "fresh"}`;
}

function listed(files: string[], count: number): string {
  if (!files.length) return "";
  const shown = files.slice(0, 5);
  const more = count - shown.length;
  return `: ${shown.join(", ")}${more > 0 ? ` (+${fmt(more)} more)` : ""}`;
}

/** Every status field as a human line (tooltip and the details view). */
export function statusLines(status: StatusResult, now: number): string[] {
  const lines: string[] = [];
  const idx = status.indexing;
  if (idx) lines.push(`Indexing: ${idx.phase} ${fmt(idx.done)}/${fmt(idx.total)}`);
  if (status.files !== undefined) lines.push(`Files: ${fmt(status.files)}`);
  lines.push(`Nodes: ${fmt(status.nodes)} (embedded: ${fmt(status.embedded_nodes)})`);
  if (status.embeddings_pending) lines.push(`Embeddings pending: ${fmt(status.embeddings_pending)}`);
  lines.push(`Last full build: ${relativeTime(status.last_full_build, now)}`);
  lines.push(`Last update: ${relativeTime(status.last_incremental_update, now)}`);
  lines.push(`Files pending: ${fmt(status.files_pending ?? 0)}`);
  if (status.model_state) {
    const mode = status.model_state === "unavailable" ? " (keyword-only search)" : "";
    lines.push(`Embedding model: ${status.model_state}${mode}${status.model_error ? ` — ${status.model_error}` : ""}`);
  }
  lines.push(`MCP endpoint: ${status.mcp_endpoint ? status.mcp_endpoint : "off"}`);
  const f = status.freshness;
  if (f) {
    lines.push(`Fresh against: ${f.head ? f.head.slice(0, 10) : "no git"}, index generation ${f.index_generation}`);
    lines.push(`Changed since HEAD: ${fmt(f.counts.dirty)}${listed(f.dirty_files, f.counts.dirty)}`);
    lines.push(`Unsaved buffers indexed: ${fmt(f.counts.unsaved)}${listed(f.unsaved_files, f.counts.unsaved)}`);
    lines.push(`Not indexed yet: ${fmt(f.counts.pending)}${listed(f.pending_files, f.counts.pending)}`);
  }
  const s = status.savings?.overall;
  if (s && s.answers) {
    // fewer only when the answers cost less than the code they replace (not so on a tiny project)
    const ratio = s.ratio && s.ratio > 1 ? ` (${s.ratio}x fewer)` : "";
    lines.push(`Answers: ${fmt(s.answers)}, ${fmt(s.tokens_served)} tokens instead of ${fmt(s.codebase_tokens)}${ratio}`);
    if (s.precision_at_5 !== null) {
      lines.push(`Used: ${s.files_used_per_answer} files per answer, precision@5 ${s.precision_at_5} (${fmt(s.acted_on)} answers acted on)`);
    }
  }
  if (status.last_error) lines.push(`Last error: ${status.last_error}`);
  return lines;
}

export interface PanelOptions {
  /** Content-Security-Policy source of the webview (webview.cspSource). */
  cspSource: string;
  /** Random value allowing exactly our inline script. */
  nonce: string;
  /** Path shown for a hit (workspace-relative), given the server's `file`. */
  displayPath?: (file: string) => string;
}

/**
 * A location the context names: `path:line` or `path:line-end`, in a code span
 * (`shop/invoice.py:4-7`) or in parentheses (shop/cache.py:5). Relative paths only; the
 * extension host still confines what it opens to the workspace folder.
 */
const LOCATION = /(`|\()([A-Za-z0-9_][^`()\s:]*):(\d+)(?:-(\d+))?(`|\))/g;

/** The context as HTML: escaped, with every named location a link that opens it. */
export function linkLocations(context: string): string {
  let out = "";
  let last = 0;
  for (const m of context.matchAll(LOCATION)) {
    const [whole, open, file, line, , close] = m;
    if ((open === "`") !== (close === "`") || file.includes("..")) continue;
    const at = m.index ?? 0;
    out += escapeHtml(context.slice(last, at));
    const text = whole.slice(1, -1);
    out +=
      `${escapeHtml(open)}<a href="#" class="loc" data-file="${escapeHtml(file)}" data-line="${Number(line)}" ` +
      `title="Open ${escapeHtml(text)}">${escapeHtml(text)}</a>${escapeHtml(close)}`;
    last = at + whole.length;
  }
  return out + escapeHtml(context.slice(last));
}

/**
 * The "NeuralMind: Ask" panel: question, token count, layers, hits, the context, Copy.
 * Theme colours only (--vscode-* variables), every control reachable with Tab and
 * activated with Enter, the Copy button focused on load.
 */
export function contextPanelHtml(query: string, result: ContextResult, opts: PanelOptions): string {
  const show = opts.displayPath ?? ((f: string) => f);
  const layers = Object.entries(result.layers ?? {})
    .map(([name, tokens]) => `${escapeHtml(name)} ${fmt(tokens)}`)
    .join(" · ");
  const hits = (result.hits ?? [])
    .map((h, i) => {
      const where = `${show(h.file)}:${h.line}`;
      const sym = h.symbol ? ` <span class="sym">${escapeHtml(h.symbol)}</span>` : "";
      return (
        `<li><a href="#" data-hit="${i}" data-file="${escapeHtml(h.file)}" data-line="${h.line}">` +
        `${escapeHtml(where)}</a>${sym}</li>`
      );
    })
    .join("");
  const partial = result.partial
    ? `<p class="partial">Indexing is still running: this answer uses what is indexed so far.</p>`
    : "";
  const mode = result.mode ? ` · ${escapeHtml(result.mode)}` : "";
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${opts.cspSource} 'unsafe-inline'; script-src 'nonce-${opts.nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>NeuralMind: ${escapeHtml(query)}</title>
<style>
  body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground);
         background: var(--vscode-editor-background); padding: 0 1em; }
  .meta, .sym { color: var(--vscode-descriptionForeground); }
  .partial { color: var(--vscode-editorWarning-foreground); }
  pre { white-space: pre-wrap; font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size);
        color: var(--vscode-editor-foreground); background: var(--vscode-textCodeBlock-background); padding: 0.8em; }
  a { color: var(--vscode-textLink-foreground); text-decoration: none; }
  a:hover { color: var(--vscode-textLink-activeForeground); text-decoration: underline; }
  button { color: var(--vscode-button-foreground); background: var(--vscode-button-background);
           border: 1px solid var(--vscode-button-border, transparent); padding: 4px 12px; cursor: pointer; font: inherit; }
  button:hover { background: var(--vscode-button-hoverBackground); }
  a:focus-visible, button:focus-visible, summary:focus-visible { outline: 1px solid var(--vscode-focusBorder); outline-offset: 2px; }
</style>
</head>
<body>
<h2>${escapeHtml(query)}</h2>
<p class="meta"><span id="tokens">${fmt(result.tokens)} tokens</span>${mode}${layers ? ` · ${layers}` : ""}</p>
${partial}
<p><button id="copy" title="Copy the context to the clipboard" autofocus>Copy context</button> <span id="copied" class="meta" role="status" aria-live="polite"></span></p>
${hits ? `<details><summary>${(result.hits ?? []).length} hits</summary><ul>${hits}</ul></details>` : ""}
<pre id="context" aria-label="Context">${linkLocations(result.context)}</pre>
<script nonce="${opts.nonce}">
  const vscode = acquireVsCodeApi();
  const copy = document.getElementById("copy");
  copy.addEventListener("click", () => vscode.postMessage({ type: "copy" }));
  for (const a of document.querySelectorAll("a[data-file]")) {
    a.addEventListener("click", (e) => {
      e.preventDefault();
      vscode.postMessage({ type: "open", file: a.dataset.file, line: Number(a.dataset.line) });
    });
  }
  window.addEventListener("message", (e) => {
    if (e.data && e.data.type === "copied") document.getElementById("copied").textContent = "Copied.";
  });
  window.addEventListener("focus", () => { if (document.activeElement === document.body) copy.focus(); });
  copy.focus();
</script>
</body>
</html>`;
}

/** A decision record as a markdown document (opened read-only from the tree view). */
export function decisionMarkdown(d: DecisionRecord): string {
  const out: string[] = [`# ${d.title}`, "", `**Status:** ${d.status}  `, `**Id:** \`${d.id}\`  `];
  if (d.decision_type) out.push(`**Type:** ${d.decision_type}  `);
  if (d.commit_sha) out.push(`**Anchored at commit:** \`${d.commit_sha}\`  `);
  if (d.created_at) out.push(`**Recorded:** ${d.created_at}${d.author ? ` by ${d.author}` : ""}  `);
  if (d.updated_at && d.updated_at !== d.created_at) out.push(`**Updated:** ${d.updated_at}  `);
  if (typeof d.confidence === "number") out.push(`**Confidence:** ${d.confidence}  `);
  if (d.tags && d.tags.length) out.push(`**Tags:** ${d.tags.join(", ")}  `);
  if (d.attention && d.attention.length) out.push("", `> Needs attention: ${d.attention.join(", ")}`);
  out.push("", "## Rationale", "", d.rationale || "_(none)_");
  const section = (title: string, items: string[] | undefined, code: boolean) => {
    if (items && items.length) out.push("", `## ${title}`, "", ...items.map((x) => (code ? `- \`${x}\`` : `- ${x}`)));
  };
  section("Files", d.files_affected, true);
  section("Symbols", d.symbols_affected, true);
  section("Rejected alternatives", d.rejected_alternatives, false);
  section("Evidence", d.evidence, false);
  return out.join("\n") + "\n";
}

export const STATUS_ORDER = ["ACTIVE", "STALE", "INVALIDATED"] as const;

/** Decisions grouped by status, each group sorted by title; unknown statuses go last. */
export function groupDecisions(records: DecisionRecord[]): Map<string, DecisionRecord[]> {
  const groups = new Map<string, DecisionRecord[]>(STATUS_ORDER.map((s) => [s, []]));
  for (const r of records) {
    const key = String(r.status ?? "").toUpperCase() || "UNKNOWN";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(r);
  }
  for (const list of groups.values()) list.sort((a, b) => a.title.localeCompare(b.title));
  return groups;
}

export interface PickItem {
  label: string;
  description: string;
  detail: string;
  uri: string;
}

/** Quick-pick rows for next-likely files, most likely first. */
export function nextLikelyItems(items: NextLikelyItem[], relative: (uri: string) => string): PickItem[] {
  return [...items]
    .sort((a, b) => b.probability - a.probability)
    .map((it) => {
      const rel = relative(it.uri);
      const slash = rel.lastIndexOf("/");
      return {
        label: slash >= 0 ? rel.slice(slash + 1) : rel,
        description: slash >= 0 ? rel.slice(0, slash) : "",
        detail: `${Math.round(it.probability * 100)}% likely next`,
        uri: it.uri,
      };
    });
}

/** "usually changes with X (14 of 17 commits)", the words of the server's diagnostic. */
export function becauseText(b: Because): string {
  return `usually changes with ${b.changed_file} (${b.together} of ${b.of} ${b.source})`;
}

export interface ReviewPick {
  label: string;
  description: string;
  detail: string;
  what: "missing" | "at_risk";
  /** Workspace-relative file to open. */
  file: string;
  /** 1-based line to reveal. */
  line: number;
  /** The decision, for a decision at risk. */
  decision?: string;
  title?: string;
}

/** "NeuralMind: Review changes": missed files first (most likely first), then decisions at risk. */
export function reviewItems(r: ReviewResult): ReviewPick[] {
  const missed: ReviewPick[] = r.missing.map((m) => ({
    label: `$(file-add) ${m.file}`,
    description: `probably missed · ${Math.round(m.confidence * 100)}%`,
    detail: m.because.map(becauseText).join("; "),
    what: "missing",
    file: m.file,
    line: 1,
  }));
  const risky: ReviewPick[] = r.decisions_at_risk.map((d) => ({
    label: `$(law) ${d.title}`,
    description: `decision at risk · ${d.file}:${d.line}`,
    detail: `${d.reason}: reconsider before committing`,
    what: "at_risk",
    file: d.file,
    line: d.line,
    decision: d.id,
    title: d.title,
  }));
  return [...missed, ...risky];
}

/** One line for the review's outcome when there is nothing to pick. */
export function reviewSummary(r: ReviewResult): string {
  const n = new Set([...r.changed_files, ...r.unsaved_files]).size;
  const changed = `${n} changed file${n === 1 ? "" : "s"} against ${r.base_ref}`;
  if (!r.missing.length && !r.decisions_at_risk.length) return `NeuralMind: ${changed}; no file usually changed with them is missing, no decision at risk.`;
  return `NeuralMind: ${changed}: ${r.missing.length} probably missed, ${r.decisions_at_risk.length} decision${r.decisions_at_risk.length === 1 ? "" : "s"} at risk.`;
}
