"""NeuralMind: a local code-context engine.

The engine lives in the component packages (graph, index, context, synapse,
decisions); `neuralmind.engine.Workspace` ties them together. The CLI, the LSP
server and the MCP server are thin adapters over that one engine.
"""

__version__ = "0.1.0"
