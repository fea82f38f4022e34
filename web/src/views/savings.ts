// Savings: tokens served against tokens replaced (the whole files an agent would have read),
// per day, and precision by use (the share of served files the asker then worked on), from
// the event log.

import uPlot from "uplot";

import { emptyState, fmtInt, h, replace } from "../dom";
import type { BrainEvent } from "../live";
import { BoardView } from "./view";

interface Day {
  day: string; queries: number; served: number; replaced: number;
  files_served: number; files_used: number; precision: number | null;
}
interface Channel { queries: number; observed: number; served: number; used: number; precision: number | null }
interface Savings {
  days: Day[]; channels: Record<string, Channel>; since: number | null;
  totals: { queries: number; served: number; replaced: number };
}

const WIDTH = 760;
const HEIGHT = 240;

export class SavingsView extends BoardView<Savings> {
  private charts: uPlot[] = [];
  private dirty = true;
  private timer = 0;

  constructor() {
    super("savings", "Savings", "savings", "savings-body");
  }

  protected opened(): void {
    if (this.dirty) void this.refresh();
  }

  onEvent(e: BrainEvent): void {
    if (e.kind !== "query") return;
    this.dirty = true;
    if (this.visible) {
      window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => void this.refresh(), 1000);
    }
  }

  async refresh(): Promise<void> {
    this.dirty = false;
    await super.refresh();
  }

  protected render(s: Savings): void {
    this.charts.forEach((c) => c.destroy());
    this.charts = [];
    if (!s.days.length) {
      replace(this.body, emptyState("No question answered yet",
        "Each question the editor, an agent, a hook or the command line asks is counted here: the tokens its context pack served against the tokens of the whole files it stands in for, and how many of the served files the asker then worked on."));
      return;
    }
    const ratio = s.totals.replaced ? s.totals.replaced / Math.max(1, s.totals.served) : 0;
    const tokensEl = h("div", { class: "chart", id: "chart-tokens" });
    const precisionEl = h("div", { class: "chart", id: "chart-precision" });
    replace(this.body,
      h("p", { id: "savings-totals" }, `${fmtInt(s.totals.queries)} questions: ${fmtInt(s.totals.served)} tokens served ` +
        `instead of ${fmtInt(s.totals.replaced)} (×${ratio.toFixed(1)})` +
        (s.since ? `, since ${new Date(s.since * 1000).toISOString().slice(0, 10)} (the event log)` : "")),
      h("h3", null, "Tokens per day"), tokensEl,
      h("h3", null, "Precision by use"), precisionEl,
      h("table", { class: "channels", id: "savings-channels" },
        h("thead", null, h("tr", null, h("th", null, "asked by"), h("th", { class: "num" }, "questions"),
          h("th", { class: "num" }, "followed by work"), h("th", { class: "num" }, "files served"), h("th", { class: "num" }, "used"),
          h("th", { class: "num" }, "precision"))),
        h("tbody", null, Object.entries(s.channels).map(([name, c]) => h("tr", { "data-channel": name },
          h("td", null, name), h("td", { class: "num" }, fmtInt(c.queries)), h("td", { class: "num" }, fmtInt(c.observed)),
          h("td", { class: "num" }, fmtInt(c.served)), h("td", { class: "num" }, fmtInt(c.used)),
          h("td", { class: "num" }, c.precision === null ? "–" : `${(c.precision * 100).toFixed(0)}%`))))));
    const xs = s.days.map((d) => Date.parse(d.day + "T00:00:00Z") / 1000);
    // a day either side, so one day of data is a point in the middle, not a stretched axis
    const x: uPlot.Scale = { time: true, range: [xs[0] - 86_400, xs[xs.length - 1] + 86_400] };
    const compact = (_u: uPlot, vals: number[]) => vals.map((v) =>
      v >= 1e6 ? `${+(v / 1e6).toFixed(1)}M` : v >= 1e3 ? `${+(v / 1e3).toFixed(1)}k` : `${+v.toFixed(2)}`);
    const axes: uPlot.Axis[] = [{ stroke: "#9aa4b2", grid: { stroke: "#262c36" } },
                                 { stroke: "#9aa4b2", grid: { stroke: "#262c36" }, size: 56, values: compact }];
    this.charts.push(new uPlot({
      width: WIDTH, height: HEIGHT, axes, scales: { x },
      series: [{}, { label: "served", stroke: "#3d8bfd", width: 2, points: { show: true } },
               { label: "replaced", stroke: "#ff8c42", width: 2, points: { show: true } }],
    }, [xs, s.days.map((d) => d.served), s.days.map((d) => d.replaced)], tokensEl));
    this.charts.push(new uPlot({
      width: WIDTH, height: HEIGHT, axes, scales: { x, y: { range: [0, 1] } },
      series: [{}, { label: "precision", stroke: "#2fbf71", width: 2, points: { show: true },
                     value: (_u, v) => (v === null ? "–" : `${(v * 100).toFixed(0)}%`) }],
    }, [xs, s.days.map((d) => d.precision)], precisionEl));
  }
}
