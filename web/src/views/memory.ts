// Memory: agent memory atoms by state, with rank and exposure; the inbox of proposed atoms
// and the standing directives. Empty until the workspace has a memory store.

import { emptyState, fmtInt, h, replace } from "../dom";
import type { BrainEvent } from "../live";
import { BoardView } from "./view";

interface Atom {
  id: string; type?: string; label?: string; text?: string; state?: string;
  rank?: number; exposure?: number; pinned?: boolean;
}
interface MemoryBoard {
  available: boolean; note?: string; atoms: Atom[]; inbox: Atom[];
  directives: (Atom | string)[];
}

export class MemoryView extends BoardView<MemoryBoard> {
  constructor() {
    super("memory", "Memory", "memory", "memory-board");
  }

  onEvent(e: BrainEvent): void {
    if (e.kind === "memory" && this.visible) void this.refresh();
  }

  protected render(board: MemoryBoard): void {
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
    h("thead", null, h("tr", null, h("th", null, "atom"), h("th", null, "type"), h("th", { class: "num" }, "rank"),
      h("th", { class: "num" }, "exposure"))),
    h("tbody", null, atoms.map((a) => h("tr", { "data-id": a.id },
      h("td", null, a.label ?? a.text ?? a.id, a.pinned ? h("span", { class: "badge" }, "pinned") : null),
      h("td", null, a.type ?? ""), h("td", { class: "num" }, a.rank?.toFixed(3) ?? "–"),
      h("td", { class: "num" }, fmtInt(a.exposure))))));
}
