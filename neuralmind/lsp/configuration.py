"""Settings from initializationOptions and workspace/didChangeConfiguration.

Accepted shapes: `{"neuralmind": {...}}` or the settings object itself; keys in
snake_case (as in `.neuralmind.toml`) or camelCase (as editors name settings).
Unknown keys and bad values are reported with window/showMessage and ignored;
the rest still applies. When a client sends `settings: null` (the pull model)
and supports workspace/configuration, the server asks for section "neuralmind".
"""

from __future__ import annotations

import logging
import re
from typing import Any

from lsprotocol import types

from neuralmind.config import MAX_BUDGET, MIN_BUDGET, WorkspaceConfig
from neuralmind.lsp.agent_endpoint import AgentEndpoints
from neuralmind.lsp.server import Feature

log = logging.getLogger("neuralmind.lsp")

SECTION = "neuralmind"
EDITOR_KEYS = ("budget", "exclude", "learning", "debounce_seconds", "mcp", "mcp_read_only",
               "mcp_tools")


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def extract_settings(raw: Any) -> dict[str, Any] | None:
    """The settings dict inside whatever the client sent; None when it sent nothing."""
    if raw is None:
        return None
    if isinstance(raw, dict) and isinstance(raw.get(SECTION), dict):
        raw = raw[SECTION]
    if not isinstance(raw, dict):
        return {"<settings>": raw}
    return {_snake(str(k)): v for k, v in raw.items()}


def apply_settings(config: WorkspaceConfig, settings: dict[str, Any] | None) -> list[str]:
    """Apply what is valid; return one human message per rejected key."""
    if not settings:
        return []
    if "<settings>" in settings:
        return [f"settings must be an object, got {type(settings['<settings>']).__name__}"]
    problems = config.update(settings)
    if "budget" in settings and not problems and not MIN_BUDGET <= config.budget <= MAX_BUDGET:
        problems.append(f"invalid value for 'budget': {config.budget}")
        config.budget = WorkspaceConfig().budget
    return [f"{p}; using the default" if p.startswith("invalid") else p for p in problems]


class Configuration(Feature):
    """workspace/didChangeConfiguration (and the pull model's workspace/configuration)."""

    def register(self) -> None:
        server = self.server

        @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
        async def on_change(params: types.DidChangeConfigurationParams) -> None:
            settings = extract_settings(params.settings)
            if settings is None and server.client_supports("workspace", "configuration"):
                try:
                    result = await server.workspace_configuration_async(types.ConfigurationParams(
                        items=[types.ConfigurationItem(section=SECTION)]))
                    settings = extract_settings(result[0] if result else None)
                except Exception as e:
                    log.info("workspace/configuration failed: %s", e)
                    return
            await self.apply(settings)

    async def apply(self, settings: dict[str, Any] | None) -> None:
        if settings is None:
            return
        server = self.server
        service = server.service
        if service is None:
            for problem in apply_settings(server.config, settings):
                server.warn_user(problem)
            return
        checked = WorkspaceConfig(**{k: v for k, v in service.config_values().items()})
        problems = apply_settings(checked, settings)
        valid = {k: v for k, v in settings.items()
                 if not any(f"'{k}'" in p for p in problems)}
        _, changed = service.update_config(valid)
        for problem in problems:
            server.warn_user(problem)
        if changed & {"mcp", "mcp_read_only", "mcp_tools"}:
            await server.get_feature(AgentEndpoints).restart()
        if changed:
            log.info("settings changed: %s", ", ".join(sorted(changed)))
