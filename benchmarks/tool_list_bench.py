#!/usr/bin/env python3
"""The MCP tool list's cost in o200k tokens, per profile, held to its budget.

    python benchmarks/tool_list_bench.py [--json]

What an agent pays on every turn for NeuralMind's tools: each tool as `tools/list` sends
it (name, description, input schema, annotations) and the server instructions. Exits 1
when a profile is over its budget (config.TOOL_LIST_BUDGETS: default <= 2,500,
minimal <= 1,000), so a tool added this wave that does not fit fails here and in
tests/mcp/test_mcp_tools.py. `neuralmind mcp-tools --tools PROFILE` prints one profile.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from neuralmind.config import TOOL_LIST_BUDGETS
from neuralmind.mcp.listing import tool_tokens
from neuralmind.mcp.server import wire_tool_list
from neuralmind.service.engine_service import EngineService

PROFILES = ("minimal", "default", "all")


async def measure(root: Path) -> dict[str, dict[str, object]]:
    service = EngineService(root)
    out = {}
    for profile in PROFILES:
        listed, instructions = await wire_tool_list(service, tools=profile)
        out[profile] = tool_tokens(listed, instructions)
    listed, instructions = await wire_tool_list(service, read_only=True, tools="default")
    out["default (read-only)"] = tool_tokens(listed, instructions)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        costs = asyncio.run(measure(Path(tmp)))
    over = [p for p, budget in TOOL_LIST_BUDGETS.items() if costs[p]["total"] > budget]
    if args.json:
        print(json.dumps({"budgets": TOOL_LIST_BUDGETS, "profiles": costs, "over": over},
                         indent=2))
    else:
        for profile, cost in costs.items():
            budget = TOOL_LIST_BUDGETS.get(profile)
            print(f"{profile}: {len(cost['tools'])} tools {cost['tools_total']:,} + instructions "
                  f"{cost['instructions']:,} = {cost['total']:,} o200k tokens"
                  + (f" (budget {budget:,})" if budget else ""))
            for name, tokens in cost["tools"].items():
                print(f"    {name:<28} {tokens:>5}")
    for profile in over:
        print(f"OVER BUDGET: {profile} costs {costs[profile]['total']:,} > "
              f"{TOOL_LIST_BUDGETS[profile]:,}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
