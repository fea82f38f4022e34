"""The served workspace's warm-up as engine jobs: one per step, so requests go between
them, and the long step aside (answers and `status` served meanwhile, writes waiting);
before, the whole warm-up was one job that held them for 33-57 s on the Linux kernel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neuralmind.engine.warm_up import warm_up_steps

if TYPE_CHECKING:
    from neuralmind.engine.workspace import Workspace
    from neuralmind.service.engine_thread import EngineThread


async def warm_up(thread: EngineThread, ws: Workspace) -> None:
    """`ws`'s warm-up steps, in order, each its own engine job (`engine/warm_up.py`)."""
    thread.warming_up += 1          # from its first step: a save sent between steps waits too
    try:
        for step in warm_up_steps(ws):
            if step.aside:
                await thread.aside(step.run)
            else:
                await thread.run(step.run)
    finally:
        thread.warming_up -= 1
