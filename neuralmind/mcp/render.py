"""Text renderings of tool results: what a model reads when it ignores `structuredContent`.

Short on purpose: the point of the tools is to spend few tokens, so the text says
what the structured result says, one line per item, without JSON noise.
"""

from __future__ import annotations

from typing import Any

from neuralmind.review.report import render_text

FILES_SHOWN = 8   # the text names the best files; the structured result has all of them


def _indexing_note(out: dict[str, Any]) -> str:
    if not out.get("partial"):
        return ""
    state = out.get("indexing") or {}
    where = f" ({state.get('phase')} {state.get('done')}/{state.get('total')})" if state else ""
    return f"\n\n_Partial: the workspace is still being indexed{where}; ask again for more._"


def freshness_note(out: dict[str, Any]) -> str:
    """One line: what the answer is fresh against, and which hits may have moved."""
    fresh = out.get("freshness")
    if not fresh:
        return ""
    counts = fresh.get("counts", {})
    head = (fresh.get("head") or "")[:10] or "no git"
    note = (f"index generation {fresh['index_generation']} at {head}; "
            f"{counts.get('dirty', 0)} changed, {counts.get('unsaved', 0)} unsaved, "
            f"{counts.get('pending', 0)} pending")
    stale = sorted({h["file"] for h in out.get("hits", []) if h.get("stale")})
    if stale:
        note += f"; stale (changed since indexed): {', '.join(stale)}"
    return f"\n_Fresh: {note}._"


def context_pack(out: dict[str, Any]) -> str:
    notice = f"\n\n_{out['notice']}_" if out.get("notice") else ""
    files = ", ".join(f["file"] for f in out.get("files", [])[:FILES_SHOWN])
    footer = (f"\n\n_Files, best first: {files}._" if files else "") + \
        f"\n\n_{out['tokens']} tokens, {out['mode']} retrieval._"
    return f"{out['context']}{notice}{_indexing_note(out)}{footer}{freshness_note(out)}"


def hit_line(h: dict[str, Any]) -> str:
    stale = " STALE" if h.get("stale") else ""
    return f"- {h['file']}:{h['line']} {h['symbol']} ({h['kind']}){stale} id={h['id']}"


def search(out: dict[str, Any]) -> str:
    lines = [f"{len(out['hits'])} hits ({out['mode']}):"] + [hit_line(h) for h in out["hits"]]
    if out.get("notice"):
        lines.append(f"_{out['notice']}_")
    return "\n".join(lines) + _indexing_note(out) + freshness_note(out)


def next_likely(out: dict[str, Any]) -> str:
    if not out["next"]:
        return (f"Nothing learned yet about what follows {out['file']}: associations come from "
                "edits, questions and feedback.")
    lines = [f"Likely next after {out['file']}:"]
    lines += [f"- {n['file']} ({n['probability']:.2f})" for n in out["next"]]
    return "\n".join(lines)


def feedback(out: dict[str, Any]) -> str:
    if not out["recorded"]:
        return f"Not recorded: {out['reason']}; {out['node']} unchanged."
    verb = "Reinforced" if out["positive"] else "Weakened"
    together = f" with {len(out['context'])} co-retrieved nodes" if out["context"] else ""
    return f"{verb} {out['node']}{together}."


def status(out: dict[str, Any]) -> str:
    indexing = out.get("indexing")
    state = (f"indexing: {indexing['phase']} {indexing['done']}/{indexing['total']}"
             if indexing else f"last full build: {out.get('last_full_build') or 'never'}")
    learning = out["learning"]
    return "\n".join(filter(None, [
        f"Workspace {out['root']}: {out['files']} files, {out['nodes']} nodes "
        f"({out['embedded_nodes']} embedded, model {out['model_state']}).",
        f"{state}; {out['files_pending']} files pending.{freshness_note(out)}",
        f"Learning {'on' if learning['enabled'] else 'off'}: {learning['events']} events, "
        f"{learning['batches']} batches." + (" Read-only MCP role." if out["read_only"] else ""),
        savings_line((out.get("savings") or {}).get("overall")),
    ]))


def savings_line(s: dict[str, Any] | None) -> str:
    """Answers served, tokens against the whole codebase's, and use (one line)."""
    if not s or not s.get("answers"):
        return ""
    # "fewer" only when the answers cost less than what they replace (not on a tiny project)
    ratio = f" ({s['ratio']}x fewer)" if (s.get("ratio") or 0) > 1 else ""
    use = (f"; by use: {s['files_used_per_answer']} files used per answer, precision@5 "
           f"{s['precision_at_5']} ({s['acted_on']} answers acted on)"
           if s.get("precision_at_5") is not None else "")
    return (f"Answers: {s['answers']} served, {s['tokens_served']:,} tokens instead of "
            f"{s['codebase_tokens']:,}{ratio}{use}.")


