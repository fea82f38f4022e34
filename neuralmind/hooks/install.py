"""`neuralmind init`: set a project up for an agent, and take it all out again.

For one agent (its module says where things go) init:
- registers the stdio MCP server in the agent's project configuration;
- merges the hooks into the agent's project settings, keeping every other entry;
- installs the git post-commit hook (the decision scan);
- writes a managed block into the agent's instructions file (CLAUDE.md, GEMINI.md):
  how to use the tools, and the standing directives;
- exports what the project learned (SYNAPSE_MEMORY.md, decisions, directives) into the
  agent's own memory folder when it has one (Claude Code's auto memory).

Every change is planned first, on the files' bytes (`--dry-run` prints the plan and
writes nothing); a file that cannot be read as what it should be (settings that are
not JSON) stops the whole plan before anything is written. The first init records each
file's original bytes and mode in `.neuralmind/init.json`; `--remove` puts back exactly
those bytes when the file is still what init wrote, and otherwise takes out only
NeuralMind's own entries (a file edited since keeps the edits). Running init again
changes nothing unless something changed (a moved interpreter, a new directive).
"""

from __future__ import annotations

import base64
import contextlib
import difflib
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from neuralmind.engine import agent_context
from neuralmind.errors import InvalidArgument
from neuralmind.hooks.agents import hook_settings
from neuralmind.launcher import neuralmind_argv
from neuralmind.memory.decisions.hook import hook_location, with_block, without_block
from neuralmind.memory.git import GitError
from neuralmind.statedir import atomic_write_json, state_dir

if TYPE_CHECKING:
    from neuralmind.engine.workspace import Workspace

MANIFEST = "init.json"
SERVER_NAME = "neuralmind"
BLOCK_BEGIN = "<!-- neuralmind:begin (written by `neuralmind init`; edits inside are replaced) -->"
BLOCK_END = "<!-- neuralmind:end -->"
MEMORY_FILE = "neuralmind.md"        # in the agent's memory folder

Transform = Callable[[bytes | None], bytes | None]
_GENERATED = re.compile(r" ?Generated [^;]*; regenerate with `neuralmind memory export`\.")


@dataclass
class Change:
    """One file: its bytes before and after (None: absent), and what the change is for."""

    path: Path
    before: bytes | None
    after: bytes | None
    notes: list[str] = field(default_factory=list)
    mode: int | None = None                  # the file's mode before (restored by --remove)

    @property
    def action(self) -> str:
        if self.before == self.after:
            return "unchanged"
        return "create" if self.before is None else "delete" if self.after is None else "update"

    def to_json(self, root: Path) -> dict[str, Any]:
        return {"path": _shown(self.path, root), "action": self.action, "notes": self.notes}

    def diff(self, root: Path) -> str:
        """A unified diff of the change (text files)."""
        def lines(data: bytes | None) -> list[str]:
            return [] if data is None else data.decode("utf-8", "replace").splitlines(True)
        name = _shown(self.path, root)
        return "".join(difflib.unified_diff(lines(self.before), lines(self.after),
                                            f"a/{name}", f"b/{name}"))


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


class Plan:
    """Changes to files, composed in memory: several steps may edit one file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.changes: dict[Path, Change] = {}

    def edit(self, path: Path, transform: Transform, note: str) -> None:
        change = self.changes.get(path)
        if change is None:
            before = path.read_bytes() if path.is_file() else None
            mode = stat.S_IMODE(path.stat().st_mode) if before is not None else None
            change = self.changes[path] = Change(path, before, before, mode=mode)
        after = transform(change.after)
        if after != change.after:
            change.notes.append(note)
        change.after = after

    def list(self) -> list[Change]:
        return list(self.changes.values())


# --- the file formats ----------------------------------------------------------------------------
def _load_json(path: Path, data: bytes | None) -> dict[str, Any]:
    if data is None or not data.strip():
        return {}
    try:
        value = json.loads(data)
    except ValueError as e:
        raise InvalidArgument(f"{path} is not valid JSON ({e}); fix or move it, then run "
                              "`neuralmind init` again (nothing was changed)") from None
    if not isinstance(value, dict):
        raise InvalidArgument(f"{path} holds no JSON object; nothing was changed")
    return value


def _dump_json(value: dict[str, Any]) -> bytes | None:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8") \
        if value else None


def _json_edit(path: Path, edit: Callable[[dict[str, Any]], None]) -> Transform:
    """A transform that applies `edit` to the file's JSON object (an emptied file goes)."""
    def transform(data: bytes | None) -> bytes | None:
        value = _load_json(path, data)
        edit(value)
        out = _dump_json(value)
        return data if out is not None and data is not None and \
            json.loads(data) == value else out
    return transform


