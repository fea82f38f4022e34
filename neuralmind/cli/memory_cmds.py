"""`neuralmind memory ...`: atoms from the terminal (remember, recall, rate, pin, link, dream).

Handlers translate arguments into one Workspace / MemoryStore call and results into text
or JSON (`--json` on every command; `remember --json` returns the atom with its `id`).
Positional arguments follow the CLI's convention: what the command is about first, then
the optional PATH. Recall from a hook on behalf of an agent passes `--session NAME`, so
what it returns registers as pending feedback for that session.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from neuralmind.cli.common import open_workspace, print_json
from neuralmind.cli.remote import from_server, local_argument
from neuralmind.cli.synapse_cmds import cmd_memory_export

if TYPE_CHECKING:
    from neuralmind.memory.atoms import Atom


def register(sub: argparse._SubParsersAction) -> None:
    top = sub.add_parser("memory", help="remember, recall, rate and consolidate agent memory")
    msub = top.add_subparsers(dest="memory_command", metavar="ACTION")
    # an unknown atom id is a failed lookup (exit 1), not a usage error, as for decisions
    top.set_defaults(handler=lambda args: _help(top), exit_status={"not_found": 1})

    def command(name: str, help_text: str, handler: Any, *positional: str) -> argparse.ArgumentParser:
        p = msub.add_parser(name, help=help_text)
        for arg in positional:
            p.add_argument(arg)
        p.add_argument("path", nargs="?", default=".")
        p.add_argument("--json", action="store_true", help="one JSON object on stdout")
        p.set_defaults(handler=handler)
        return p

    p = command("remember", "store a memory (an atom)", cmd_remember, "text")
    p.add_argument("--type", dest="atom_type", default="note",
                   help="decision, lesson, preference, fact, note (default) or open_loop")
    p.add_argument("--label", help="a short title (default: the text's first sentence)")
    p.add_argument("--hub", dest="hubs", action="append", default=[], metavar="HUB")
    p.add_argument("--about", action="append", default=[], metavar="FILE_OR_SYMBOL",
                   help="a file, or path::Qualified.name")
    p.add_argument("--proposed", action="store_true",
                   help="an agent's guess: active once its work survives in git, or accepted")
    p = command("recall", "the memories a question needs, within a token budget", cmd_recall,
                "question")
    p.add_argument("--budget", type=int, default=None, help="tokens (default 400)")
    p.add_argument("--session", help="the agent session it is for (registers pending feedback)")
    local_argument(p)
    p = command("rate", "a verdict on a memory: used, useful or noise", cmd_rate, "id", "verdict")
    p.add_argument("--session", default="cli")
    p = command("pin", "make a preference a standing directive", cmd_pin, "id")
    p.add_argument("--off", action="store_true", help="unpin")
    command("directives", "the standing directives block", cmd_directives)
    command("link", "a typed edge: ID supersedes|derived_from|caused_by|consolidates|about ID",
            cmd_link, "id", "kind", "target")
    command("forget", "delete a memory (the only deletion)", cmd_forget, "id")
    command("restore", "bring an ignored, archived or rejected memory back", cmd_restore, "id")
    command("accept", "accept a proposed memory", cmd_accept, "id")
    command("reject", "reject a proposed memory", cmd_reject, "id")
    command("close", "close an open loop", cmd_close, "id")
    command("show", "one memory in full", cmd_show, "id")
    p = command("hub", "a hub's synonyms and size", cmd_hub, "name")
    p.add_argument("--synonyms", nargs="*", metavar="WORDS", help="replace its synonyms")
    p = command("dream", "consolidate: merge duplicates, link associations, summarise hubs",
                cmd_dream)
    p.add_argument("--phase", choices=("light", "rem", "deep", "all"), default="all")
    command("inbox", "proposed memories waiting for their work to survive", cmd_inbox)
    command("stats", "atoms per type and state, hubs, edges, pending feedback", cmd_stats)
    p = msub.add_parser("export", help="write .neuralmind/SYNAPSE_MEMORY.md (learned associations)")
    p.add_argument("path", nargs="?", default=".")
    p.set_defaults(handler=cmd_memory_export)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _atom_line(a: Atom) -> str:
    extra = [a.state] if a.state != "active" else []
    if a.pinned:
        extra.append("pinned")
    flags = f" ({', '.join(extra)})" if extra else ""
    return f"{a.id} [{a.type}]{flags} {a.label}"


def _out(args: argparse.Namespace, obj: Any, text: str) -> int:
    if args.json:
        print_json(obj)
    else:
        print(text)
    return 0


def _atom(args: argparse.Namespace, a: Atom, verb: str) -> int:
    return _out(args, a.to_json(), f"{verb} {_atom_line(a)}")


def cmd_remember(args: argparse.Namespace) -> int:
    ws = open_workspace(args.path)
    a = ws.remember(args.text, args.atom_type, args.label, args.hubs, args.about, source="cli",
                    proposed=args.proposed)
    return _atom(args, a, "remembered")


def cmd_recall(args: argparse.Namespace) -> int:
    out = from_server(args, "recall", {"question": args.question, "budget": args.budget,
                                       "session": args.session})
    if out is None:
        out = open_workspace(args.path).recall(args.question, args.budget,
                                               session=args.session).to_json()
    if out.get("notice"):
        print(f"[neuralmind] {out['notice']}", file=sys.stderr)
    if args.json:
        print_json(out)
        return 0
    if out.get("unrated"):
        return 0
    print(out["context"] or f"No memories for: {args.question}")
    print(f"\n[{out['tokens']} tokens, {len(out['atoms'])} of {out['candidates']} candidates; "
          f"mode {out['mode']}]", file=sys.stderr)
    return 0


def cmd_rate(args: argparse.Namespace) -> int:
    out = open_workspace(args.path).memory.rate(args.id, args.verdict, args.session)
    a = out["atom"]
    return _out(args, out, f"rated {a['id']} {out['verdict']}: rank {out['rank']:.2f}, "
                           f"{out['state']}")


def cmd_pin(args: argparse.Namespace) -> int:
    a = open_workspace(args.path).memory.pin(args.id, not args.off)
    return _atom(args, a, "unpinned" if args.off else "pinned")


def cmd_directives(args: argparse.Namespace) -> int:
    out = open_workspace(args.path).directives()
    return _out(args, out, out["text"] or "No standing directives (pin a preference).")


def cmd_link(args: argparse.Namespace) -> int:
    edge = open_workspace(args.path).memory.link(args.id, args.kind, args.target)
    return _out(args, edge, f"linked {edge['src']} {edge['kind']} {edge['dst']}")


def cmd_forget(args: argparse.Namespace) -> int:
    return _atom(args, open_workspace(args.path).memory.forget(args.id), "forgot")


def cmd_restore(args: argparse.Namespace) -> int:
    return _atom(args, open_workspace(args.path).memory.restore_atom(args.id), "restored")


def cmd_accept(args: argparse.Namespace) -> int:
    return _atom(args, open_workspace(args.path).memory.accept(args.id), "accepted")


def cmd_reject(args: argparse.Namespace) -> int:
    return _atom(args, open_workspace(args.path).memory.reject(args.id), "rejected")


def cmd_close(args: argparse.Namespace) -> int:
    return _atom(args, open_workspace(args.path).memory.close(args.id), "closed")


def cmd_show(args: argparse.Namespace) -> int:
    out = open_workspace(args.path).memory.atom_json(args.id)
    lines = [f"{out['id']} [{out['type']}, {out['state']}] {out['label']}", "", out["text"]]
    if out["hubs"]:
        lines.append("hubs: " + ", ".join(out["hubs"]))
    if out["about"]:
        lines.append("about: " + ", ".join(out["about"]))
    for link in out["links"]:
        lines.append(f"{link['kind']}: {link['id']}")
    lines.append(f"served {out['served']}, used {out['used']}, useful {out['useful']}, "
                 f"noise {out['noise']}")
    return _out(args, out, "\n".join(lines))


def cmd_hub(args: argparse.Namespace) -> int:
    out = open_workspace(args.path).memory.hub(args.name, args.synonyms)
    syns = ", ".join(out["synonyms"]) or "no synonyms"
    return _out(args, out, f"{out['hub']}: {out['atoms']} atoms; {syns}")


def cmd_dream(args: argparse.Namespace) -> int:
    report = open_workspace(args.path).dream(args.phase)
    return _out(args, report.to_json(), report.entry.rstrip())


def cmd_inbox(args: argparse.Namespace) -> int:
    items = open_workspace(args.path).memory.inbox()
    text = "\n".join(f"{i['id']} [{i['type']}] {i['label']}"
                     + (f" (about {', '.join(i['about'])})" if i["about"] else "")
                     for i in items) or "The inbox is empty."
    return _out(args, items, text)


def cmd_stats(args: argparse.Namespace) -> int:
    s = open_workspace(args.path).memory.stats()
    lines = [f"{s['atoms']} atoms in {s['path']}"]
    for kind, states in sorted(s["by_type"].items()):
        lines.append(f"  {kind}: " + ", ".join(f"{n} {st}" for st, n in sorted(states.items())))
    lines.append(f"{s['pinned']} pinned, {s['hubs']} hubs, "
                 + ", ".join(f"{n} {k}" for k, n in sorted(s["edges"].items()))
                 + f" edges; {s['pending']} pending verdicts")
    return _out(args, s, "\n".join(lines))
