// The observatory page: a view per hash (#brain, #ask, #memory, #decisions, #dreams,
// #savings, #debug; "#brain/<node id>" deep-links a node), one live event stream for all.

import { get, onAuthError } from "./api";
import { h, replace } from "./dom";
import { connect, onEvent, onStatus } from "./live";
import { AskView } from "./views/ask";
import { BrainView } from "./views/brain";
import { DebugView } from "./views/debug";
import { DecisionsView } from "./views/decisions";
import { DreamsView } from "./views/dreams";
import { MemoryView } from "./views/memory";
import { SavingsView } from "./views/savings";
import type { View } from "./views/view";

interface Status { root: string; files: number; nodes: number; indexing: { phase: string; done: number; total: number } | null }

const views: View[] = [new BrainView(), new AskView(), new MemoryView(), new DecisionsView(),
                       new DreamsView(), new SavingsView(), new DebugView()];
let current: View | null = null;

function route(): void {
  const raw = location.hash.replace(/^#/, "");
  const slash = raw.indexOf("/");
  const name = slash < 0 ? raw : raw.slice(0, slash);
  let arg = "";
  try {
    arg = slash < 0 ? "" : decodeURIComponent(raw.slice(slash + 1));
  } catch {
    arg = "";
  }
  const view = views.find((v) => v.name === name) ?? views[0];
  if (current && current !== view) {
    current.el.hidden = true;
    current.hide?.();
  }
  current = view;
  view.el.hidden = false;
  document.querySelectorAll("nav a").forEach((a) =>
    a.classList.toggle("active", a.getAttribute("data-view") === view.name));
  document.body.dataset.view = view.name;
  view.show(arg);
}

function start(): void {
  const live = h("span", { class: "live off", id: "live-status", title: "live event stream" }, "offline");
  const root = h("span", { class: "root", id: "root" });
  const main = h("main", null, views.map((v) => { v.el.hidden = true; return v.el; }));
  const banner = h("div", { class: "banner", id: "banner", hidden: true });
  document.body.append(
    h("header", null, h("h1", null, "NeuralMind"), root,
      h("nav", null, views.map((v) => h("a", { href: `#${v.name}`, "data-view": v.name }, v.title))), live),
    banner, main);
  onStatus((ok) => {
    live.className = ok ? "live on" : "live off";
    replace(live, ok ? "live" : "reconnecting…");
  });
  onAuthError(() => {
    banner.hidden = false;
    replace(banner, "This page's session ended (the server restarted?). Open the observatory again from your editor or with `neuralmind serve`.");
  });
  onEvent((e) => views.forEach((v) => v.onEvent?.(e)));
  window.addEventListener("hashchange", route);
  void get<Status>("status").then((s) => {
    replace(root, s.root.split("/").filter(Boolean).pop() ?? s.root);
    root.title = s.root;
  }).catch(() => undefined);
  connect();
  route();
}

start();
