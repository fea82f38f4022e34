// Brain: the code graph (communities -> files -> symbols) with the synapses learned from use,
// lit up by live events. Files and communities are drawn at once; a file's symbols are loaded
// when someone drills into it, so whole Django (42k nodes) stays a 2.9k-node drawing.

import Graph from "graphology";
import Sigma from "sigma";

import { get } from "../api";
import { append, clear, emptyState, fmtInt, h, on, replace } from "../dom";
import { around, communityColor, layout, mix } from "../layout";
import { describe, eventFiles, fileOf, type BrainEvent } from "../live";
import type { View } from "./view";

interface Community { id: number; name: string; size: number; files: number; description: string }
interface BrainData {
  generation: number;
  communities: Community[];
  files: [string, number, number, string][];
  edges: [number, number, number][];
  synapses: [number, number, number][];
  nodes: number;
}
interface Decision { id: string; title: string; status: string; reason: string; symbol: string | null }
interface NodeDetail {
  id: string; kind: string; name: string; qualname: string; file: string; line: number;
  end_line: number; language: string; signature: string; docstring: string;
  community: { id: number; name: string } | null;
  decisions: Decision[];
  synapses: { id: string; weight: number }[];
  next_likely: { file: string; probability: number }[];
  memory: { id: string; label?: string; text?: string; state?: string }[];
  symbols: { id: string; name: string; kind: string; line: number }[];
  symbols_total?: number;
}

const PULSE_MS = 1600;
// A pulse is redrawn at ~20 frames a second, not 60: enough for the eye, and a third of
// the rendering work (software WebGL on a 2-core machine competes with the server).
const PULSE_FRAME_MS = 50;
const PULSE_LAYER = "pulses";
const PULSE_COLOR: Record<string, string> = {
  query: "#3d8bfd", file_activity: "#2fbf71", editor: "#f8f9fa", synapse: "#ff8c42",
  decision: "#c77dff", index: "#22d3ee", memory: "#ffd166", hook: "#f15bb5",
};
const EDGE_COLOR = "#343a46";
const LEARNED_COLOR = "#ff8c42";
const SYMBOL_COLOR = "#adb5bd";
const LOG_SIZE = 40;
const COMMUNITY = "community:";

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

export class BrainView implements View {
  readonly name = "brain";
  readonly title = "Brain";
  readonly el: HTMLElement;
  private readonly canvas: HTMLElement;
  private readonly panel: HTMLElement;
  private readonly log: HTMLOListElement;
  private readonly summary: HTMLElement;
  private readonly search: HTMLInputElement;
  private graph = new Graph();
  private renderer: Sigma | null = null;
  private data: BrainData | null = null;
  private loading: Promise<void> | null = null;
  private generation = -1;
  private visible = false;
  private pulses = new Map<string, { start: number; color: string }>();
  private frame = 0;
  private expanded: string | null = null;
  private selected: string | null = null;
  private pending = "";
  private reloadTimer = 0;

  constructor() {
    this.canvas = h("div", { class: "graph", id: "brain-graph" });
    this.search = h("input", { type: "search", id: "brain-search", placeholder: "Find a file…",
                               autocomplete: "off", spellcheck: "false" });
    this.summary = h("p", { class: "muted", id: "brain-summary" }, "Loading the graph…");
    this.panel = h("section", { class: "node-panel", id: "node-panel" },
      h("p", { class: "muted" }, "Click a community, a file or a symbol."));
    this.log = h("ol", { class: "feed", id: "pulse-log" });
    const fit = h("button", { type: "button", id: "brain-fit", title: "Show the whole graph" }, "Fit");
    on(fit, "click", () => { void this.renderer?.getCamera().animatedReset({ duration: 400 }); });
    this.el = h("div", { class: "view brain", id: "view-brain" },
      this.canvas,
      h("aside", { class: "side" }, this.summary, h("div", { class: "row" }, this.search, fit), this.panel,
        h("h3", null, "Live"), this.log,
        h("p", { class: "legend" }, ...Object.entries(PULSE_COLOR).map(([k]) =>
          h("span", { class: `dot pulse-${k}`, title: k }, k)))));
    on(this.search, "keydown", (e) => {
      if (e.key === "Enter") this.find(this.search.value.trim());
    });
  }

  show(arg: string): void {
    this.visible = true;
    if (this.pulses.size && !this.frame) this.schedule();
    this.pending = arg;
    void this.ensureLoaded().then(() => {
      this.renderer?.resize();
      this.renderer?.refresh();
      if (this.pending) void this.select(this.pending);
    });
  }

  hide(): void {
    this.visible = false;
  }