def _ours(entry: Any, agent: str) -> bool:
    """Whether a settings hook entry is one `neuralmind init` wrote for `agent`."""
    command = entry.get("command", "") if isinstance(entry, dict) else ""
    return isinstance(command, str) and " hook " in command and "neuralmind" in command \
        and command.endswith(f"--agent {agent}")


def _drop_our_hooks(value: dict[str, Any], agent: str) -> None:
    hooks = value.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                entries = [e for e in group["hooks"] if not _ours(e, agent)]
                if not entries and group["hooks"]:
                    continue
                group = {**group, "hooks": entries}
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del value["hooks"]


def _add_our_hooks(value: dict[str, Any], adapter: ModuleType, command: list[str]) -> None:
    _drop_our_hooks(value, adapter.NAME)
    hooks = value.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidArgument(f"'hooks' in {adapter.SETTINGS_FILE} is not an object")
    for event, groups in hook_settings(adapter, command).items():
        existing = hooks.setdefault(event, [])
        if not isinstance(existing, list):
            raise InvalidArgument(f"hooks.{event} in {adapter.SETTINGS_FILE} is not a list")
        existing.extend(groups)


def _block(text: str) -> str:
    return f"{BLOCK_BEGIN}\n{text.rstrip()}\n{BLOCK_END}\n"


def _with_block(data: bytes | None, text: str) -> bytes:
    current = (data or b"").decode("utf-8")
    block = _block(text)
    if BLOCK_BEGIN in current and BLOCK_END in current:
        head, rest = current.split(BLOCK_BEGIN, 1)
        tail = rest.split(BLOCK_END, 1)[1].removeprefix("\n")
        return (head + block + tail).encode("utf-8")
    sep = "" if not current else "\n" if current.endswith("\n") else "\n\n"
    return (current + sep + block).encode("utf-8")


def _without_block(data: bytes | None) -> bytes | None:
    if data is None:
        return None
    current = data.decode("utf-8")
    if BLOCK_BEGIN not in current or BLOCK_END not in current:
        return data
    head, rest = current.split(BLOCK_BEGIN, 1)
    tail = rest.split(BLOCK_END, 1)[1].removeprefix("\n")
    if head.endswith("\n\n") and not tail:
        head = head[:-1]
    out = head + tail
    return out.encode("utf-8") if out else None


# --- what init writes ------------------------------------------------------------------------
def instructions_text(root: Path, directives: str) -> str:
    """The managed block of the agent's instructions file."""
    lines = [
        "## NeuralMind",
        "",
        "NeuralMind indexes this project (code graph, search, what is edited together, recorded",
        "decisions) and pushes context through hooks: each prompt gets a ranked list of the files",
        "it needs (\"NeuralMind: files for this prompt\"). Read those files first; grep after.",
        "",
        "- Session start: `neuralmind_wakeup` (project map) unless the hook already gave it.",
        "- Before reading files for a task: `neuralmind_query` with the task in plain words.",
        "- Before changing a design: `neuralmind_decisions_query`; record non-obvious choices",
        "  with `neuralmind_decision_record`.",
        "- After a task: `neuralmind_feedback` on the hits that helped or misled.",
    ]
    if directives.strip():
        lines += ["", "### Standing directives", "", directives.strip()]
    return "\n".join(lines)


def memory_export(root: Path, synapse_markdown: str, decisions: list[str],
                  directives: str) -> str:
    """The file written into an agent's memory folder (front matter, then the sections)."""
    parts = ["---", "name: neuralmind",
             "description: What NeuralMind learned about this codebase: files edited together, "
             "recorded design decisions, standing directives",
             "type: project", "---", "",
             f"Exported by `neuralmind init` for {root}; run it again to refresh.", ""]
    if directives.strip():
        parts += ["## Standing directives", "", directives.strip(), ""]
    parts += ["## Recorded decisions", "", *(decisions or ["None recorded yet."]), ""]
    # without its generation time, so that init run again rewrites only what changed
    synapses = _GENERATED.sub("", synapse_markdown).replace("# Synapse memory", "## Synapse memory", 1)
    parts += [synapses.rstrip(), ""]
    return "\n".join(parts)


def claude_memory_dir(root: Path, home: Path | None = None) -> Path | None:
    """Claude Code's auto-memory folder for `root`, when it exists (the project's absolute
    path with separators as dashes, under ~/.claude/projects/)."""
    projects = (home or Path.home()) / ".claude" / "projects"
    for slug in (str(root).replace("/", "-"), re.sub(r"[^A-Za-z0-9]", "-", str(root))):
        memory = projects / slug / "memory"
        if memory.is_dir():
            return memory
    return None


