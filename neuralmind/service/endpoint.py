"""An endpoint another adapter serves from a server's process: what starting one needs.

The editor's language server also serves MCP on loopback (one process, one engine for
the editor and its agents). The LSP adapter does not know MCP: the process entry
(`neuralmind.cli.server_cmds`) hands it an `EndpointLoader`, which the LSP runs on the
engine thread (its imports are heavy) to get the function that starts the endpoint.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from neuralmind.service.engine_service import EngineService


class AgentEndpoint(Protocol):
    """A running endpoint: where agents reach it, a login URL of the observatory page it
    also serves, and how to stop it."""

    url: str

    def login_url(self, view: str | None = None) -> str: ...

    async def close(self) -> None: ...


# (service, read_only) -> the started endpoint
EndpointStarter = Callable[["EngineService", bool], Awaitable[AgentEndpoint]]
# Runs on the engine thread (imports); returns the starter
EndpointLoader = Callable[[], EndpointStarter]
