"""sessiongraph: a Python client for agent runtimes (sync and asyncio).

    from sessiongraph import Client
    sg = Client("http://127.0.0.1:8080", key)
    s = sg.open_session("acme", "chat-1").session
    with sg.turn(s, "What can I cook tonight?") as turn:
        rows = turn.record_read(table="recipes", records=db_rows, step=1)
        ...
        turn.assistant_message = reply
"""

from .client import AsyncClient, AsyncTurnScope, Client, TurnScope
from .errors import (RETRYABLE_CODES, RetryableError, SessionGraphError, SubscriptionClosed)
from .live import AsyncSubscription, Reconnect, Subscription
from .types import *  # noqa: F401,F403
from .types import ContextOptions, ExecutionSummaryInput, FilterInput, StepSummaryInput

__all__ = ["Client", "AsyncClient", "TurnScope", "AsyncTurnScope", "SessionGraphError", "RetryableError",
           "SubscriptionClosed", "RETRYABLE_CODES", "Subscription", "AsyncSubscription", "Reconnect",
           "ContextOptions", "ExecutionSummaryInput", "FilterInput", "StepSummaryInput"]
__version__ = "0.2.0"