  private ensureLoaded(): Promise<void> {
    if (!this.loading) this.loading = this.load();
    return this.loading;
  }

  private async load(): Promise<void> {
    let data: BrainData;
    try {
      data = await get<BrainData>("brain");
    } catch (err) {
      replace(this.summary, `The graph could not be loaded: ${(err as Error).message}`);
      this.loading = null;
      return;
    }
    if (this.renderer && data.generation === this.generation) return;   // nothing new
    this.data = data;
    this.generation = data.generation;
    if (!data.files.length) {
      replace(this.canvas, emptyState("Nothing indexed yet",
        "The graph appears here once the workspace is indexed (the editor does it in the background; `neuralmind build` does it from a terminal)."));
      replace(this.summary, "No files indexed.");
      return;
    }
    this.build(data);
    replace(this.summary, `${fmtInt(data.files.length)} files in ${fmtInt(data.communities.length)} communities, ` +
      `${fmtInt(data.nodes)} nodes; ${fmtInt(data.synapses.length)} learned synapses drawn.`);
    if (!this.renderer) {
      clear(this.canvas);
      this.renderer = new Sigma(this.graph, this.canvas, {
        allowInvalidContainer: true, zIndex: true, labelRenderedSizeThreshold: 4, labelDensity: 0.6,
        labelColor: { color: "#c9d1d9" }, labelFont: "system-ui, sans-serif", labelSize: 12,
        defaultEdgeColor: EDGE_COLOR, hideEdgesOnMove: this.graph.size > 20000,
      });
      this.renderer.on("clickNode", ({ node }) => { location.hash = `#brain/${encodeURIComponent(node)}`; });
      this.renderer.on("clickStage", () => this.deselect());
      this.renderer.createCanvasContext(PULSE_LAYER, { style: { pointerEvents: "none" } });
      this.renderer.resize(true);                                   // sizes the new layer too
      this.renderer.on("afterRender", () => this.drawPulses());   // the camera moved
      this.renderer.once("afterRender", () => {
        performance.mark("brain-painted");
        document.body.dataset.brain = "painted";
      });
    }
  }

  private build(data: BrainData): void {
    const g = new Graph();
    const rank = new Map<number, number>();
    [...data.communities].sort((a, b) => b.files - a.files || a.id - b.id)
      .forEach((c, i) => rank.set(c.id, i));
    const { points, groups } = layout(data.files.length, (i) => data.files[i][1], (i) => data.files[i][2]);
    const names = new Map(data.communities.map((c) => [c.id, c]));
    for (const grp of groups) {
      const c = names.get(grp.id);
      const color = communityColor(rank.get(grp.id) ?? -1);
      g.addNode(COMMUNITY + grp.id, {
        x: grp.center.x, y: grp.center.y, size: 6 + Math.sqrt(grp.members.length) * 1.5,
        color: mix(color, "#0d1117", 0.35),
        label: c ? c.name : "(no community)", kind: "community", community: grp.id,
        forceLabel: true, zIndex: 0,
      });
    }
    data.files.forEach(([path, community, nodes], i) => {
      const color = communityColor(rank.get(community) ?? -1);
      const size = 2 + Math.sqrt(nodes) * 0.7;
      g.addNode(path, { x: points[i].x, y: points[i].y, size, color,
                        label: basename(path), kind: "file", community, zIndex: 1 });
    });
    for (const [i, j, w] of data.edges) {
      const a = data.files[i][0], b = data.files[j][0];
      if (!g.hasEdge(a, b)) g.addEdge(a, b, { color: EDGE_COLOR, size: Math.min(2, 0.3 + Math.log1p(w) * 0.25) });
    }
    for (const [i, j, w] of data.synapses) {
      const a = data.files[i][0], b = data.files[j][0];
      const attrs = { color: LEARNED_COLOR, size: 0.8 + Math.min(3, w * 3), learned: true, zIndex: 2 };
      if (g.hasEdge(a, b)) g.mergeEdgeAttributes(g.edge(a, b) as string, attrs);
      else g.addEdge(a, b, attrs);
    }
    this.expanded = null;
    if (this.renderer) {
      this.graph.clear();
      this.graph.import(g.export());
    } else {
      this.graph = g;
    }
  }

  private scheduleReload(): void {
    window.clearTimeout(this.reloadTimer);
    this.reloadTimer = window.setTimeout(() => {
      this.loading = this.load();
    }, 1000);
  }