@dataclass
class Learned:
    """What the workspace knows that init writes out (gathered by the caller)."""

    directives: str = ""
    decisions: list[str] = field(default_factory=list)
    synapse_markdown: str = ""


def plan_init(root: Path, adapter: ModuleType, learned: Learned,
              home: Path | None = None) -> tuple[list[Change], list[str]]:
    """The changes `init` makes for `adapter`, and notes on what it skipped."""
    plan, skipped = Plan(root), []
    command = neuralmind_argv()
    mcp_entry = {"command": command[0], "args": [*command[1:], "mcp", str(root)]}
    mcp_path = root / adapter.MCP_FILE
    plan.edit(mcp_path, _json_edit(mcp_path, lambda v: v.setdefault("mcpServers", {}).update(
        {SERVER_NAME: mcp_entry})), "MCP server `neuralmind` (stdio)")
    settings = root / adapter.SETTINGS_FILE
    plan.edit(settings, _json_edit(settings, lambda v: _add_our_hooks(v, adapter, command)),
              "hooks: " + ", ".join(adapter.EVENTS))
    for key, value, note in adapter.SETTINGS_EXTRA:
        plan.edit(settings, _json_edit(settings, lambda v, k=key, x=value: _set_extra(v, k, x)),
                  note)
    instructions = root / adapter.INSTRUCTIONS_FILE
    text = instructions_text(root, learned.directives)
    plan.edit(instructions, lambda data: _with_block(data, text), "managed NeuralMind block")
    try:
        hook_path, project = hook_location(root)
        plan.edit(hook_path, lambda data: with_block(
            None if data is None else data.decode("utf-8"), project)[0].encode("utf-8"),
            "post-commit: decision scan")
    except GitError as e:
        skipped.append(f"git post-commit hook: {e}")
    if adapter.NAME == "claude":
        memory = claude_memory_dir(root, home)
        if memory is None:
            skipped.append("Claude Code memory export: no ~/.claude/projects/<project>/memory "
                           "folder (auto memory is off or the project was never opened)")
        else:
            export = memory_export(root, learned.synapse_markdown, learned.decisions,
                                   learned.directives).encode("utf-8")
            plan.edit(memory / MEMORY_FILE, lambda _: export, "memory export")
    return plan.list(), skipped


def _set_extra(value: dict[str, Any], key: str, extra: Any) -> None:
    """Merge one extra setting: a list gains the items, an object the keys."""
    current = value.get(key)
    if isinstance(extra, list):
        items = current if isinstance(current, list) else []
        value[key] = items + [x for x in extra if x not in items]
    elif isinstance(extra, dict):
        value[key] = {**(current if isinstance(current, dict) else {}), **extra}
    else:
        value[key] = extra


def _unset_extra(value: dict[str, Any], key: str, extra: Any) -> None:
    current = value.get(key)
    if isinstance(extra, list) and isinstance(current, list):
        value[key] = [x for x in current if x not in extra]
    elif isinstance(extra, dict) and isinstance(current, dict):
        value[key] = {k: v for k, v in current.items() if k not in extra}
    else:
        return
    if not value[key]:
        del value[key]


# --- the manifest and --remove ---------------------------------------------------------------
def _manifest_path(root: Path) -> Path:
    return state_dir(root, create=False) / MANIFEST


def read_manifest(root: Path) -> dict[str, Any]:
    path = _manifest_path(root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"version": 1, "agents": {}}
    except ValueError as e:
        raise InvalidArgument(f"{path} is damaged ({e}); --remove needs it to restore the "
                              "files exactly") from None
    return data


def _record(manifest: dict[str, Any], agent: str, changes: list[Change]) -> None:
    files = manifest["agents"].setdefault(agent, {"files": {}, "dirs": []})["files"]
    for c in changes:
        if c.action == "unchanged":
            continue
        key = str(c.path)
        entry = files.get(key)
        if entry is None:          # the first init keeps the file as it was before any init
            entry = files[key] = {
                "original": None if c.before is None else base64.b64encode(c.before).decode(),
                "mode": c.mode}
        entry["written"] = _sha(c.after)


