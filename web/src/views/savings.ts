// Savings: the one savings report (usage.db, the same as `neuralmind savings` and the
// status): answers served, their o200k tokens against the whole codebase's, and precision by
// use (the share of an answer's top five files that the work after it opened or changed).

import uPlot from "uplot";

import { emptyState, fmtInt, h, replace } from "../dom";
import type { BrainEvent } from "../live";
import { BoardView } from "./view";

interface Figures {
  answers: number; tokens_served: number; codebase_tokens: number; tokens_saved: number;
  ratio: number | null; settled: number; acted_on: number;
  files_used_per_answer: number | null; precision_at_5: number | null;
}
interface Day extends Figures { day: string }
interface Savings {
  days: Day[]; kinds: Record<string, Figures>; overall: Figures; codebase_tokens_now: number | null;
}

const WIDTH = 760;
const HEIGHT = 240;

export class SavingsView extends BoardView<Savings> {
  private charts: uPlot[] = [];
  private timer = 0;

  constructor() {
    super("savings", "Savings", "savings", "savings-body");
  }

  // Always asked again when shown: use (opens, edits, commits) moves the figures between
  // questions, and the engine only reads usage.db again when something changed.
  protected opened(): void {
    void this.refresh();
  }

  onEvent(e: BrainEvent): void {
    if (e.kind !== "query") return;
    if (this.visible) {
      window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => void this.refresh(), 1000);
    }
  }

  protected render(s: Savings): void {
    this.charts.forEach((c) => c.destroy());
    this.charts = [];
    if (!s.days.length) {
      replace(this.body, emptyState("No answer served yet",
        "Each answer the editor, an agent, a hook or the command line gets is counted here: the tokens it served against the tokens of the whole codebase it stands in for, and how many of its files the work after it used."));
      return;
    }
    const o = s.overall;
    const pct = (v: number | null) => (v === null ? "–" : `${(v * 100).toFixed(0)}%`);
    const tokensEl = h("div", { class: "chart", id: "chart-tokens" });
    const precisionEl = h("div", { class: "chart", id: "chart-precision" });
    replace(this.body,
      h("p", { id: "savings-totals" }, `${fmtInt(o.answers)} ${o.answers === 1 ? "answer" : "answers"}: ` +
        `${fmtInt(o.tokens_served)} tokens served` + (s.codebase_tokens_now === null
          ? " (the whole codebase is counted a minute after the server starts)"
          : ` instead of ${fmtInt(o.codebase_tokens)} (the whole codebase each time` +
            (o.ratio && o.ratio > 1 ? `, ${o.ratio.toFixed(1)}× fewer` : "") + ")") + `, since ${s.days[0].day}`),
      h("h3", null, "Tokens per day"), tokensEl,
      h("h3", null, "Precision by use"), precisionEl,
      h("table", { class: "channels", id: "savings-channels" },
        h("thead", null, h("tr", null, h("th", null, "answer"), h("th", { class: "num" }, "answers"),
          h("th", { class: "num" }, "followed by work"), h("th", { class: "num" }, "files used per answer"),
          h("th", { class: "num" }, "precision@5"))),
        h("tbody", null, Object.entries(s.kinds).map(([name, k]) => h("tr", { "data-kind": name },
          h("td", null, name), h("td", { class: "num" }, fmtInt(k.answers)), h("td", { class: "num" }, fmtInt(k.acted_on)),
          h("td", { class: "num" }, k.files_used_per_answer === null ? "–" : k.files_used_per_answer.toFixed(2)),
          h("td", { class: "num" }, pct(k.precision_at_5)))))));
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
               { label: "whole codebase", stroke: "#ff8c42", width: 2, points: { show: true } }],
    }, [xs, s.days.map((d) => d.tokens_served), s.days.map((d) => d.codebase_tokens)], tokensEl));
    this.charts.push(new uPlot({
      width: WIDTH, height: HEIGHT, axes, scales: { x, y: { range: [0, 1] } },
      series: [{}, { label: "precision@5", stroke: "#2fbf71", width: 2, points: { show: true },
                     value: (_u, v) => (v === null ? "–" : `${(v * 100).toFixed(0)}%`) }],
    }, [xs, s.days.map((d) => d.precision_at_5)], precisionEl));
  }
}
