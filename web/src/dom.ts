// DOM building without HTML parsing: every string becomes a text node or an attribute value,
// so names from the repository or from agents (file names, symbols, decision titles, memory
// atoms) are always inert. There is no innerHTML anywhere in this app.

export type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined>;

// Attributes this app sets; anything else (on* handlers, src, style...) is refused.
const ALLOWED = /^(class|id|title|role|type|value|placeholder|for|name|min|max|step|tabindex|colspan|disabled|checked|selected|hidden|rows|autocomplete|spellcheck|(data|aria)-[a-z0-9-]+)$/;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K, attrs?: Attrs | null, ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "href") {
      const href = String(value);
      if (!href.startsWith("#")) throw new Error(`only in-page links: ${href}`);
      el.setAttribute("href", href);
      continue;
    }
    if (!ALLOWED.test(name)) throw new Error(`attribute not allowed: ${name}`);
    el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, ...children);
  return el;
}

export function append(el: Node, ...children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(el: Node): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

export function replace(el: Node, ...children: (Child | Child[])[]): void {
  clear(el);
  append(el, ...children);
}

export function on<K extends keyof HTMLElementEventMap>(
  el: HTMLElement, type: K, fn: (e: HTMLElementEventMap[K]) => void,
): void {
  el.addEventListener(type, fn);
}

// A bar whose length is a share of the whole (CSSOM, not a style attribute: CSP allows it).
export function bar(share: number, cls: string, label: string): HTMLElement {
  const el = h("span", { class: `bar ${cls}`, title: label });
  el.style.width = `${Math.max(0, Math.min(1, share)) * 100}%`;
  return el;
}

export function fmtInt(n: number | null | undefined): string {
  return n === null || n === undefined ? "–" : Math.round(n).toLocaleString("en-US");
}

export function fmtTime(ts: number): string {
  const d = new Date(ts * 1000);
  return d.toLocaleTimeString("en-GB", { hour12: false }) + "." +
    String(d.getMilliseconds()).padStart(3, "0");
}

export function emptyState(title: string, text: string): HTMLElement {
  return h("div", { class: "empty" }, h("h3", null, title), h("p", null, text));
}