def _decision_line(d: dict[str, Any]) -> str:
    files = ", ".join(d.get("files_affected") or d.get("files") or []) or "no files"
    return f"- [{d['status']}] {d['title']} (id {d['id']}; {files})"


def decision_query(out: dict[str, Any]) -> str:
    if not out["results"]:
        return f"No decisions match ({out['mode']})."
    lines = [f"{len(out['results'])} decisions ({out['mode']}):"]
    for d in out["results"]:
        lines.append(_decision_line(d))
        lines.append(f"  {d['rationale'].strip().splitlines()[0] if d['rationale'] else ''}")
    if out.get("notice"):
        lines.append(f"_{out['notice']}_")
    return "\n".join(lines)


def decision(out: dict[str, Any]) -> str:
    rejected = "; ".join(out.get("rejected_alternatives") or [])
    return "\n".join(filter(None, [
        f"Recorded decision {out['id']} [{out['status']}]: {out['title']}",
        f"Governs: {', '.join(out['files_affected']) or 'no files'}",
        f"Rejected: {rejected}" if rejected else "",
    ]))


def _row(r: dict[str, Any]) -> str:
    files = ", ".join(r["files"]) or "no files"
    return f"- {r['id']} [{r['status']}] {r['date']} {r['title']} ({files}): {r['snippet']}"


def memory_search(out: dict[str, Any]) -> str:
    lines = [f"{len(out['results'])} decisions ({out['mode']}, {out['status']}):"]
    lines += [_row(r) for r in out["results"]]
    lines.append(f"Next: {out['next']}")
    return "\n".join(lines)


def memory_timeline(out: dict[str, Any]) -> str:
    if out["anchor"] is None:
        return "No decision matches."
    lines = ["Before:"] + [_row(r) for r in out["before"]] if out["before"] else []
    lines += ["Anchor:", _row(out["anchor"])]
    if out["after"]:
        lines += ["After:"] + [_row(r) for r in out["after"]]
    return "\n".join(lines)


def memory_get(out: dict[str, Any]) -> str:
    blocks = []
    for d in out["records"]:
        if "rationale" not in d:                 # a memory other than a decision
            about = f" (about {', '.join(d['about'])})" if d.get("about") else ""
            blocks.append(f"- [{d['type']}, {d['state']}] {d['label']} (id {d['id']}){about}\n"
                          f"  {d['text']}")
            continue
        rejected = "".join(f"\n  - rejected: {r}" for r in d.get("rejected_alternatives") or [])
        evidence = "".join(f"\n  - evidence: {e}" for e in d.get("evidence") or [])
        blocks.append(f"{_decision_line(d)}\n  {d['rationale']}{rejected}{evidence}")
    return "\n\n".join(blocks) or "No records."


def recall(out: dict[str, Any]) -> str:
    if out.get("unrated"):
        return out["notice"]
    notice = f"\n_{out['notice']}_" if out.get("notice") else ""
    if not out["atoms"]:
        return f"No memories for this ({out['mode']}).{notice}"
    return (f"{out['context']}{notice}\n_Rate each with neuralmind_rate (used, useful or "
            f"noise)._")


def inbox(out: dict[str, Any]) -> str:
    if not out["atoms"]:
        return "The inbox is empty."
    return "\n".join(f"- {a['id']} [{a['type']}] {a['label']}"
                     + (f" (about {', '.join(a['about'])})" if a["about"] else "")
                     for a in out["atoms"])


def review(out: dict[str, Any]) -> str:
    text = render_text(out)
    if out["decisions_at_risk"]:
        text += ("\nAsk the user before committing; a replacement is recorded with "
                 "neuralmind_decision_record.")
    return text


def editor_state(out: dict[str, Any]) -> str:
    if not out["active_file"]:
        lines = ["No file of the workspace is active in the editor."]
    else:
        sym = out.get("symbol")
        lines = [f"Active: {out['active_file']}" + (f" in {sym['name']} ({sym['kind']})"
                                                     if sym else "")]
        sel = out.get("selection")
        if sel:
            lines.append(f"Selection: lines {sel['start_line']}-{sel['end_line']}"
                         + (f":\n{sel['text']}" if sel["text"] else ""))
        for d in out["diagnostics"][:20]:
            lines.append(f"- {d['severity']} line {d['start_line']}: {d['message']}"
                         + (f" [{d['source']}]" if d["source"] else ""))
    if out["open_files"]:
        lines.append("Open: " + ", ".join(out["open_files"][:20]))
    if out["trail"]:
        lines.append("Recently: " + ", ".join(
            t["file"] + (f"::{t['symbol']}" if t["symbol"] else "") for t in out["trail"][:10]))
    return "\n".join(lines)


def reveal(out: dict[str, Any]) -> str:
    where = f"{out['file']}:{out['line']}-{out['end_line']}"
    if not out["shown"]:
        return f"The editor did not show {where}" + (f": {out['reason']}" if out.get("reason")
                                                     else ".")
    return f"Shown {where} in the editor" + (" with the note." if out.get("note_shown") else ".")
