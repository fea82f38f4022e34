"""EngineService is assembled from request mixins: a name defined twice silently shadows one of them.

That happened once: DecisionRequests.memory_get (a list of ids) hid MemoryRequests.memory_get (one id),
and the LSP request looked up the characters of the id. Python's MRO raises nothing, so this test does.
"""

from __future__ import annotations

import itertools

from neuralmind.service.engine_service import EngineService


def _own(cls: type) -> set[str]:
    return {name for name in vars(cls) if not name.startswith("__")}


def test_no_request_mixin_shadows_another() -> None:
    parts = [EngineService, *EngineService.__bases__]
    assert len(parts) > 2, "EngineService is no longer assembled from mixins: retire this test"
    clashes = {(a.__name__, b.__name__): sorted(_own(a) & _own(b))
               for a, b in itertools.combinations(parts, 2) if _own(a) & _own(b)}
    assert clashes == {}
