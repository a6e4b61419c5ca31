"""Errors: every GraphQL error the server answers becomes a SessionGraphError
carrying its extensions.code (and extensions.field when the server names the
argument). Codes worth retrying as they are raise RetryableError, a subclass."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

# The codes of docs/errors.md whose answer is "yes": the same request
# may succeed later (after Retry-After for UNAVAILABLE and RATE_LIMITED;
# from the last cursor for a subscriber).
RETRYABLE_CODES = frozenset({"TIMEOUT", "CANCELLED", "UNAVAILABLE", "RATE_LIMITED", "SUBSCRIBER_TOO_SLOW",
                             "PERSISTED_QUERY_NOT_FOUND"})

# Codes that may succeed once something else has happened first (endTurn, a
# save, another subscription ending): not retryable as they are.
RETRY_AFTER_ACTION_CODES = frozenset({"TURN_IN_PROGRESS", "NO_OPEN_TURN", "REF_PENDING", "SUBSCRIPTION_LIMIT"})


class SessionGraphError(Exception):
    """A GraphQL error: code is extensions.code, field extensions.field."""

    retryable = False

    def __init__(self, message: str, code: Optional[str] = None, field: Optional[str] = None,
                 path: Optional[List[Any]] = None, errors: Optional[List[Dict[str, Any]]] = None,
                 status: Optional[int] = None, retry_after: Optional[float] = None):
        super().__init__(f"{code}: {message}" if code else message)
        self.message = message
        self.code = code
        self.field = field
        self.path = path
        self.errors = errors or []
        self.status = status
        self.retry_after = retry_after


class RetryableError(SessionGraphError):
    """An error whose code says the same request may succeed later."""

    retryable = True


class SubscriptionClosed(SessionGraphError):
    """The server closed a subscription's WebSocket with a code that ends it
    (4403: the key is unknown or revoked; 44xx: a protocol error)."""

    def __init__(self, close_code: int, reason: str):
        code = "UNAUTHENTICATED" if close_code == 4403 else "SUBSCRIPTION_CLOSED"
        super().__init__(f"WebSocket closed {close_code}: {reason}", code=code)
        self.close_code = close_code
        self.reason = reason


CONFIGURATION_ERROR = "CONFIGURATION_ERROR"
"""This client's own code for a URL that is not a sessiongraph GraphQL endpoint
(it answered a web page) or a missing URL or key: sending again cannot help."""


def configuration_error(url: Optional[str], status: Optional[int], why: Optional[str] = None) -> SessionGraphError:
    """The error for a client that is set up wrong; by default, a URL that answered HTML."""
    if why is None:
        why = (f"{url} answered a web page (HTTP {status}, text/html), not GraphQL: "
               "give the server's address, such as http://127.0.0.1:8080 or http://127.0.0.1:8080/graphql")
    return SessionGraphError(why, code=CONFIGURATION_ERROR, status=status)


def from_errors(errors: List[Dict[str, Any]], status: Optional[int] = None,
                retry_after: Optional[float] = None) -> SessionGraphError:
    """The exception for a response's errors (the first one decides the class)."""
    first = errors[0] if errors else {"message": "unknown error"}
    ext = first.get("extensions") or {}
    code = ext.get("code")
    cls = RetryableError if code in RETRYABLE_CODES else SessionGraphError
    return cls(first.get("message", ""), code=code, field=ext.get("field"), path=first.get("path"),
               errors=errors, status=status, retry_after=retry_after)
