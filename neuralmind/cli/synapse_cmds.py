"""`neuralmind replay | next | synapse | feedback`: the learning commands (`memory export`:
memory_cmds)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from neuralmind.cli.common import open_workspace, print_json
from neuralmind.cli.remote import from_server, local_argument
from neuralmind.errors import InvalidArgument
from neuralmind.synapse.replay import replay

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
    local_argument(p)
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


def _layer(ws: Workspace) -> SynapseLayer:
    layer = ws.synapses
    if layer.disabled:
        print(f"[neuralmind] {layer.disabled}", file=sys.stderr)
    return layer


# --- replay -----------------------------------------------------------------------------
def cmd_replay(args: argparse.Namespace) -> int:
    layer = _layer(open_workspace(args.path))
    name = "<stdin>" if args.events == "-" else args.events

    def bad_line(lineno: int, why: str) -> None:
        print(f"{name}:{lineno}: {why}; line skipped", file=sys.stderr)

    if args.events == "-":
        summary = replay(layer, sys.stdin, bad_line)
    else:
        try:
            with open(args.events, encoding="utf-8", errors="replace") as f:
                summary = replay(layer, f, bad_line)
        except OSError as e:
            raise InvalidArgument(f"{args.events}: {e.strerror or e}") from None
    if args.json:
        print_json(summary)
    else:
        print(f"replayed {summary['events']} events in {summary['sessions']} sessions; "
              f"{summary['bad_lines']} bad lines skipped")
    return 1 if summary["bad_lines"] else 0


# --- next / feedback --------------------------------------------------------------------
def cmd_next(args: argparse.Namespace) -> int:
    file = str(Path(args.file).expanduser())
    preds = from_server(args, "next", {"file": file, "k": args.k})
    if preds is None:
        preds = [{"file": f, "probability": round(p, 6)}
                 for f, p in open_workspace(args.path).next_likely(file, k=args.k)]
    if args.json:
        print_json({"predictions": preds})
        return 0
    if not preds:
        print("no prediction yet: nothing learned about this file", file=sys.stderr)
    for pred in preds:
        print(f"{pred['probability']:6.1%}  {pred['file']}")
    return 0


def cmd_feedback(args: argparse.Namespace) -> int:
    ws = open_workspace(args.path)
    out = ws.feedback(args.node, bool(args.positive), list(args.context))
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
    stats = _layer(open_workspace(args.path)).stats()
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
        raise InvalidArgument("--older-than must be >= 0")
    layer = _layer(open_workspace(args.path))
    layer.decay_pass()
    removed = layer.prune(older_than_days=args.older_than)
    print(f"pruned {removed.get('synapses', 0)} synapses, {removed.get('transitions', 0)} "
          f"transitions, {removed.get('activations', 0)} activations")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    layer = _layer(open_workspace(args.path))
    try:
        path = layer.export_bundle(args.output)
    except OSError as e:
        raise InvalidArgument(f"cannot write bundle: {e}") from None
    print(path)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    layer = _layer(open_workspace(args.path))
    try:
        created = layer.import_bundle(args.bundle, namespace=args.namespace)
    except ValueError as e:
        raise InvalidArgument(str(e)) from None
    print(f"imported into {args.namespace}: {created} new synapses")
    return 0


def cmd_memory_export(args: argparse.Namespace) -> int:
    layer = _layer(open_workspace(args.path))
    try:
        path = layer.export_memory()
    except OSError as e:
        raise InvalidArgument(f"cannot write memory file: {e}") from None
    print(path)
    return 0
