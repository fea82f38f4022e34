import { get } from "../api";
import { h, replace } from "../dom";
import type { BrainEvent } from "../live";

// One page of the observatory, shown when the location hash names it (#brain, #ask, ...).
export interface View {
  readonly name: string;
  readonly title: string;
  readonly el: HTMLElement;
  show(arg: string): void;        // arg: what follows "#name/" (e.g. a node id), decoded
  hide?(): void;
  onEvent?(e: BrainEvent): void;  // every live event, whether the view is shown or not
}

// A view of one JSON route: a title and a body, the route fetched when it is shown (and
// when `refresh` is called), a failure said in the body.
export abstract class BoardView<T> implements View {
  readonly el: HTMLElement;
  protected readonly body: HTMLElement;
  protected visible = false;

  constructor(readonly name: string, readonly title: string, private readonly route: string,
              bodyId: string) {
    this.body = h("div", { id: bodyId });
    this.el = h("div", { class: `view ${name}`, id: `view-${name}` }, h("h2", null, title), this.body);
  }

  show(arg: string): void {
    this.visible = true;
    this.opened(arg);
  }

  hide(): void {
    this.visible = false;
  }

  // What showing the view does: fetch again, by default.
  protected opened(_arg: string): void {
    void this.refresh();
  }

  async refresh(): Promise<void> {
    let data: T;
    try {
      data = await get<T>(this.route);
    } catch (err) {
      replace(this.body, h("p", { class: "error" }, (err as Error).message));
      return;
    }
    this.render(data);
  }

  protected abstract render(data: T): void;
}
