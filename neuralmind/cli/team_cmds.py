"""`neuralmind team connect|status|sync|disconnect|publish-index|pull-index`."""

from __future__ import annotations

import argparse
from typing import Any

from neuralmind.cli.common import open_workspace, print_json

# The store could not serve the request (unreachable, too new, a damaged snapshot): 1;
# a wrong request (no DSN configured, a password in it, a dirty tree): 2, main's default.
EXIT_STATUS = {"team_unreachable": 1, "team_schema": 1, "team_snapshot": 1}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    team = sub.add_parser("team", help="share learned memory and indexes with your team "
                                       "through PostgreSQL")
    team.set_defaults(exit_status=EXIT_STATUS)
    cmds = team.add_subparsers(dest="team_command", metavar="ACTION", required=True)

    def add(name: str, help_text: str, handler: Any) -> argparse.ArgumentParser:
        p = cmds.add_parser(name, help=help_text)
        p.set_defaults(handler=handler)
        return p

    p = add("connect", "connect this workspace to a team store (password from ~/.pgpass or "
                       "PGPASSWORD, never stored)", cmd_connect)
    p.add_argument("dsn", help="postgresql://user@host:5432/db?sslmode=verify-full (or key=value)")
    p.add_argument("path", nargs="?", help="workspace folder (default: current folder)")
    p.add_argument("--json", action="store_true")
    p = add("status", "the team store: configured, reachable, role, positions", cmd_status)
    p.add_argument("path", nargs="?")
    p.add_argument("--json", action="store_true")
    p = add("sync", "push this workspace's outbox and pull the team's events", cmd_sync)
    p.add_argument("path", nargs="?")
    p.add_argument("--json", action="store_true")
    p = add("disconnect", "forget the team store (local memory and unpushed events stay)",
            cmd_disconnect)
    p.add_argument("path", nargs="?")
    p.add_argument("--json", action="store_true")
    p = add("publish-index", "publish the graph and index of a commit for teammates and fresh "
                             "clones", cmd_publish)
    p.add_argument("path", nargs="?")
    p.add_argument("--commit", default="HEAD", help="the commit the index is of (default HEAD; "
                                                    "the working tree must match it)")
    p.add_argument("--json", action="store_true")
    p = add("pull-index", "start from the team's snapshot of the nearest ancestor commit, then "
                          "update incrementally", cmd_pull)
    p.add_argument("path", nargs="?")
    p.add_argument("--force", action="store_true", help="replace an existing local index")
    p.add_argument("--json", action="store_true")


def _team(args: argparse.Namespace):  # noqa: ANN202 - neuralmind.team.service.Team
    return open_workspace(args.path).team


def _out(args: argparse.Namespace, obj: dict[str, Any], lines: list[str]) -> int:
    if args.json:
        print_json(obj)
    else:
        print("\n".join(lines))
    return 0


def cmd_connect(args: argparse.Namespace) -> int:
    r = _team(args).connect(args.dsn)
    s = r["sync"]
    return _out(args, r, [
        f"connected to {r['dsn']} as {r['role']}" + (" (reader: pull only)" if r["read_only"]
                                                    else ""),
        f"pushed {s['pushed']}, pulled {s['pulled']} events (position {s['position']} of "
        f"{s['head']})"])


def cmd_status(args: argparse.Namespace) -> int:
    r = _team(args).status()
    if not r["configured"]:
        lines = ["team store: not configured (neuralmind team connect DSN)"]
    elif not r.get("reachable"):
        lines = [f"team store: {r['dsn']} ({r['dsn_source']}): UNREACHABLE: {r.get('error')}"]
    else:
        lines = [f"team store: {r['dsn']} ({r['dsn_source']}) as {r['role']}"
                 + (" (reader)" if r["read_only"] else ""),
                 f"position {r['position']} of {r['head']} ({r['authors']} authors), "
                 f"{r['snapshots']} snapshot(s), {r['latency_ms']} ms"]
    loc = r["local"]
    lines.append(f"local: {loc['events']} events, {loc['unpushed']} unpushed, "
                 f"{loc['shared_rows']} shared rows, {loc['records']} records")
    return _out(args, r, lines)


def cmd_sync(args: argparse.Namespace) -> int:
    r = _team(args).sync().to_json()
    note = " (reader: the outbox waits)" if r["read_only"] else ""
    return _out(args, r, [f"pushed {r['pushed']} ({r['duplicates']} already there), pulled "
                          f"{r['pulled']}; position {r['position']} of {r['head']}, "
                          f"{r['unpushed']} unpushed{note}"])


def cmd_disconnect(args: argparse.Namespace) -> int:
    r = _team(args).disconnect()
    lines = ["disconnected" if r["disconnected"] else "was not connected",
             f"{r['unpushed']} unpushed event(s) kept for the next connection"]
    if r.get("notice"):
        lines.append(r["notice"])
    return _out(args, r, lines)


def cmd_publish(args: argparse.Namespace) -> int:
    ws = open_workspace(args.path)
    r = ws.team.publish_index(args.commit, build=ws.build)
    return _out(args, r, [f"published the index of {r['commit'][:12]}: "
                          f"{r['bytes'] / 1e6:.1f} MB ({r['stored_bytes'] / 1e6:.1f} MB stored) "
                          f"in {r['seconds']:.1f} s"])


def cmd_pull(args: argparse.Namespace) -> int:
    ws = open_workspace(args.path)
    r = ws.team.pull_index(force=args.force, update=ws.build)
    return _out(args, r, [
        f"pulled the index of {r['commit'][:12]} ({r['distance']} commit(s) behind HEAD): "
        f"{r['bytes'] / 1e6:.1f} MB in {r['seconds']:.1f} s",
        f"updated: {r.get('reextracted', 0)} file(s) re-extracted, {r.get('removed', 0)} "
        f"removed in {r.get('update_seconds', 0):.1f} s"])
