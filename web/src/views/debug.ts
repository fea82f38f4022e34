// Debug: a live trace of LSP requests, MCP tool calls and hook calls with their latency, what
// each hook pushed, and every other event (from this process and, through the event log,
// from the CLI, hook and MCP processes).

import { get } from "../api";
import { clear, fmtTime, h, on, replace } from "../dom";
import { describe, type BrainEvent } from "../live";
import type { View } from "./view";

const MAX_ROWS = 500;
const FILTERS = ["trace", "all"] as const;

function isTrace(e: BrainEvent): boolean {
  return e.kind === "request" || e.kind === "hook";
}

export class DebugView implements View {
  readonly name = "debug";
  readonly title = "Debug";
  readonly el: HTMLElement;
  private readonly rows: HTMLTableSectionElement;
  private readonly stats: HTMLElement;
  private readonly filter: HTMLSelectElement;
  private events: BrainEvent[] = [];
  private seen = new Set<string>();
  private loaded = false;

  constructor() {
    this.rows = h("tbody", { id: "trace-rows" });
    this.stats = h("p", { class: "muted", id: "trace-stats" });
    this.filter = h("select", { id: "trace-filter" }, FILTERS.map((f) =>
      h("option", { value: f }, f === "trace" ? "requests and hooks" : "every event")));
    on(this.filter, "change", () => this.renderAll());
    this.el = h("div", { class: "view debug", id: "view-debug" }, h("h2", null, "Debug"),
      h("p", null, "Show ", this.filter), this.stats,
      h("table", { class: "trace" }, h("thead", null, h("tr", null, h("th", { class: "num" }, "time"),
        h("th", null, "what"), h("th", null, "channel"), h("th", { class: "num" }, "ms"), h("th", null, "detail"),
        h("th", null, "process"))), this.rows));
  }

  show(): void {
    if (!this.loaded) void this.load();
  }

  onEvent(e: BrainEvent): void {
    this.add(e, true);
  }

  private async load(): Promise<void> {
    this.loaded = true;
    try {
      const recent = await get<BrainEvent[]>("events");
      for (const e of recent) this.add(e, false);
      this.events.sort((a, b) => a.ts - b.ts);
      this.renderAll();
    } catch (err) {
      replace(this.stats, `The recent events could not be loaded: ${(err as Error).message}`);
    }
  }

  private add(e: BrainEvent, live: boolean): void {
    if (this.seen.has(e.id)) return;
    this.seen.add(e.id);
    this.events.push(e);
    if (this.events.length > MAX_ROWS) this.events.splice(0, this.events.length - MAX_ROWS);
    if (live && this.loaded && this.wanted(e)) {
      this.rows.insertBefore(row(e), this.rows.firstChild);
      while (this.rows.children.length > MAX_ROWS) this.rows.lastChild?.remove();
      this.summarise();
    }
  }

  private wanted(e: BrainEvent): boolean {
    return this.filter.value === "all" || isTrace(e);
  }

  private renderAll(): void {
    clear(this.rows);
    for (const e of [...this.events].reverse()) if (this.wanted(e)) this.rows.appendChild(row(e));
    this.summarise();
  }

  private summarise(): void {
    const req = this.events.filter((e) => e.kind === "request");
    const ms = req.map((e) => Number(e.data.ms) || 0).sort((a, b) => a - b);
    const p = (q: number) => (ms.length ? ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(1) : "–");
    replace(this.stats, `${req.length} requests (p50 ${p(0.5)} ms, p95 ${p(0.95)} ms), ` +
      `${this.events.filter((e) => e.kind === "hook").length} hook calls, ${this.events.length} events in view.`);
  }
}

function row(e: BrainEvent): HTMLTableRowElement {
  const d = e.data;
  const channel = e.kind === "request" ? String(d.channel ?? "") : e.kind === "hook" ? String(d.agent ?? "hook") : e.kind;
  const ms = typeof d.ms === "number" ? d.ms.toFixed(1) : "";
  const detail = e.kind === "request" ? String(d.method ?? "")
    : e.kind === "hook" ? `${String(d.event ?? "")}: ${String(d.pushed ?? d.summary ?? "")}` : describe(e);
  return h("tr", { class: `kind-${e.kind}${d.ok === false ? " failed" : ""}`, "data-kind": e.kind, "data-id": e.id },
    h("td", { class: "num" }, fmtTime(e.ts)), h("td", null, e.kind), h("td", null, channel),
    h("td", { class: "num" }, ms), h("td", { class: "detail" }, detail), h("td", { class: "muted" }, e.origin));
}
