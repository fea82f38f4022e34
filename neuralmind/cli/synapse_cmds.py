"""`neuralmind replay | next | synapse | memory | feedback`: the learning commands."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from neuralmind.cli.common import print_json, workspace_root
from neuralmind.cli.main import UsageError
from neuralmind.errors import EngineError

if TYPE_CHECKING:
    from neuralmind.engine import Workspace
    from neuralmind.synapse.layer import SynapseLayer


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="learn from an editing-event stream (JSON lines)",
                       description="Feed JSON-lines editing events into the learning path. Bad "
                       "lines are reported with their line number and skipped (exit 1).")
    p.add_argument("events", help="JSON-lines file, or - for stdin")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--json", action="store_true", help="summary as JSON")
    p.set_defaults(handler=cmd_replay)

    p = sub.add_parser("next", help="files most likely to be touched after FILE")
    p.add_argument("file", help="absolute, or relative to PATH")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_next)

    syn = sub.add_parser("synapse", help="inspect and maintain the synapse store")
    ssub = syn.add_subparsers(dest="synapse_command", metavar="ACTION")
    p = ssub.add_parser("stats", help="counts per namespace, strongest pairs, hubs")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_stats)
    p = ssub.add_parser("prune", help="apply decay and delete weak (or stale) synapses")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--older-than", type=float, default=None, metavar="DAYS",
                   help="also delete non-LTP synapses not reinforced for DAYS days")
    p.set_defaults(handler=cmd_prune)
    p = ssub.add_parser("export", help="write a bundle JSON (default .neuralmind/synapse_bundle.json)")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("-o", "--output", default=None)
    p.set_defaults(handler=cmd_export)
    p = ssub.add_parser("import", help="load a bundle JSON (MAX semantics, into shared)")
    p.add_argument("bundle")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--namespace", default="shared")
    p.set_defaults(handler=cmd_import)
    syn.set_defaults(handler=lambda a: _group_help(syn))

    mem = sub.add_parser("memory", help="agent-readable memory files")
    msub = mem.add_subparsers(dest="memory_command", metavar="ACTION")
    p = msub.add_parser("export", help="write .neuralmind/SYNAPSE_MEMORY.md")
    p.add_argument("path", nargs="?", default=".")
    p.set_defaults(handler=cmd_memory_export)
    mem.set_defaults(handler=lambda a: _group_help(mem))

    p = sub.add_parser("feedback", help="reinforce or weaken a retrieved node")
    p.add_argument("node", help="node id: path or path::Qualified.name")
    p.add_argument("path", nargs="?", default=".")
    sign = p.add_mutually_exclusive_group(required=True)
    sign.add_argument("--positive", action="store_true")
    sign.add_argument("--negative", action="store_true")
    p.add_argument("--context", nargs="*", default=[], metavar="NODE",
                   help="nodes it was useful with (positive feedback)")
    p.set_defaults(handler=cmd_feedback)


def _group_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _workspace(path: str) -> Workspace:
    from neuralmind.engine import Workspace

    return Workspace(workspace_root(path))


def _layer(ws: Workspace) -> SynapseLayer:
    layer = ws.synapses
    if layer.store.disabled:
        print(f"[neuralmind] {layer.store.disabled}", file=sys.stderr)
    return layer


# --- replay -----------------------------------------------------------------------------
def cmd_replay(args: argparse.Namespace) -> int:
    ws = _workspace(args.path)
    layer = _layer(ws)
    if args.events == "-":
        summary = replay_stream(layer, sys.stdin, "<stdin>", ws)
    else:
        src = Path(args.events)
        try:
            with open(src, encoding="utf-8", errors="replace") as f:
                summary = replay_stream(layer, f, str(src), ws)
        except OSError as e:
            raise UsageError(f"{src}: {e.strerror or e}") from None
    if args.json:
        print_json(summary)
    else:
        print(f"replayed {summary['events']} events in {summary['sessions']} sessions; "
              f"{summary['bad_lines']} bad lines skipped")
    return 1 if summary["bad_lines"] else 0


def replay_stream(layer: SynapseLayer, lines: TextIO, name: str, ws: Workspace | None = None,
                  ) -> dict[str, Any]:
    """Feed each JSON line to `layer.editing_event`; report bad lines on stderr and go on."""
    if ws is not None and layer.hits_provider is None:
        layer.hits_provider = _hits_provider(ws)
    last_ts: dict[str, float] = {}
    sessions: set[str] = set()
    events = bad = 0
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            session, kind, file, ts, query = _parse_event(raw)
            ts = ts if ts is not None else last_ts.get(session)
            layer.editing_event(session, kind, file, ts=ts, query=query)
        except ValueError as e:
            bad += 1
            print(f"{name}:{lineno}: {e}; line skipped", file=sys.stderr)
            continue
        if ts is not None:
            last_ts[session] = ts
        sessions.add(session)
        events += 1
    layer.close_sessions()
    return {"events": events, "sessions": len(sessions), "bad_lines": bad}


def _parse_event(raw: str) -> tuple[str, str, str, float | None, str | None]:
    try:
        ev = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON ({e.msg})") from None
    if not isinstance(ev, dict):
        raise ValueError("expected a JSON object")
    kind = ev.get("type")
    if not isinstance(kind, str):
        raise ValueError("missing 'type'")
    session = ev.get("session")
    if isinstance(session, int) and not isinstance(session, bool):
        session = str(session)
    if not isinstance(session, str) or not session:
        raise ValueError("missing 'session'")
    file = ev.get("file", "")
    if file is None:
        file = ""
    if not isinstance(file, str):
        raise ValueError("'file' must be a string")
    query = ev.get("query")
    if query is not None and not isinstance(query, str):
        raise ValueError("'query' must be a string")
    return session, kind, file, _parse_ts(ev.get("ts")), query


def _parse_ts(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"'ts' is not ISO-8601: {value!r}") from None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.timestamp()
    raise ValueError("'ts' must be an ISO-8601 string or epoch seconds")


def _hits_provider(ws: Workspace):  # noqa: ANN202 - Callable[[str], list[str]]
    """Top hits of a replayed question, when the workspace has been built (else none)."""

    def hits(query: str) -> list[str]:
        if not ws.graph.files:
            return []
        found, _mode, _notice = ws.search(query, k=5)
        return [h.node.id for h in found]

    return hits


# --- next / feedback --------------------------------------------------------------------
def cmd_next(args: argparse.Namespace) -> int:
    ws = _workspace(args.path)
    file = str(Path(args.file).expanduser())
    try:
        preds = ws.next_likely(file, k=args.k)
    except EngineError as e:
        raise UsageError(e.message) from None
    if args.json:
        print_json({"predictions": [{"file": f, "probability": round(p, 6)} for f, p in preds]})
        return 0
    if not preds:
        print("no prediction yet: nothing learned about this file", file=sys.stderr)
    for f, p in preds:
        print(f"{p:6.1%}  {f}")
    return 0


def cmd_feedback(args: argparse.Namespace) -> int:
    ws = _workspace(args.path)
    try:
        out = ws.feedback(args.node, bool(args.positive), list(args.context))
    except EngineError as e:
        raise UsageError(e.message) from None
    if out["recorded"]:
        context = f" with {len(out['context'])} context node(s)" if out["context"] else ""
        print(f"{'reinforced' if out['positive'] else 'weakened'} {out['node']}{context}")
        return 0
    if not ws.config.learning:       # a choice, not a failure
        print(f"not recorded: {out['reason']}; {out['node']} unchanged")
        return 0
    print(f"neuralmind: error: feedback not recorded: {out['reason']}", file=sys.stderr)
    return 1


# --- synapse / memory -------------------------------------------------------------------
def cmd_stats(args: argparse.Namespace) -> int:
    stats = _layer(_workspace(args.path)).stats()
    if args.json:
        print_json(stats)
        return 0
    print(f"store: {stats.get('path', '?')} (schema v{stats.get('schema_version', '?')})")
    print(f"active namespace: {stats['active_namespace']}")
    print(f"synapses: {stats.get('synapses', 0):,} ({stats.get('ltp', 0):,} LTP), "
          f"transitions: {stats.get('transitions', 0):,}, questions: {stats.get('questions', 0):,}")
    for ns, c in (stats.get("namespaces") or {}).items():
        print(f"  {ns}: {c['synapses']:,} synapses, {c['transitions']:,} transitions, "
              f"{c['activations']:,} active nodes")
    for p in stats.get("top_pairs") or []:
        print(f"  {p['weight']:.3f}{' LTP' if p['ltp'] else ''}  {p['a']} <-> {p['b']} "
              f"({p['namespace']})")
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    if args.older_than is not None and args.older_than < 0:
        raise UsageError("--older-than must be >= 0")
    layer = _layer(_workspace(args.path))
    layer.decay_pass()
    removed = layer.prune(older_than_days=args.older_than)
    print(f"pruned {removed.get('synapses', 0)} synapses, {removed.get('transitions', 0)} "
          f"transitions, {removed.get('activations', 0)} activations")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    layer = _layer(_workspace(args.path))
    try:
        path = layer.export_bundle(args.output)
    except OSError as e:
        raise UsageError(f"cannot write bundle: {e}") from None
    print(path)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    layer = _layer(_workspace(args.path))
    try:
        created = layer.import_bundle(args.bundle, namespace=args.namespace)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(f"imported into {args.namespace}: {created} new synapses")
    return 0


def cmd_memory_export(args: argparse.Namespace) -> int:
    layer = _layer(_workspace(args.path))
    try:
        path = layer.export_memory()
    except OSError as e:
        raise UsageError(f"cannot write memory file: {e}") from None
    print(path)
    return 0
