// Dreams: the diary the consolidation passes write (.neuralmind/DREAMS.md), newest first.

import { emptyState, h, replace } from "../dom";
import type { BrainEvent } from "../live";
import { BoardView } from "./view";

interface Diary { available: boolean; note?: string; entries: { title: string; body: string }[] }

export class DreamsView extends BoardView<Diary> {
  constructor() {
    super("dreams", "Dreams", "dreams", "dream-diary");
  }

  onEvent(e: BrainEvent): void {
    if (e.kind === "memory" && e.data.change === "dream" && this.visible) void this.refresh();
  }

  protected render(diary: Diary): void {
    if (!diary.available || !diary.entries.length) {
      replace(this.body, emptyState("No dream yet", diary.note ?? "The diary is empty."));
      return;
    }
    replace(this.body, diary.entries.map((e) =>
      h("article", { class: "card dream" }, h("h3", null, e.title), h("pre", { class: "diary" }, e.body))));
  }
}
