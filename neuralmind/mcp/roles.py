"""The two MCP roles, and `tool`, the declaration every tool method carries.

A tool is a `NeuralMindTools` method declared with `@tool(CONSULTING)` (it only
reads) or `@tool(RECORDING)` (it writes to the workspace: refused on a read-only
server). Registration collects the declared methods, so a tool cannot be
forgotten in some list; a `neuralmind_*` method without a declaration is an
error at start-up. Light on purpose (no SDK): the stdio bridge reads the roles
from the live server's tool list instead (`readOnlyHint`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

CONSULTING = "consulting"
RECORDING = "recording"
ROLE_ATTR = "__neuralmind_role__"
TOOL_PREFIX = "neuralmind_"

F = TypeVar("F", bound=Callable[..., Any])


def tool(role: str) -> Callable[[F], F]:
    """Declare a method an MCP tool of `role` (CONSULTING or RECORDING)."""
    if role not in (CONSULTING, RECORDING):
        raise ValueError(f"unknown MCP tool role {role!r}")

    def declare(fn: F) -> F:
        setattr(fn, ROLE_ATTR, role)
        return fn

    return declare


def declared_tools(cls: type) -> dict[str, str]:
    """name -> role of the tools `cls` declares, in definition order; TypeError for a
    `neuralmind_*` method that declares no role."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            role = getattr(value, ROLE_ATTR, None)
            if role is not None:
                out[name] = role
            elif name.startswith(TOOL_PREFIX) and callable(value):
                raise TypeError(f"{cls.__name__}.{name} looks like an MCP tool but declares no "
                                "role: decorate it with @tool(CONSULTING) or @tool(RECORDING)")
    return out


def read_only_refusal(name: str) -> str:
    return (f"{name} records to the workspace; this MCP server is read-only "
            "(started with --read-only)")