  // --- live --------------------------------------------------------------------------------
  onEvent(e: BrainEvent): void {
    if (e.kind === "request") return;
    if (e.kind === "index" && (e.data.phase === "swapped" || e.data.phase === "built")) {
      this.scheduleReload();
    }
    const files = eventFiles(e);
    const color = PULSE_COLOR[e.kind] ?? "#ffffff";
    const now = performance.now();
    for (const f of files) {
      if (this.graph.hasNode(f)) this.pulses.set(f, { start: now, color });
      else if (e.kind === "index" && this.data) this.scheduleReload();  // a new file
    }
    if (files.length || e.kind !== "index") this.record(e, files);
    if (this.visible && this.pulses.size && !this.frame) this.schedule();
  }

  private record(e: BrainEvent, files: string[]): void {
    const shown = Date.now() / 1000;
    const item = h("li", {
      class: `pulse-${e.kind}`, "data-kind": e.kind, "data-node": files[0] ?? "",
      "data-nodes": files.join("\n"), "data-ts": e.ts, "data-shown": shown.toFixed(4),
      "data-in-graph": files.some((f) => this.graph.hasNode(f)) ? "1" : "0",
    }, h("span", { class: "dot" }), describe(e));
    this.log.insertBefore(item, this.log.firstChild);
    while (this.log.children.length > LOG_SIZE) this.log.lastChild?.remove();
  }

  // Pulses are drawn on a 2D canvas of their own above the graph: a frame redraws a few
  // rings, never the WebGL scene (re-rendering the graph for every frame of every pulse made
  // the page's software rendering compete with the editor's server for the CPU).
  private animate(): void {
    this.frame = 0;
    this.drawPulses();
    if (this.pulses.size) this.schedule();
  }

  private drawPulses(): void {
    const renderer = this.renderer;
    const canvas = renderer?.getCanvases()[PULSE_LAYER];
    const ctx = canvas?.getContext("2d");
    if (!renderer || !ctx) return;
    const { width, height } = renderer.getDimensions();
    ctx.clearRect(0, 0, width, height);
    const now = performance.now();
    for (const [node, p] of this.pulses) {
      const t = (now - p.start) / PULSE_MS;
      const display = this.graph.hasNode(node) ? renderer.getNodeDisplayData(node) : undefined;
      if (t >= 1 || !display) {
        this.pulses.delete(node);
        continue;
      }
      const k = 1 - t;
      const at = renderer.framedGraphToViewport(display);
      const r = renderer.scaleSize(display.size);
      ctx.globalAlpha = 0.35 * k;
      ctx.fillStyle = p.color;
      ctx.beginPath();
      ctx.arc(at.x, at.y, r * (1 + k), 0, 2 * Math.PI);
      ctx.fill();
      ctx.globalAlpha = k;
      ctx.strokeStyle = p.color;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.arc(at.x, at.y, r + 4 + 18 * t, 0, 2 * Math.PI);
      ctx.stroke();
    }
    ctx.globalAlpha = 1;
  }

  private schedule(): void {
    this.frame = window.setTimeout(() => requestAnimationFrame(() => this.animate()), PULSE_FRAME_MS);
  }

  // --- selection and drill-down ------------------------------------------------------------
  private find(text: string): void {
    if (!text || !this.data) return;
    const q = text.toLowerCase();
    const files = this.data.files.map((f) => f[0]);
    const hit = files.find((f) => f.toLowerCase() === q) ?? files.find((f) => basename(f).toLowerCase() === q)
      ?? files.find((f) => f.toLowerCase().includes(q));
    if (hit) location.hash = `#brain/${encodeURIComponent(hit)}`;
    else replace(this.panel, h("p", { class: "muted" }, `No file matches "${text}".`));
  }

  private deselect(): void {
    this.collapse();
    this.selected = null;
    replace(this.panel, h("p", { class: "muted" }, "Click a community, a file or a symbol."));
  }

  private focus(node: string, ratio: number): void {
    const display = this.renderer?.getNodeDisplayData(node);
    if (display) void this.renderer?.getCamera().animate({ x: display.x, y: display.y, ratio }, { duration: 400 });
  }

  async select(id: string): Promise<void> {
    this.pending = "";
    await this.ensureLoaded();
    if (id.startsWith(COMMUNITY)) {
      this.showCommunity(Number(id.slice(COMMUNITY.length)));
      return;
    }
    this.selected = id;
    const file = fileOf(id);
    if (this.graph.hasNode(file) && this.expanded !== file) this.collapse();
    let detail: NodeDetail;
    try {
      detail = await get<NodeDetail>("node", { id });
    } catch (err) {
      replace(this.panel, h("p", { class: "error" }, (err as Error).message));
      return;
    }
    if (this.selected !== id) return;
    if (detail.kind === "file") this.expand(detail);
    this.focus(id, detail.kind === "file" ? 0.5 : 0.25);
    this.renderPanel(detail);
  }

