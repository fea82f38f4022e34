"""Every test keeps learned memory out of the user's home.

A repository's learned stores live in a per-user data folder keyed by the repository's
identity (neuralmind/repo/learned.py). Tests point that folder at a temporary one: one
for the session, set when this file is imported (before any other conftest or test
module, so environments captured at import time and the servers of session-scoped
fixtures inherit it), one per test module for its module-scoped repositories and servers,
and a fresh one per test for what a test runs itself, so two test repositories that happen to share an
identity (same files, same second) never see each other's synapses or decisions.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuralmind.repo.learned import HOME_ENV

_SESSION_HOME = tempfile.mkdtemp(prefix="neuralmind-home-")
os.environ[HOME_ENV] = _SESSION_HOME


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_SESSION_HOME, ignore_errors=True)


@pytest.fixture(autouse=True, scope="module")
def module_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """This module's learned-memory home: two modules' module-scoped sample repositories
    share an identity (the memory one module remembers showed in another's observatory)."""
    home = tmp_path_factory.mktemp("module-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(HOME_ENV, str(home))
        yield home


@pytest.fixture(autouse=True)
def data_home(tmp_path_factory: pytest.TempPathFactory,
              monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's learned-memory home (also inherited by the processes it starts)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv(HOME_ENV, str(home))
    return home


@pytest.fixture(autouse=True)
def neuralmind_logger() -> Iterator[None]:
    """Undo what an in-process entry point did to the `neuralmind` logger.

    `setup_logging` (run by `cli.main` in process) hangs a handler on the stderr that
    pytest captures for that test and closes afterwards; a later warning written to it
    printed "--- Logging error ---" tracebacks into unrelated tests' output.
    """
    import logging

    logger = logging.getLogger("neuralmind")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:], logger.level, logger.propagate = saved[0], saved[1], saved[2]
