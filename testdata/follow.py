"""Follows one session's events with the Python client (clients/python) for
deploy_test.go: each event as a JSON line on stdout, until stdin closes."""

import json
import os
import sys
import threading

import sessiongraph
from sessiongraph.live import Reconnect


def main() -> int:
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    client = sessiongraph.Client(os.environ["SG_URL"], os.environ["SG_API_KEY"],
                                 reconnect=Reconnect(initial=0.05, maximum=0.5))
    with client.session_events(os.environ["SG_SESSION"], after=0) as sub:
        for ev in sub:
            print(json.dumps({"sequence": ev.sequence, "kind": ev.kind}), flush=True)
    print("the subscription ended", file=sys.stderr, flush=True)
    return 3


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # noqa: BLE001 -- reported to the test
        print(f"the subscription failed: {e!r}", file=sys.stderr, flush=True)
        sys.exit(2)
