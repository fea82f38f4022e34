// Decisions: ACTIVE / STALE / INVALIDATED, each with its reason and, for a stale one, the
// commit that made it stale.

import { emptyState, fmtInt, h, replace } from "../dom";
import type { BrainEvent } from "../live";
import { BoardView } from "./view";

interface Decision {
  id: string; title: string; status: string; type: string; reason: string;
  stale_commit: string | null; anchor: string | null; files: string[]; symbols: string[];
  author: string; created_at: string; updated_at: string; rationale: string;
}
interface Board { statuses: string[]; groups: Record<string, Decision[]>; counts: Record<string, number> }

export class DecisionsView extends BoardView<Board> {
  private stale = true;
  private focusId = "";

  constructor() {
    super("decisions", "Decisions", "decisions", "decisions-board");
  }

  protected opened(arg: string): void {
    this.focusId = arg;
    if (this.stale) void this.refresh();
    else this.reveal();
  }

  onEvent(e: BrainEvent): void {
    if (e.kind === "decision") {
      this.stale = true;
      if (this.visible) void this.refresh();
    }
  }

  async refresh(): Promise<void> {
    this.stale = false;
    await super.refresh();
  }

  protected render(board: Board): void {
    const total = Object.values(board.counts).reduce((a, b) => a + b, 0);
    if (!total) {
      replace(this.body, emptyState("No decisions recorded",
        "Decisions recorded from the editor, an agent (neuralmind_decision_record) or `neuralmind decisions record` appear here, and go STALE when a commit changes the code they govern."));
      return;
    }
    replace(this.body, h("div", { class: "columns" }, board.statuses.map((status) =>
      h("section", { class: `column status-${status.toLowerCase()}`, "data-status": status },
        h("h3", null, `${status} (${fmtInt(board.counts[status] ?? 0)})`),
        (board.groups[status] ?? []).map((d) => card(d))))));
    this.reveal();
  }

  private reveal(): void {
    if (!this.focusId) return;
    const el = this.body.querySelector(`[data-id="${CSS.escape(this.focusId)}"]`);
    if (el instanceof HTMLElement) {
      el.classList.add("focused");
      el.scrollIntoView({ block: "center" });
    }
  }
}

function card(d: Decision): HTMLElement {
  return h("article", { class: "card decision", "data-id": d.id },
    h("h4", { class: "title" }, d.title),
    h("p", { class: "muted" }, `${d.id} · ${d.type} · ${d.author || "unknown"} · ${d.updated_at.slice(0, 10)}`),
    d.reason ? h("p", { class: "reason" }, d.reason) : null,
    d.stale_commit ? h("p", { class: "commit" }, "Made stale by commit ", h("code", null, d.stale_commit)) : null,
    d.files.length ? h("p", { class: "files" }, d.files.map((f, i) => [i ? ", " : "",
      h("a", { href: `#brain/${encodeURIComponent(f)}` }, f)]).flat()) : null,
    h("details", null, h("summary", null, "Rationale"), h("p", { class: "rationale" }, d.rationale)));
}
