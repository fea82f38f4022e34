"""`neuralmind decisions ...` and `neuralmind init-hook`: decision memory from the terminal.

Handlers translate arguments into DecisionStore calls and results into text or
JSON. Search output always names the mode that ran: in the header, in the empty
result, and with --json as a `[neuralmind] search mode: X` line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from neuralmind.cli.common import open_workspace, print_json, root_argument
from neuralmind.errors import InvalidArgument

if TYPE_CHECKING:
    from neuralmind.memory.decisions.record import Decision
    from neuralmind.memory.decisions.store import DecisionStore


def register(sub: argparse._SubParsersAction) -> None:
    top = sub.add_parser("decisions", help="record, find and audit the decisions behind the code")
    dsub = top.add_subparsers(dest="decisions_command", metavar="ACTION")
    # an unknown decision id is a failed lookup here (exit 1), not a usage error
    top.set_defaults(handler=lambda args: _help(top), exit_status={"not_found": 1})

    p = dsub.add_parser("record", help="store a decision with its rationale")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--title", required=True)
    p.add_argument("--rationale", required=True)
    p.add_argument("--commit", help="anchor commit (default HEAD)")
    p.add_argument("--files", nargs="+", default=[], metavar="FILE")
    p.add_argument("--symbols", nargs="+", default=[], metavar="PATH::QUALNAME",
                   help="symbols the decision governs; other changes to their files do not make it stale")
    p.add_argument("--type", dest="decision_type", default="architecture")
    p.add_argument("--rejected", nargs="+", default=[], metavar="ALTERNATIVE")
    p.add_argument("--evidence", nargs="+", default=[], metavar="REF")
    p.add_argument("--confidence", type=float, default=0.8)
    p.add_argument("--tags", nargs="+", default=[])
    p.add_argument("--depends-on", nargs="+", default=[], metavar="ID")
    p.add_argument("--author")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_record)

    p = dsub.add_parser("query", help="find decisions for keywords or a question")
    p.add_argument("question")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--mode", help="hybrid (default), semantic or keyword")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--status", default="ACTIVE", help="ACTIVE (default), STALE, INVALIDATED or ALL")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_query)

    p = dsub.add_parser("show", help="full records of decisions")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--path", default=".")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_show)

    p = dsub.add_parser("audit", help="list decisions and what needs attention")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--stale", action="store_true", help="only STALE or older than 90 days")
    p.add_argument("--orphaned", action="store_true", help="only those whose commit left history")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.set_defaults(handler=cmd_audit)

    p = dsub.add_parser("amend", help="change a decision (evidence and rejected alternatives append)")
    p.add_argument("id")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--title")
    p.add_argument("--rationale")
    p.add_argument("--evidence", nargs="+", metavar="REF")
    p.add_argument("--rejected", nargs="+", metavar="ALTERNATIVE")
    p.add_argument("--files", nargs="+", metavar="FILE")
    p.add_argument("--symbols", nargs="+", metavar="PATH::QUALNAME")
    p.add_argument("--tags", nargs="+")
    p.add_argument("--confidence", type=float)
    p.add_argument("--type", dest="decision_type")
    p.add_argument("--depends-on", nargs="+", metavar="ID")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_amend)

    p = dsub.add_parser("invalidate", help="mark a decision INVALIDATED")
    p.add_argument("id")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--reason", required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_invalidate)

    p = dsub.add_parser("restore", help="make a decision ACTIVE again, re-anchored to a commit")
    p.add_argument("id")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--commit", help="default HEAD")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_restore)

    p = dsub.add_parser("reaffirm", help="the pending change respects an ACTIVE decision: it "
                                         "stays ACTIVE when that change is committed")
    p.add_argument("id")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--note", default="", help="why the change respects it")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_reaffirm)

    p = dsub.add_parser("supersede", help="record a new decision replacing one (the old one "
                                          "is invalidated; each names the other)")
    p.add_argument("id")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--title", required=True)
    p.add_argument("--rationale", required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_supersede)

    p = dsub.add_parser("scan", help="mark STALE the decisions the last commit changed the code of")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--commit", default="HEAD", help="the commit to scan (default HEAD)")
    p.add_argument("--quiet", action="store_true", help="print only what went STALE")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_scan)

    p = dsub.add_parser("export", help="write every decision as JSON or Markdown")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--format", choices=("md", "json"), default="json")
    p.add_argument("--output", help="file to write (default stdout)")
    p.set_defaults(handler=cmd_export)

    p = dsub.add_parser("import", help="read an export; decisions already present are skipped")
    p.add_argument("file")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--format", choices=("md", "json"), help="default: detected")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_import)

    p = dsub.add_parser("eval", help="score search modes on a query set (scratch store, never yours)")
    p.add_argument("path", nargs="?", default=".", help="ignored: the eval never touches a project")
    p.add_argument("--queries", required=True, help="query set (decisions, questions, answers)")
    p.add_argument("--mode", choices=("all", "keyword", "keyword-like", "semantic", "hybrid"),
                   default="all")
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--output")
    p.set_defaults(handler=cmd_eval)

    p = sub.add_parser("init-hook", help="install the post-commit hook that runs `decisions scan`")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_init_hook)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _store(path: str) -> DecisionStore:
    return open_workspace(path).decisions


def _err(message: str) -> int:
    print(f"neuralmind: error: {message}", file=sys.stderr)
    return 1


def _print_record(d: Decision, header: str = "##") -> None:
    print(f"{header} {d.title}  [{d.status}]")
    print(f"id: {d.id} · {d.decision_type} · confidence {d.confidence:.2f} · {d.created_at[:10]}"
          + (f" · commit {d.commit_sha[:12]}" if d.commit_sha else ""))
    if d.files_affected:
        print("files: " + ", ".join(d.files_affected))
    if d.symbols_affected:
        print("symbols: " + ", ".join(d.symbols_affected))
    print()
    print(d.rationale)
    if d.rejected_alternatives:
        print("\nrejected: " + "; ".join(d.rejected_alternatives))
    if d.evidence:
        print("evidence:")
        for e in d.evidence:
            print(f"  - {e}")
    print()


def _single(args: argparse.Namespace, d: Decision, verb: str) -> int:
    if args.json:
        print_json(d.to_json())
    else:
        print(f"{verb} {d.id}: {d.title} [{d.status}]")
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    store = _store(args.path)
    d = store.record(args.title, args.rationale, files=args.files, symbols=args.symbols,
                     decision_type=args.decision_type, rejected=args.rejected, evidence=args.evidence,
                     confidence=args.confidence, tags=args.tags, commit=args.commit,
                     author=args.author, depends_on=args.depends_on)
    return _single(args, d, "recorded")


def cmd_query(args: argparse.Namespace) -> int:
    store = _store(args.path)
    result = store.search(args.question, mode=args.mode, status=args.status, limit=args.limit)
    if result.notice:
        print(f"[neuralmind] {result.notice}", file=sys.stderr)
    if args.json:
        print(f"[neuralmind] search mode: {result.mode}", file=sys.stderr)
        print_json([d.to_json() | {"score": round(s, 4)} for d, s in zip(result.records, result.scores, strict=True)])
        return 0
    if not result.records:
        print(f"No decisions found for: {args.question} ({result.mode} search)")
        return 0
    print(f'# NeuralMind Decisions Query: "{args.question}" ({result.mode})\n')
    for d in result.records:
        _print_record(d)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    records = _store(args.path).get_many(args.ids)
    if args.json:
        print_json([d.to_json() for d in records])
    else:
        for d in records:
            _print_record(d)
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    report = open_workspace(args.path).decisions_audit(stale=args.stale, orphaned=args.orphaned)
    for n in report.notices:
        print(f"[neuralmind] {n}", file=sys.stderr)
    if args.format == "json":
        print_json(report.to_json())
        return 0
    scope = " needing attention" if args.stale or args.orphaned else ""
    print(f"# NeuralMind Decisions Audit: {len(report.entries)} decision(s){scope}\n")
    for e in report.entries:
        d = e.decision
        flags = f" ({', '.join(e.attention)})" if e.attention else ""
        print(f"- [{d.status}] {d.title}{flags}")
        print(f"  id {d.id} · {d.updated_at[:10]}" + (f" · commit {d.commit_sha[:12]}" if d.commit_sha else ""))
        if d.status != "ACTIVE" and d.evidence:
            print(f"  {d.evidence[-1]}")
        for v in e.conflict or []:     # concurrent edits a team store kept (#20)
            shown = "shown" if v["current"] else "kept"
            what = "forgotten" if v["deleted"] else f"[{v['status']}] {v['title']}"
            print(f"  conflict: {shown} {what} (by {v['by'] or v['author']}, version "
                  f"{v['author']}/{v['seq']})")
    return 0


def _mutate(args: argparse.Namespace, verb: str, fn) -> int:  # noqa: ANN001 - a store method
    return _single(args, fn(), verb)


def cmd_amend(args: argparse.Namespace) -> int:
    store = _store(args.path)
    return _mutate(args, "amended", lambda: store.amend(
        args.id, title=args.title, rationale=args.rationale, evidence=args.evidence,
        rejected=args.rejected, files=args.files, symbols=args.symbols, tags=args.tags,
        confidence=args.confidence, decision_type=args.decision_type, depends_on=args.depends_on))


def cmd_invalidate(args: argparse.Namespace) -> int:
    store = _store(args.path)
    return _mutate(args, "invalidated", lambda: store.invalidate(args.id, args.reason))


def cmd_restore(args: argparse.Namespace) -> int:
    store = _store(args.path)
    return _mutate(args, "restored", lambda: store.restore(args.id, commit=args.commit))


def cmd_reaffirm(args: argparse.Namespace) -> int:
    store = _store(args.path)
    return _mutate(args, "re-affirmed", lambda: store.reaffirm(args.id, note=args.note))


def cmd_supersede(args: argparse.Namespace) -> int:
    store = _store(args.path)
    return _mutate(args, "recorded, superseding " + args.id,
                   lambda: store.supersede(args.id, args.title, args.rationale)[0])


def cmd_scan(args: argparse.Namespace) -> int:
    report = _store(args.path).scan(commit=args.commit)
    if args.json:
        print_json(report.to_json())
        return 1 if report.error else 0
    if report.error:
        return _err(f"decisions scan: {report.error}; no decision status was changed")
    short = (report.commit or "")[:12]
    for o in report.stale + report.cascaded:
        print(f"[neuralmind] STALE: {o.title} ({o.id[:8]}): {o.reason}")
    if args.quiet:
        return 0
    for n in report.notices:
        print(f"[neuralmind] {n}", file=sys.stderr)
    for o in report.touched:
        print(f"[neuralmind] touched, not governed: {o.title} ({o.id[:8]})")
    print(f"scan {short}: {len(report.changed)} changed file(s), {len(report.stale)} decision(s) STALE, "
          f"{len(report.cascaded)} by cascade, {len(report.touched)} touched but not governed, "
          f"{len(report.carried)} carried by the commit")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    text = _store(args.path).export(args.format)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    try:
        text = Path(args.file).read_text(encoding="utf-8")
    except OSError as e:
        raise InvalidArgument(f"cannot read {args.file}: {e.strerror}") from None
    try:
        report = _store(args.path).import_text(text, args.format)
    except InvalidArgument as e:
        raise InvalidArgument(f"{args.file}: {e.message}") from None
    if args.json:
        print_json(report.to_json())
    else:
        print(f"imported {len(report.imported)}, skipped {len(report.skipped)} already present"
              + (f", {len(report.errors)} rejected" if report.errors else ""))
        for e in report.errors:
            print(f"  {e}", file=sys.stderr)
    return 1 if report.errors else 0


def cmd_eval(args: argparse.Namespace) -> int:
    # every command pays for what cli/*_cmds import at module level; this ~0.5 s (numpy,
    # the store, the embedder) is for `decisions eval` alone
    from neuralmind.memory.decisions.eval import ALL_MODES, load_queries, run_eval

    if args.limit < 1:
        raise InvalidArgument("--limit must be at least 1")
    data = load_queries(Path(args.queries))
    modes = ALL_MODES if args.mode == "all" else (args.mode,)
    report = run_eval(data, modes=modes, limit=args.limit)
    if args.format == "json":
        text = json.dumps(report.to_json(), indent=2) + "\n"
    else:
        text = report.to_markdown()
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def cmd_init_hook(args: argparse.Namespace) -> int:
    from neuralmind.memory.decisions.hook import install_hook  # ~20 ms, for `init-hook` alone

    report = install_hook(root_argument(args.path))
    if args.json:
        print_json(report.to_json())
    else:
        print(f"post-commit hook {report.action}: {report.path} (scans project {report.project})")
    return 0
