"""The process heap, kept out of the editor's way.

A language server holds a 20-40k-node graph and index for hours. CPython's cyclic GC
walks every tracked object it has not been told to skip, holding the GIL (the event
loop's thread waits): a young pass over what a save just built took 54-107 ms on whole
Django, a full pass over a loaded graph ~180 ms. And glibc keeps freed pages, so RSS
only ratchets up. The policy, in one place: pause the GC around bulk building, freeze
what was built (it holds no reference cycles, so replaced generations are still freed
by reference counting), and hand freed memory back after bursts.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def no_gc(freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic GC: building ~10^5 small objects otherwise triggers a full
    collection every few thousand allocations, which tripled Django's load time.

    `freeze`: then move every live object to the permanent generation (gc.freeze) before
    the GC resumes. Whatever was built meanwhile would otherwise all sit in the youngest
    generation, and the first collection after it would traverse it: ~180 ms holding the
    GIL for a Django graph, a stall for every other thread of a server. Frozen objects are
    still freed when their last reference goes; only a reference cycle among them would
    never be collected, and graphs hold none."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was:
            gc.enable()


def return_freed_memory() -> None:
    """Hand memory freed by a burst of work (embedding batches, index writes) back to the
    system: glibc keeps freed heap pages, so RSS would ratchet up over a day of saves
    (loading the model leaves ~70 MB free but held; one embedding burst ~80 MB)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)   # ctypes drops the GIL during the call
    except (OSError, AttributeError):
        pass                      # not glibc: nothing to do


M_ARENA_MAX = -8       # glibc's mallopt parameter number (malloc.h)


def limit_malloc_arenas(count: int) -> bool:
    """Let threads started from now on share at most `count` glibc malloc arenas.

    glibc gives each new thread its own arena (up to 8 per core), and memory freed in
    one stays there: two embedding threads each kept a batch's activations, +230-290 MB
    of peak RSS on a build. Must run before the threads first allocate, and before other
    threads have exited (their arenas are handed to new threads regardless of the
    limit). Returns False where it cannot apply (not glibc)."""
    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, int(count)))
    except (OSError, AttributeError):
        return False


def settle_after_load() -> None:
    """After a graph/index generation or the model is loaded: move what is alive now out
    of the garbage collector's sight (gc.freeze), so later full collections do not walk
    the whole graph holding the GIL (61 ms on rich-sized heaps, ~180 ms on Django: the
    editor's loop stalls that long), then return the load's freed heap. The loaded
    structures hold no reference cycles, so replaced generations are still freed by
    reference counting (measured: the frozen count stays flat across reloads)."""
    gc.freeze()
    return_freed_memory()


def settle_after_saves() -> None:
    """Saves pause: collect the young generations (where cyclic garbage is) and freeze what
    survives. Otherwise every object the saves created waits in the oldest generation,
    whose full passes (every tenth middle pass once loads are frozen) walked them all:
    17-26 ms stalls on whole Django."""
    gc.collect(1)
    gc.freeze()
    return_freed_memory()


RELEASE_CHUNK = 64      # dict entries freed per step; a thread switch can come between steps


def release_dict(table: dict[Any, Any]) -> None:
    """Empty `table` a few entries at a time, so that dropping a large structure (a replaced
    graph generation) never holds the GIL for long: a thread switch can come between steps."""
    keys = list(table)
    for i in range(0, len(keys), RELEASE_CHUNK):
        for key in keys[i:i + RELEASE_CHUNK]:
            del table[key]
