// The live event stream (Server-Sent Events from /observatory/events) and what each event
// is about: the files a pulse lights up.

export interface BrainEvent {
  id: string;
  kind: string;
  ts: number;          // seconds since the epoch, when it happened
  origin: string;      // the process that published it
  data: Record<string, unknown>;
}

type Listener = (e: BrainEvent) => void;
const listeners: Listener[] = [];
const statusListeners: ((connected: boolean) => void)[] = [];
let source: EventSource | null = null;

export function onEvent(fn: Listener): void {
  listeners.push(fn);
}

export function onStatus(fn: (connected: boolean) => void): void {
  statusListeners.push(fn);
}

export function connect(): void {
  if (source) return;
  source = new EventSource("events");
  source.onopen = () => statusListeners.forEach((fn) => fn(true));
  source.onerror = () => statusListeners.forEach((fn) => fn(false));
  source.onmessage = (msg: MessageEvent<string>) => {
    let event: BrainEvent;
    try {
      event = JSON.parse(msg.data) as BrainEvent;
    } catch {
      return;
    }
    for (const fn of listeners) {
      try {
        fn(event);
      } catch (err) {
        console.error("event listener failed", err);
      }
    }
  };
}

function strings(value: unknown): string[] {
  if (typeof value === "string") return value ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(strings);
  return [];
}

export function fileOf(nodeId: string): string {
  const i = nodeId.indexOf("::");
  return i < 0 ? nodeId : nodeId.slice(0, i);
}

// The files an event is about (node ids folded into their files), for the pulses.
export function eventFiles(e: BrainEvent): string[] {
  const d = e.data;
  let ids: string[] = [];
  switch (e.kind) {
    case "query": ids = strings(d.files); break;
    case "file_activity": case "editor": ids = strings(d.file); break;
    case "synapse": ids = [...strings(d.files), ...strings(d.edges), ...strings(d.node),
                           ...strings(d.context)]; break;
    case "decision": case "memory": case "hook": ids = [...strings(d.files), ...strings(d.file)]; break;
    case "index": ids = d.phase === "updated" ? strings(d.files) : []; break;
    default: ids = [];
  }
  return [...new Set(ids.map(fileOf))];
}

// One line saying what happened, for the feeds.
export function describe(e: BrainEvent): string {
  const d = e.data;
  const s = (k: string) => (typeof d[k] === "string" ? (d[k] as string) : "");
  const n = (k: string) => (typeof d[k] === "number" ? (d[k] as number) : 0);
  switch (e.kind) {
    case "query": return `asked "${s("question")}" (${s("source")}): ${n("tokens")} tokens for ${n("replaced")}`;
    case "file_activity": return `${s("action")} ${s("file")}`.trim();
    case "editor": return `now in ${s("file")}`;
    case "synapse": return d.feedback ? `${s("feedback")} feedback on ${s("node")}`
      : `${n("pairs")} pairs reinforced`;
    case "decision": return `decision ${s("change")}: ${s("title")}`;
    case "index": return `index ${s("phase")}` + (d.total ? ` ${n("done")}/${n("total")}` : "");
    case "request": return `${s("channel")} ${s("method")} ${n("ms")} ms`;
    case "hook": return `hook ${s("event")} → ${s("agent")}`;
    case "memory": return `memory ${s("change")} ${s("label") || s("id")}`;
    default: return e.kind;
  }
}
