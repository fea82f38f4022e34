// Memory: agent memory atoms by state, with rank and exposure; the inbox of proposed atoms
// and the standing directives. Empty until the workspace has a memory store.

import { get } from "../api";
import { emptyState, fmtInt, h, replace } from "../dom";
import type { BrainEvent } from "../live";
import type { View } from "./view";

interface Atom {
  id: string; type?: string; label?: string; text?: string; state?: string;
  rank?: number; exposure?: number; pinned?: boolean;
}
interface MemoryBoard {
  available: boolean; note?: string; atoms: Atom[]; inbox: Atom[];
  directives: (Atom | string)[];
}

export class MemoryView implements View {
  readonly name = "memory";
  readonly title = "Memory";
  readonly el: HTMLElement;
  private readonly body: HTMLElement;
  private visible = false;

  constructor() {
    this.body = h("div", { id: "memory-board" });
    this.el = h("div", { class: "view memory", id: "view-memory" }, h("h2", null, "Memory"), this.body);
  }

  show(): void {
    this.visible = true;
    void this.load();
  }

  hide(): void {
    this.visible = false;
  }

  onEvent(e: BrainEvent): void {
    if (e.kind === "memory" && this.visible) void this.load();
  }

  private async load(): Promise<void> {
    let board: MemoryBoard;
    try {
      board = await get<MemoryBoard>("memory");
    } catch (err) {
      replace(this.body, h("p", { class: "error" }, (err as Error).message));
      return;
    }
    if (!board.available) {
      replace(this.body, emptyState("No agent memory here yet", board.note ?? ""));
      return;
    }
    const states = new Map<string, Atom[]>();
    for (const a of board.atoms) {
      const s = a.state ?? "active";
      if (!states.has(s)) states.set(s, []);
      states.get(s)!.push(a);
    }
    replace(this.body,
      h("section", { class: "directives", id: "memory-directives" }, h("h3", null, "Standing directives"),
        board.directives.length ? h("ol", null, board.directives.map((d) =>
          h("li", null, typeof d === "string" ? d : d.text ?? d.label ?? d.id)))
          : h("p", { class: "muted" }, "No pinned preference.")),
      h("section", { class: "inbox", id: "memory-inbox" }, h("h3", null, `Inbox (${fmtInt(board.inbox.length)})`),
        board.inbox.length ? table(board.inbox) : h("p", { class: "muted" }, "Nothing proposed.")),
      [...states.entries()].map(([state, atoms]) => h("section", { "data-state": state },
        h("h3", null, `${state} (${fmtInt(atoms.length)})`), table(atoms))));
  }
}

function table(atoms: Atom[]): HTMLElement {
  return h("table", { class: "atoms" },
    h("thead", null, h("tr", null, h("th", null, "atom"), h("th", null, "type"), h("th", null, "rank"),
      h("th", null, "exposure"))),
    h("tbody", null, atoms.map((a) => h("tr", { "data-id": a.id },
      h("td", null, a.label ?? a.text ?? a.id, a.pinned ? h("span", { class: "badge" }, "pinned") : null),
      h("td", null, a.type ?? ""), h("td", { class: "num" }, a.rank?.toFixed(3) ?? "–"),
      h("td", { class: "num" }, fmtInt(a.exposure))))));
}
