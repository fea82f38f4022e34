"""The async single-writer service the LSP and MCP servers of one process share."""

from neuralmind.service.core import EngineService, IndexingState, ServiceListener

__all__ = ["EngineService", "IndexingState", "ServiceListener"]
