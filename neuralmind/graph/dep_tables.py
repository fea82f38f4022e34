"""The resolver's dependency tables kept reversed: key -> the files that looked it up.

`Resolver` (resolve.py) records, per file, the dependency keys its lookups read (a tuple
per file, the forward table) and keeps each table reversed, so a save finds the files to
resolve again from its changed keys. A key's files are a path for one, a list for a few,
and past `_USERS_LIST` their numbers (`FileNumbers`) in a sorted int32 array.
"""

from __future__ import annotations

import bisect
from array import array
from typing import Any

_NO_DEPS: tuple[Any, ...] = ()
_USERS_LIST = 32        # files holding one dependency key: a list up to this many, then numbers


class FileNumbers:
    """A number per file path, for the reversed dependency tables' long user lists (4 bytes
    a file in an `array`, where a set of paths was ~30-60 bytes a member). A number is never
    reused for another path: a removed file keeps its number, and gets it back if re-added."""

    __slots__ = ("number", "paths")

    def __init__(self) -> None:
        self.number: dict[str, int] = {}
        self.paths: list[str] = []

    def of(self, path: str) -> int:
        n = self.number.get(path)
        if n is None:
            n = self.number[path] = len(self.paths)
            self.paths.append(path)
        return n


def users_of(held: Any, files: FileNumbers) -> tuple[str, ...] | list[str]:
    """The files of one entry of a reversed dependency table (see `_set_deps`)."""
    if type(held) is str:
        return (held,)
    if type(held) is list:
        return held
    paths = files.paths
    return [paths[n] for n in held]


def _set_deps(table: dict[str, tuple[Any, ...]], users: dict[Any, Any], path: str,
              deps: tuple[Any, ...], files: FileNumbers) -> None:
    """`table[path] = deps`, with `users` (key -> files) kept the same table reversed: a
    path for one file, a list for a few, past _USERS_LIST the files' numbers (`files`) in
    a sorted int32 array: a name most files call (`kfree` on the kernel: thousands) is
    found, added and removed by bisection, and holds 4 bytes a file. The kernel's
    reversed call table held most of its ~10^7 (key, file) pairs in such keys, as sets
    of paths at ~30-60 bytes a member."""
    _drop_deps(table, users, path, files)
    table[path] = deps
    number = -1
    for k in deps:
        held = users.get(k)
        if held is None:
            users[k] = path
        elif type(held) is str:
            users[k] = [held, path]
        elif type(held) is list:
            if len(held) < _USERS_LIST:
                held.append(path)
            else:
                grown = array("i", sorted(files.of(p) for p in held))
                if number < 0:
                    number = files.of(path)
                bisect.insort(grown, number)
                users[k] = grown
        else:
            if number < 0:
                number = files.of(path)
            bisect.insort(held, number)


def _drop_deps(table: dict[str, tuple[Any, ...]], users: dict[Any, Any], path: str,
               files: FileNumbers) -> None:
    """`table.pop(path)`, with `users` kept the same table reversed."""
    for k in table.pop(path, _NO_DEPS):
        held = users[k]
        if type(held) is str:
            del users[k]
        elif type(held) is list:
            held.remove(path)
            if len(held) == 1:
                users[k] = held[0]
        else:
            number = files.number[path]
            del held[bisect.bisect_left(held, number)]
            if len(held) == 1:
                users[k] = files.paths[held[0]]
