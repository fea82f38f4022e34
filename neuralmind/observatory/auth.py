"""Who may see the observatory: one-time login tickets, then a session cookie.

A browser cannot send the endpoint's bearer token, so whoever holds the token (the
editor through its LSP request, `neuralmind serve`) mints a ticket, and the login URL
carrying it is opened once: the server answers with an HttpOnly, SameSite=Strict
session cookie and redirects to the page. Every other request needs that cookie.
Cookies are not port-specific, so the cookie's name carries the port (two servers
on one machine keep their own sessions).
"""

from __future__ import annotations

import collections
import hmac
import secrets
import time
from collections.abc import Callable

from neuralmind.config import (
    OBSERVATORY_MAX_SESSIONS,
    OBSERVATORY_MAX_TICKETS,
    OBSERVATORY_TICKET_SECONDS,
)


class Tickets:
    """One-time login tickets, each valid once and for OBSERVATORY_TICKET_SECONDS."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 ttl: float = OBSERVATORY_TICKET_SECONDS) -> None:
        self._clock = clock
        self._ttl = ttl
        self._expiry: collections.OrderedDict[str, float] = collections.OrderedDict()

    def mint(self) -> str:
        ticket = secrets.token_urlsafe(24)
        self._expiry[ticket] = self._clock() + self._ttl
        while len(self._expiry) > OBSERVATORY_MAX_TICKETS:
            self._expiry.popitem(last=False)
        return ticket

    def redeem(self, ticket: str) -> bool:
        """True once for a ticket minted here and not expired; it is spent either way."""
        expiry = self._expiry.pop(ticket, None)
        return expiry is not None and self._clock() <= expiry


class Sessions:
    """Browser sessions: random cookie values this server handed out at login."""

    def __init__(self, port: int) -> None:
        self.cookie_name = f"neuralmind_observatory_{port}"
        self._tokens: collections.OrderedDict[str, None] = collections.OrderedDict()

    def open(self) -> str:
        """A new session; returns the Set-Cookie header value."""
        token = secrets.token_urlsafe(32)
        self._tokens[token] = None
        while len(self._tokens) > OBSERVATORY_MAX_SESSIONS:
            self._tokens.popitem(last=False)
        return (f"{self.cookie_name}={token}; Path=/observatory; HttpOnly; SameSite=Strict")

    def valid(self, cookie_header: bytes | None) -> bool:
        """Whether the request's Cookie header carries a session of this server."""
        if not cookie_header:
            return False
        given = _cookie(cookie_header.decode("latin-1"), self.cookie_name)
        if not given:
            return False
        # constant time against each live session (there are a few at most)
        return any(hmac.compare_digest(given, token) for token in self._tokens)


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return value.strip()
    return None
