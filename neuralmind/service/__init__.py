"""The async single-writer service the LSP and MCP servers of one process share."""

from neuralmind.service.engine_service import EngineService
from neuralmind.service.events import IndexingState, ServiceListener

__all__ = ["EngineService", "IndexingState", "ServiceListener"]
