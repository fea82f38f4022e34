"""`neuralmind build`, `stats` and `validate`: the code-graph commands."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from neuralmind.cli.common import Progress, open_workspace, print_json
from neuralmind.events import publish


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("build", help="build or update the code graph of a workspace")
    p.add_argument("path", nargs="?", help="workspace folder (default: current folder)")
    p.add_argument("--json", action="store_true", help="print the build report as JSON")
    p.add_argument("--no-embed", action="store_true",
                   help="graph and keyword index only; skip computing embeddings")
    p.set_defaults(handler=cmd_build)

    p = sub.add_parser("stats", help="summarise the stored code graph")
    p.add_argument("path", nargs="?", help="workspace folder (default: current folder)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_stats)

    p = sub.add_parser("validate", help="check the stored graph against the IR contract")
    p.add_argument("path", nargs="?", help="workspace folder (default: current folder)")
    p.add_argument("--json", action="store_true", help="print the violations as JSON")
    p.set_defaults(handler=cmd_validate)


def _format_summary(d: dict[str, Any], title: str) -> str:
    lines = [title]
    langs = ", ".join(f"{lang} {n}" for lang, n in d["files_by_language"].items()) or "none"
    lines.append(f"  files        {sum(d['files_by_language'].values())} ({langs})")
    lines.append(f"  nodes        {d['nodes']}")
    lines.append(f"  edges        {d['edges_resolved'] + d['edges_heuristic']} "
                 f"({d['edges_resolved']} resolved, {d['edges_heuristic']} heuristic)")
    lines.append(f"  communities  {d['communities']}")
    skipped = d.get("skipped") or {}
    if skipped:
        parts = ", ".join(f"{reason} {v['count']}" for reason, v in skipped.items())
        lines.append(f"  skipped      {parts}")
    else:
        lines.append("  skipped      none")
    if d.get("partial_files"):
        lines.append(f"  partial      {len(d['partial_files'])} file(s) with syntax errors "
                     f"(e.g. {d['partial_files'][0]})")
    if d.get("failed_files"):
        lines.append(f"  failed       {len(d['failed_files'])} file(s) "
                     f"(e.g. {d['failed_files'][0]})")
    return "\n".join(lines)


def cmd_build(args: argparse.Namespace) -> int:
    if not args.no_embed:
        # numpy and the embedder's module: only a build that embeds needs them
        from neuralmind.index.embedder import bulk_embedding_process

        bulk_embedding_process()        # before any thread starts (see its docstring)
    progress = Progress(sys.stderr, quiet=args.quiet > 0)
    started = time.perf_counter()
    ws = open_workspace(args.path)
    root = ws.root
    try:
        report = ws.build(progress=progress, embed=not args.no_embed)
    finally:
        progress.finish()
    d = report.to_json()
    d["total_seconds"] = round(time.perf_counter() - started, 3)  # graph + search index
    d["embedded_nodes"] = ws.index.vector_count
    publish("index", phase="built", files=len(ws.graph.files), nodes=len(ws.graph.nodes),
            seconds=d["total_seconds"])
    if args.json:
        print_json(d)
        return 0
    title = (f"Built {root} in {d['total_seconds']:.2f} s (graph {d['seconds']:.2f} s; "
             f"{len(d['reextracted'])} parsed, {len(d['removed'])} removed; "
             f"{d['embedded_nodes']} nodes embedded)")
    print(_format_summary(d, title))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    ws = open_workspace(args.path)
    root, graph = ws.root, ws.graph
    s = graph.summary()
    s["community_list"] = [{"id": c.id, "name": c.name, "files": len(c.files), "size": c.size,
                            "description": c.description} for c in graph.communities]
    if args.json:
        print_json(s)
        return 0
    if not s["generation"]:
        print(f"{root}: no graph yet (run `neuralmind build`)")
        return 0
    built = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s["built_at"]))
    lines = [_format_summary(s, f"Graph of {root} (generation {s['generation']}, built {built})")]
    kinds = ", ".join(f"{k} {n}" for k, n in s["nodes_by_kind"].items())
    ekinds = ", ".join(f"{k} {n}" for k, n in s["edges_by_kind"].items())
    lines.append(f"  node kinds   {kinds or 'none'}")
    lines.append(f"  edge kinds   {ekinds or 'none'}")
    for c in s["community_list"][:15]:
        desc = f" - {c['description']}" if c["description"] else ""
        lines.append(f"    [{c['id']}] {c['name']}: {c['files']} files{desc}")
    if len(s["community_list"]) > 15:
        lines.append(f"    ... and {len(s['community_list']) - 15} more")
    print("\n".join(lines))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    ws = open_workspace(args.path)
    root, graph = ws.root, ws.graph
    problems = ws.validate()
    if args.json:
        print_json({"valid": not problems, "violations": problems,
                    "nodes": len(graph.nodes), "edges": len(graph.edges)})
    elif problems:
        print(f"{root}: {len(problems)} violation(s)")
        for p in problems:
            print(f"  {p}")
    else:
        print(f"{root}: graph valid ({len(graph.nodes)} nodes, {len(graph.edges)} edges, "
              f"schema {graph.schema})")
    return 1 if problems else 0
