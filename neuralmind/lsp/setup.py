"""The server with its feature groups: add a group here (see `server.Feature`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neuralmind.lsp.agent_endpoint import AgentEndpoints
from neuralmind.lsp.configuration import Configuration
from neuralmind.lsp.diagnostics import DecisionDiagnostics
from neuralmind.lsp.documents import Documents
from neuralmind.lsp.editor_state import EditorState
from neuralmind.lsp.hover import Hover
from neuralmind.lsp.lifecycle import Lifecycle
from neuralmind.lsp.memory import MemoryRequests
from neuralmind.lsp.requests import CustomRequests
from neuralmind.lsp.review import ReviewDiagnostics
from neuralmind.lsp.server import NeuralMindServer
from neuralmind.lsp.symbols import WorkspaceSymbols

if TYPE_CHECKING:
    from neuralmind.service.endpoint import EndpointLoader

# In this order: hooks run first to last (`close` last to first), so the agent endpoint
# starts after everything else is ready and stops first.
FEATURES = (Lifecycle, Documents, DecisionDiagnostics, ReviewDiagnostics, Hover, WorkspaceSymbols,
            CustomRequests, MemoryRequests, Configuration, EditorState, AgentEndpoints)


def create_server(log_file: str | None = None,
                  agent_endpoint: EndpointLoader | None = None) -> NeuralMindServer:
    server = NeuralMindServer(log_file, agent_endpoint)
    for feature in FEATURES:
        server.add_feature(feature(server))
    return server
