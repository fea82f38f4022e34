"""Which tools each MCP role serves (light: the stdio bridge reads it without the SDK)."""

from __future__ import annotations

CONSULTING_TOOLS = ("neuralmind_wakeup", "neuralmind_query", "neuralmind_search",
                    "neuralmind_next_likely", "neuralmind_status", "neuralmind_decisions_query",
                    "neuralmind_memory_search", "neuralmind_memory_timeline",
                    "neuralmind_memory_get")
RECORDING_TOOLS = ("neuralmind_feedback", "neuralmind_decision_record")


def read_only_refusal(name: str) -> str:
    return (f"{name} records to the workspace; this MCP server is read-only "
            "(started with --read-only)")
