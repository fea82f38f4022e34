"""The engine: `Workspace`, one object per project root that owns every component.

`Workspace` is loaded on first access: the service imports the path rule
(`engine.paths`) on the event loop, and the engine with its components (~50 ms of
imports) must load on the engine thread instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neuralmind.engine.workspace import Workspace

__all__ = ["Workspace"]


def __getattr__(name: str) -> Any:
    if name == "Workspace":
        # the engine and its components: ~0.2 s, on the engine thread (module docstring)
        from neuralmind.engine.workspace import Workspace

        return Workspace
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
