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
