"""Checked access to the params of custom requests, and error translation.

Custom requests arrive as plain JSON (pygls has no types for them). Every
value is checked here so a malformed request answers InvalidParams with a
message naming the field, and the server keeps serving.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from neuralmind.errors import EngineError

log = logging.getLogger("neuralmind.lsp")

T = TypeVar("T")
_MISSING = object()


def invalid(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message=message)


class Params:
    """A request's params object with typed getters that raise InvalidParams."""

    def __init__(self, raw: Any, method: str) -> None:
        if raw is None or raw == []:   # Lua clients encode an empty table `{}` as `[]`
            raw = {}
        if hasattr(raw, "__attrs_attrs__"):  # pygls may hand us a typed object
            raw = {a.name: getattr(raw, a.name) for a in raw.__attrs_attrs__}
        if not isinstance(raw, dict):
            raise invalid(f"{method}: params must be an object")
        self.raw = raw
        self.method = method

    def _get(self, name: str, required: bool) -> Any:
        value = self.raw.get(name, _MISSING)
        if value is _MISSING or value is None:
            if required:
                raise invalid(f"{self.method}: '{name}' is required")
            return None
        return value

    def str(self, name: str, required: bool = False, max_len: int = 100_000) -> str | None:
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, str):
            raise invalid(f"{self.method}: '{name}' must be a string")
        if required and not value.strip():
            raise invalid(f"{self.method}: '{name}' must not be empty")
        if len(value) > max_len:
            raise invalid(f"{self.method}: '{name}' is longer than {max_len:,} characters")
        return value

    def int(self, name: str, lo: int, hi: int, required: bool = False) -> int | None:
        value = self._get(name, required)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise invalid(f"{self.method}: '{name}' must be an integer")
        if not lo <= int(value) <= hi:
            raise invalid(f"{self.method}: '{name}' must be between {lo} and {hi}")
        return int(value)

    def float(self, name: str, lo: float, hi: float) -> float | None:
        value = self._get(name, False)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise invalid(f"{self.method}: '{name}' must be a number")
        if not lo <= float(value) <= hi:
            raise invalid(f"{self.method}: '{name}' must be between {lo} and {hi}")
        return float(value)

    def bool(self, name: str, default: bool) -> bool:
        value = self._get(name, False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise invalid(f"{self.method}: '{name}' must be true or false")
        return value

    def str_list(self, name: str, max_items: int = 200) -> list[str] | None:
        value = self._get(name, False)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise invalid(f"{self.method}: '{name}' must be a list of strings")
        if len(value) > max_items:
            raise invalid(f"{self.method}: '{name}' has more than {max_items} items")
        return list(value)


def translate_errors(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """EngineError -> InvalidParams (data carries its code); anything unexpected -> logged
    InternalError, so one bad request never takes the server down."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return await fn(*args, **kwargs)
        except EngineError as e:
            raise JsonRpcInvalidParams(message=e.message, data={"code": e.code}) from None
        except JsonRpcException:
            raise
        except Exception as e:
            log.exception("request failed")
            raise JsonRpcInternalError(message=f"{type(e).__name__}: {e}") from None

    return wrapper
