// Dreams: the diary the consolidation passes write (.neuralmind/DREAMS.md), newest first.

import { get } from "../api";
import { emptyState, h, replace } from "../dom";
import type { BrainEvent } from "../live";
import type { View } from "./view";

interface Diary { available: boolean; note?: string; entries: { title: string; body: string }[] }

export class DreamsView implements View {
  readonly name = "dreams";
  readonly title = "Dreams";
  readonly el: HTMLElement;
  private readonly body: HTMLElement;
  private visible = false;

  constructor() {
    this.body = h("div", { id: "dream-diary" });
    this.el = h("div", { class: "view dreams", id: "view-dreams" }, h("h2", null, "Dreams"), this.body);
  }

  show(): void {
    this.visible = true;
    void this.load();
  }

  hide(): void {
    this.visible = false;
  }

  onEvent(e: BrainEvent): void {
    if (e.kind === "memory" && e.data.change === "dream" && this.visible) void this.load();
  }

  private async load(): Promise<void> {
    let diary: Diary;
    try {
      diary = await get<Diary>("dreams");
    } catch (err) {
      replace(this.body, h("p", { class: "error" }, (err as Error).message));
      return;
    }
    if (!diary.available || !diary.entries.length) {
      replace(this.body, emptyState("No dream yet", diary.note ?? "The diary is empty."));
      return;
    }
    replace(this.body, diary.entries.map((e) =>
      h("article", { class: "card dream" }, h("h3", null, e.title), h("pre", { class: "diary" }, e.body))));
  }
}
