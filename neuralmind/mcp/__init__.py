"""The MCP adapter: tools over one EngineService, served over loopback HTTP or stdio."""
