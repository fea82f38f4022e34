"""Path attacks through a real `neuralmind mcp` (stdio, engine in process) with a canary file
outside the workspace: every attempt refused with a coded error, and the canary's content
never appears in any answer. (Token, Host and Origin checks: tests/mcp/test_mcp_http.py.)"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from reliability_support import CLI, ENV

pytestmark = pytest.mark.asyncio
SECRET = "CANARY-7f3a-TOKEN"


def _attacks(root: Path, canary: Path) -> list[str]:
    rel = os.path.relpath(canary, root)
    return [rel, str(canary), "leak.py", "leakdir/canary.py", f"pkg/../{rel}", f"./{rel}",
            "pkg/\x00canary.py", "/" + "a" * 5000, f"{root}/../{canary.parent.name}/canary.py"]


def _odd_names(canary: Path) -> list[str]:
    """Names that are legal (if strange) file names inside the root on POSIX: they may be
    accepted, but must never reach the canary."""
    return [canary.as_uri(), "..\\outside\\canary.py", "%2e%2e/outside/canary.py"]


def _text(result: Any) -> str:
    return json.dumps(result.structured_content) + " ".join(
        getattr(c, "text", "") for c in result.content)


async def test_paths_outside_the_root_are_refused_and_never_read(small_repo: Path,
                                                                 tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    canary = outside / "canary.py"
    canary.write_text(f'def canary_secret_fn():\n    """{SECRET}"""\n    return "{SECRET}"\n',
                      encoding="utf-8")
    (small_repo / "leak.py").symlink_to(canary)
    (small_repo / "leakdir").symlink_to(outside)
    params = StdioServerParameters(command=CLI[0],
                                   args=[*CLI[1:], "mcp", str(small_repo), "--tools", "all"],
                                   env={k: v for k, v in ENV.items() if isinstance(v, str)},
                                   cwd=str(small_repo))
    answers: list[str] = []
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            for _ in range(600):
                status = await client.call_tool("neuralmind_status", {})
                if status.structured_content["files"] and not status.structured_content["indexing"]:
                    break
                await asyncio.sleep(0.1)
            refused = 0
            for path in _attacks(small_repo, canary):
                for name, args in [
                    ("neuralmind_next_likely", {"file": path}),
                    ("neuralmind_decision_record", {"title": "t", "rationale": "r",
                                                    "files": [path]}),
                    ("neuralmind_decision_record", {"title": "t", "rationale": "r",
                                                    "symbols": [f"{path}::canary_secret_fn"]}),
                    ("neuralmind_feedback", {"node_id": f"{path}::canary_secret_fn",
                                             "positive": True}),
                ]:
                    result = await client.call_tool(name, args)
                    answers.append(_text(result))
                    assert result.is_error, (name, path, answers[-1][:300])
                    refused += 1
            for path in _odd_names(canary):
                answers.append(_text(await client.call_tool("neuralmind_next_likely",
                                                            {"file": path})))
            for name, args in [
                ("neuralmind_query", {"question": f"canary_secret_fn {SECRET}"}),
                ("neuralmind_search", {"question": "canary secret fn", "k": 200}),
                ("neuralmind_wakeup", {}),
                ("neuralmind_query", {"question": "x" * 1_000_000}),       # oversized
                ("neuralmind_memory_get", {"ids": ["../../outside/canary.py"] * 20}),
            ]:
                result = await client.call_tool(name, args)
                answers.append(_text(result))
    assert refused == 4 * len(_attacks(small_repo, canary))
    leaked = [a[:200] for a in answers if SECRET in a or "canary_secret_fn(" in a]
    assert not leaked, leaked
    assert not list((small_repo / ".neuralmind").glob("*.corrupt-*"))