def plan_remove(root: Path, adapter: ModuleType) -> list[Change]:
    """The changes `--remove` makes: a file still as init wrote it gets its original bytes
    back (or goes, if init created it); a file edited since, or found without init.json,
    loses only NeuralMind's entries."""
    recorded = read_manifest(root)["agents"].get(adapter.NAME, {}).get("files", {})
    structural = dict(_structural_removals(root, adapter))
    plan = Plan(root)
    for path in [*map(Path, recorded), *(p for p in structural if str(p) not in recorded)]:
        entry = recorded.get(str(path))
        current = path.read_bytes() if path.is_file() else None
        if entry is not None and _sha(current) == entry.get("written"):
            original = entry.get("original")
            restored = None if original is None else base64.b64decode(original)
            plan.edit(path, lambda _, r=restored: r, "restored as it was before init")
        elif path in structural:
            plan.edit(path, structural[path], "NeuralMind's entries taken out"
                      + (" (edited since init: the edits stay)" if entry else ""))
    return plan.list()


def _structural_removals(root: Path, adapter: ModuleType) -> list[tuple[Path, Transform]]:
    mcp_path, settings = root / adapter.MCP_FILE, root / adapter.SETTINGS_FILE

    def drop_server(v: dict[str, Any]) -> None:
        servers = v.get("mcpServers")
        if isinstance(servers, dict):
            servers.pop(SERVER_NAME, None)
            if not servers:
                del v["mcpServers"]

    def drop_settings(v: dict[str, Any]) -> None:
        _drop_our_hooks(v, adapter.NAME)
        for key, extra, _ in adapter.SETTINGS_EXTRA:
            _unset_extra(v, key, extra)

    out: list[tuple[Path, Transform]] = [
        (mcp_path, _json_edit(mcp_path, drop_server)),
        (settings, _json_edit(settings, drop_settings)),
        (root / adapter.INSTRUCTIONS_FILE, _without_block),
    ]
    try:
        hook_path, project = hook_location(root)
        out.append((hook_path, lambda data: None if data is None else
                    _hook_without(data.decode("utf-8"), project)))
    except GitError:
        pass
    return out


def _hook_without(text: str, project: str) -> bytes | None:
    out = without_block(text, project)
    return None if out.strip() in ("", "#!/bin/sh") else out.encode("utf-8")


# --- applying ----------------------------------------------------------------------------------
def apply(root: Path, adapter: ModuleType, changes: list[Change], remove: bool) -> None:
    """Write the planned changes (each atomically), then the manifest."""
    manifest = read_manifest(root)
    entry = manifest["agents"].get(adapter.NAME, {})
    originals = entry.get("files", {})
    created_dirs: list[str] = list(entry.get("dirs", []))
    for c in changes:
        if c.action == "unchanged":
            continue
        if c.after is None:
            with contextlib.suppress(FileNotFoundError):
                c.path.unlink()
            continue
        if not remove:
            missing = [p for p in (c.path.parent, *c.path.parent.parents)
                       if not p.exists() and _inside(p, root)]
            created_dirs += [str(p) for p in missing if str(p) not in created_dirs]
        c.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = c.path.with_name(f".{c.path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(c.after)
        mode = _mode_after(c, originals, remove)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, c.path)
    if remove:
        for d in sorted(created_dirs, key=len, reverse=True):
            with contextlib.suppress(OSError):
                Path(d).rmdir()             # only when empty: anything else stays
        manifest["agents"].pop(adapter.NAME, None)
    else:
        _record(manifest, adapter.NAME, changes)
        manifest["agents"][adapter.NAME]["dirs"] = created_dirs
    path = _manifest_path(root)
    if manifest["agents"]:
        atomic_write_json(state_dir(root) / MANIFEST, manifest)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return path != root


def _mode_after(c: Change, originals: dict[str, Any], remove: bool) -> int | None:
    """The file's mode: its original mode when restored, its mode before when edited, and
    for a new git hook, executable."""
    if remove:
        return originals.get(str(c.path), {}).get("mode") or c.mode
    if c.mode is not None:
        return c.mode
    if c.path.parent.name == "hooks" and c.path.name == "post-commit":
        return 0o755
    return None


MAX_EXPORTED_DECISIONS = 30


def gather(ws: Workspace) -> Learned:
    """What the workspace has learned, for the instructions block and the memory export
    (writes `.neuralmind/SYNAPSE_MEMORY.md` on the way, as `neuralmind memory export`)."""
    out = Learned(directives=agent_context.directives_block(ws))
    if (ws.state / "memory.db").is_file():
        active = ws.decisions.decisions("ACTIVE")[-MAX_EXPORTED_DECISIONS:]
        out.decisions = [f"- {d.title} ({', '.join(d.files_affected[:3]) or 'no files'}; "
                         f"{d.created_at[:10]}, id {d.id[:8]})" for d in reversed(active)]
    layer = ws._synapses_or_none()
    if layer is not None:
        out.synapse_markdown = layer.export_memory().read_text(encoding="utf-8")
    return out