  private showCommunity(cid: number): void {
    const c = this.data?.communities.find((x) => x.id === cid);
    this.collapse();
    this.focus(COMMUNITY + cid, 0.6);
    const files = (this.data?.files ?? []).filter((f) => f[1] === cid).sort((a, b) => b[2] - a[2]);
    replace(this.panel,
      h("h2", null, c ? c.name : "(no community)"),
      h("p", { class: "muted" }, `community · ${fmtInt(files.length)} files · ${fmtInt(c?.size ?? 0)} nodes`),
      c?.description ? h("p", null, c.description) : null,
      h("h3", null, "Largest files"),
      h("ul", { class: "links" }, files.slice(0, 25).map(([path, , n]) =>
        h("li", null, link(`#brain/${encodeURIComponent(path)}`, path), h("span", { class: "muted" }, ` ${n}`)))));
  }

  private expand(detail: NodeDetail): void {
    if (this.expanded === detail.file || !this.graph.hasNode(detail.file)) return;
    this.collapse();
    this.expanded = detail.file;
    const parent = this.graph.getNodeAttributes(detail.file);
    const spots = around({ x: parent.x as number, y: parent.y as number }, detail.symbols.length, 0.45);
    detail.symbols.forEach((s, i) => {
      if (this.graph.hasNode(s.id)) return;
      this.graph.addNode(s.id, { x: spots[i].x, y: spots[i].y, size: 3, color: SYMBOL_COLOR, label: s.name, kind: "symbol", zIndex: 2,
                                 forceLabel: detail.symbols.length <= 12 });
      this.graph.addEdge(detail.file, s.id, { color: "#4b5263", size: 0.4 });
    });
  }

  private collapse(): void {
    if (!this.expanded) return;
    const file = this.expanded;
    this.expanded = null;
    this.graph.filterNodes((n, a) => a.kind === "symbol" && fileOf(n) === file)
      .forEach((n) => this.graph.dropNode(n));
  }

  private renderPanel(d: NodeDetail): void {
    const where = d.kind === "file" ? d.file : `${d.file}:${d.line}`;
    replace(this.panel,
      h("h2", { class: "node-name" }, d.kind === "file" ? d.file : d.qualname || d.name),
      h("p", { class: "muted" }, `${d.kind} · ${d.language} · ${where}`,
        d.community ? " · " : "", d.community ? link(`#brain/${COMMUNITY}${d.community.id}`, d.community.name) : null),
      d.signature ? h("pre", { class: "code" }, d.signature) : null,
      d.docstring ? h("p", { class: "doc" }, d.docstring) : null,
      section("Decisions", d.decisions, (x) => h("li", { class: `status-${x.status.toLowerCase()}` },
        h("span", { class: "badge" }, x.status), " ", link(`#decisions/${encodeURIComponent(x.id)}`, x.title),
        x.reason ? h("div", { class: "muted" }, x.reason) : null),
        "No decision governs it."),
      section("Memory", d.memory, (m) => h("li", null, m.label ?? m.text ?? m.id),
        "No memory atom is about it yet."),
      section("Next likely", d.next_likely, (x) => h("li", null,
        link(`#brain/${encodeURIComponent(x.file)}`, x.file), h("span", { class: "muted" }, ` ${(x.probability * 100).toFixed(0)}%`)),
        "Nothing learned yet: files worked on after this one appear here."),
      section("Strongest synapses", d.synapses, (x) => h("li", null,
        link(`#brain/${encodeURIComponent(x.id)}`, x.id), h("span", { class: "muted" }, ` ${x.weight.toFixed(3)}`)),
        "No synapse yet."),
      d.kind === "file" ? section(`Symbols (${fmtInt(d.symbols_total ?? d.symbols.length)})`, d.symbols, (s) =>
        h("li", null, link(`#brain/${encodeURIComponent(s.id)}`, s.name), h("span", { class: "muted" }, ` ${s.kind} :${s.line}`)),
        "No symbols.") : null);
  }
}

function link(href: string, text: string): HTMLAnchorElement {
  return h("a", { href }, text);
}

function section<T>(title: string, items: T[], item: (x: T) => HTMLElement, empty: string): HTMLElement {
  const el = h("div", { class: "panel-section" }, h("h3", null, title));
  if (!items.length) append(el, h("p", { class: "muted" }, empty));
  else append(el, h("ul", { class: "links" }, items.map(item)));
  return el;
}
