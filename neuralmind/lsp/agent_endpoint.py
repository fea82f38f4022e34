"""The agent endpoint served beside the LSP (MCP on loopback, in the editor's process).

The process entry hands the server an `EndpointLoader` (the LSP does not know MCP);
once the workspace is open it is loaded on the engine thread (uvicorn ~50 ms, ~3 MB;
the MCP SDK waits for the first agent request) and started, when the `mcp` setting
is on. The setting can turn it off and on again (`restart`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from neuralmind.lsp.server import Feature

if TYPE_CHECKING:
    from neuralmind.lsp.server import NeuralMindServer
    from neuralmind.service.endpoint import AgentEndpoint

log = logging.getLogger("neuralmind.lsp")

STOP_TIMEOUT_SECONDS = 1.0


class AgentEndpoints(Feature):
    """Starts and stops the endpoint; its URL is the service's `mcp_endpoint`."""

    endpoint: AgentEndpoint | None = None

    def __init__(self, server: NeuralMindServer) -> None:
        super().__init__(server)
        self.settled = asyncio.Event()     # the first start attempt ended (or was skipped)

    async def ready(self) -> None:
        try:
            await self.start()
        finally:
            self.settled.set()

    async def close(self) -> None:
        await self.stop()

    async def start(self) -> None:
        service, loader = self.server.service, self.server.agent_endpoint
        if service is None or loader is None or not self.server.config.mcp:
            return
        try:
            start = await service.run_serialised(loader)
        except ImportError as e:
            log.debug("MCP over HTTP not available: %s", e)
            return
        try:
            self.endpoint = await start(service, False)
        except Exception as e:
            log.warning("could not start the MCP endpoint: %s", e)
            return
        service.mcp_endpoint = self.endpoint.url
        log.info("MCP endpoint: %s", self.endpoint.url)

    async def stop(self) -> None:
        endpoint, self.endpoint = self.endpoint, None
        if self.server.service is not None:
            self.server.service.mcp_endpoint = None
        if endpoint is None:
            return
        try:
            await asyncio.wait_for(endpoint.close(), timeout=STOP_TIMEOUT_SECONDS)
        except Exception as e:
            log.warning("stopping the MCP endpoint: %s", e)

    async def restart(self) -> None:
        """The `mcp`, `mcp_read_only` or `mcp_tools` setting changed."""
        await self.stop()
        if self.server.config.mcp:
            await self.start()
