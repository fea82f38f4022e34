// Ask: the context pack the editor or an agent would get for a question: each layer's tokens
// as a bar, the file ranking, and every hit with its score and the reasons behind it.

import { post } from "../api";
import { bar, fmtInt, h, on, replace } from "../dom";
import type { View } from "./view";

interface Hit {
  id: string; file: string; line: number; end_line: number; symbol: string; kind: string;
  score: number; why?: Record<string, unknown>;
}
interface RankedFile { file: string; score: number; why?: Record<string, unknown> }
interface Pack {
  context: string; tokens: number; layers: Record<string, number>; mode: string;
  hits: Hit[]; files?: RankedFile[]; explain?: string[]; partial: boolean; notice?: string;
}

const LAYER_NAMES: Record<string, string> = {
  L0: "L0 identity", L1: "L1 architecture", L2: "L2 communities", L3: "L3 code",
};

function reasons(why: Record<string, unknown> | undefined): string {
  if (!why) return "";
  return Object.entries(why).map(([k, v]) =>
    `${k} ${typeof v === "number" ? (Number.isInteger(v) ? v : v.toFixed(3)) : JSON.stringify(v)}`).join(" · ");
}

export class AskView implements View {
  readonly name = "ask";
  readonly title = "Ask";
  readonly el: HTMLElement;
  private readonly question: HTMLTextAreaElement;
  private readonly budget: HTMLInputElement;
  private readonly result: HTMLElement;
  private readonly button: HTMLButtonElement;

  constructor() {
    this.question = h("textarea", { id: "ask-question", rows: 2, placeholder: "Ask what an agent would ask: how does the session handle redirects?" });
    this.budget = h("input", { id: "ask-budget", type: "number", min: 50, max: 100000, step: 50, value: 1500 });
    this.button = h("button", { type: "submit", id: "ask-button" }, "Ask");
    this.result = h("div", { class: "ask-result", id: "ask-result" });
    const form = h("form", { class: "ask-form" }, this.question,
      h("label", null, "Budget ", this.budget, " tokens"), this.button);
    on(form, "submit", (e) => { e.preventDefault(); void this.ask(); });
    on(this.question, "keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); void this.ask(); }
    });
    this.el = h("div", { class: "view ask", id: "view-ask" }, h("h2", null, "Ask"),
      h("p", { class: "muted" }, "The context pack the editor or an agent gets for this question (asking here teaches nothing)."),
      form, this.result);
  }

  show(arg: string): void {
    if (arg && arg !== this.question.value) {
      this.question.value = arg;
      void this.ask();
    }
    this.question.focus();
  }

  private async ask(): Promise<void> {
    const question = this.question.value.trim();
    if (!question) return;
    this.button.disabled = true;
    replace(this.result, h("p", { class: "muted" }, "Asking…"));
    try {
      const pack = await post<Pack>("ask", { question, budget: Number(this.budget.value) || 1500 });
      this.render(pack);
    } catch (err) {
      replace(this.result, h("p", { class: "error" }, (err as Error).message));
    } finally {
      this.button.disabled = false;
    }
  }

  private render(p: Pack): void {
    const total = Math.max(1, p.tokens);
    const files: RankedFile[] = p.files?.length ? p.files : [...new Map(p.hits.map((x) => [x.file, x])).values()]
      .map((x) => ({ file: x.file, score: x.score }));
    replace(this.result,
      p.notice ? h("p", { class: "notice" }, p.notice) : null,
      h("p", { class: "muted", id: "ask-summary" }, `${fmtInt(p.tokens)} tokens · search mode ${p.mode}` + (p.partial ? " · partial (indexing)" : "")),
      h("div", { class: "layers", id: "ask-layers" }, Object.entries(p.layers).map(([name, tokens]) =>
        h("div", { class: "layer-row", "data-layer": name },
          h("span", { class: "layer-name" }, LAYER_NAMES[name] ?? name),
          h("span", { class: "bar-track" }, bar(tokens / total, `layer-${name}`, `${tokens} tokens`)),
          h("span", { class: "num" }, fmtInt(tokens))))),
      h("h3", null, "File ranking"),
      h("ol", { class: "ranking", id: "ask-files" }, files.map((f) =>
        h("li", { "data-file": f.file }, h("a", { href: `#brain/${encodeURIComponent(f.file)}` }, f.file),
          h("span", { class: "num" }, f.score.toFixed(4)), f.why ? h("div", { class: "muted" }, reasons(f.why)) : null))),
      h("h3", null, "Hits"),
      h("table", { class: "hits", id: "ask-hits" },
        h("thead", null, h("tr", null, h("th", { class: "num" }, "#"), h("th", null, "symbol"), h("th", null, "where"),
          h("th", { class: "num" }, "score"), h("th", null, "reasons"))),
        h("tbody", null, p.hits.map((x, i) => h("tr", { "data-node": x.id },
          h("td", { class: "num" }, i + 1),
          h("td", null, h("a", { href: `#brain/${encodeURIComponent(x.id)}` }, x.symbol), h("span", { class: "muted" }, ` ${x.kind}`)),
          h("td", null, `${x.file}:${x.line}`),
          h("td", { class: "num" }, x.score.toFixed(4)),
          h("td", { class: "muted" }, reasons(x.why)))))),
      h("h3", null, "The context"),
      h("pre", { class: "context", id: "ask-context" }, p.context),
      p.explain?.length ? h("details", null, h("summary", null, "Why this context"),
        h("pre", { class: "explain" }, p.explain.join("\n"))) : null);
  }
}
