"""Subscriptions against the real server, through a TCP proxy the tests cut:
every event arrives once, in order, across dropped connections, server
closes and server completes; a revoked key (4403) ends the stream."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import pytest

import sessiongraph
from sessiongraph import SessionGraphError, SubscriptionClosed

FAST = sessiongraph.Reconnect(initial=0.02, maximum=0.2)


def write_events(client, sid, n, pause=0.005):
    """n updateSession calls: one event each."""
    for i in range(n):
        client.update_session(sid, metadata={"i": str(i)})
        time.sleep(pause)


def start_writer(url, key, sid, n):
    def run():
        with sessiongraph.Client(url, key) as c:
            write_events(c, sid, n)
    t = threading.Thread(target=run)
    t.start()
    return t


def test_session_events_resume_after_cuts_once_in_order(url, key, session, proxy):
    n = 60
    with sessiongraph.Client(proxy.url, key, reconnect=FAST) as via_proxy:
        sub = via_proxy.session_events(session)
        writer = start_writer(url, key, session.id, n)
        got = []
        cuts = 0
        with sub:
            while len(got) < n:
                ev = sub.next(timeout=15)
                got.append(ev)
                if len(got) in (10, 25, 40):
                    cuts += proxy.cut()
        writer.join()
    seqs = [e.sequence for e in got]
    assert seqs == list(range(seqs[0], seqs[0] + n)), seqs
    assert [e.payload for e in got if e.kind == "session.updated"][:1], {e.kind for e in got}
    assert cuts >= 3 and proxy.accepted >= 4, (cuts, proxy.accepted)


def test_async_session_events_resume_after_cuts(url, key, session, proxy):
    n = 40

    async def main():
        async with sessiongraph.AsyncClient(proxy.url, key, reconnect=FAST) as c:
            got = []
            writer = None
            async with c.session_events(session, after=0) as sub:
                async for ev in sub:
                    got.append(ev)
                    if writer is None:
                        writer = start_writer(url, key, session.id, n)
                    if len(got) in (5, 20, 30):
                        proxy.cut()
                    if len(got) == n + 1:  # sessionOpened, then the writes
                        break
            writer.join()
            return got

    got = asyncio.run(asyncio.wait_for(main(), 30))
    assert [e.sequence for e in got] == list(range(1, len(got) + 1))
    assert got[0].kind != "session.updated" and got[-1].kind == "session.updated"
    assert proxy.accepted >= 4


@pytest.mark.parametrize("how", ["close-1001", "close-1000", "complete"])
def test_server_close_or_complete_resumes(url, key, client, session, proxy, how):
    with sessiongraph.Client(proxy.url, key, reconnect=FAST) as c, c.session_events(session, after=0) as sub:
        first = sub.next(timeout=10)
        assert first.sequence == 1
        write_events(client, session.id, 3)
        got = [sub.next(timeout=10) for _ in range(3)]
        before = proxy.accepted
        if how == "complete":
            proxy.complete()
        else:
            proxy.close_all(int(how.split("-")[1]), "going away")
        time.sleep(0.3)
        write_events(client, session.id, 3)
        got += [sub.next(timeout=10) for _ in range(3)]
    assert [e.sequence for e in got] == [2, 3, 4, 5, 6, 7]
    assert proxy.accepted > before


def test_revoked_key_ends_with_4403(url, admin, session):
    made = admin.create_api_key("py revoked", "CLIENT", tenant="acme")
    start = time.monotonic()
    with sessiongraph.Client(url, made.key, reconnect=FAST) as c, c.session_events(session, after=0) as sub:
        assert sub.next(timeout=10).sequence == 1
        admin.revoke_api_key(made.api_key.id)
        with pytest.raises(SubscriptionClosed) as err:
            sub.next(timeout=10)
        assert err.value.close_code == 4403 and err.value.code == "UNAUTHENTICATED"
        with pytest.raises(StopIteration):
            next(sub)
    assert time.monotonic() - start < 10


def test_other_tenants_session_is_not_found(url, other_key, session):
    with sessiongraph.Client(url, other_key) as c:
        with pytest.raises(SessionGraphError) as err:
            c.session_events(session)
        assert err.value.code == "NOT_FOUND" and not err.value.retryable
        with c.session_events(session, after=0) as sub, pytest.raises(SessionGraphError) as err:
            sub.next(timeout=10)
        assert err.value.code == "NOT_FOUND"


def test_entity_changes_and_context_updated(url, key, client, session, proxy):
    with sessiongraph.Client(proxy.url, key, reconnect=FAST) as c:
        changes = c.entity_changes(session, entity_types=["recipe"])
        builds = c.context_updated(session, "THINK", sessiongraph.ContextOptions(token_budget=3000))
        with changes, builds:
            assert builds.next(timeout=10).node == "THINK"
            with client.turn(session, "find recipes") as turn:
                turn.record_read(table="recipes", records=[{"id": str(uuid.uuid4()), "name": f"Dish {i}"} for i in range(3)])
                turn.assistant_message = "three dishes"
            got = [changes.next(timeout=10) for _ in range(3)]
            assert [g.ref for g in got] == ["recipe_1", "recipe_2", "recipe_3"]
            assert len({g.sequence for g in got}) == 1 and got[0].action == "read"
            build = builds.next(timeout=10)
            while "recipe_1" not in build.text:
                build = builds.next(timeout=10)
            proxy.cut()  # a fresh build after the resume
            assert "recipe_3" in builds.next(timeout=10).text
            with client.turn(session, "one more") as turn:
                turn.record_read(entity_type="recipe", records=[{"id": str(uuid.uuid4()), "name": "Dish 4"}])
                turn.assistant_message = "a fourth"
            assert changes.next(timeout=10).ref == "recipe_4"


def test_sessions_changed_for_admins(url, admin_key, client, proxy):
    async def main():
        async with sessiongraph.AsyncClient(proxy.url, admin_key, reconnect=FAST) as admin:
            cursor = await admin.sessions_changed_cursor()  # read, then load the list, then subscribe
            first = client.open_session("acme", "py-feed-" + uuid.uuid4().hex).session
            second = None
            seen = []
            async with admin.sessions_changed(after=cursor) as sub:
                async for ev in sub:
                    seen.append(ev)
                    if ev.session_id == first.id and second is None:
                        proxy.cut()
                        second = client.open_session("acme", "py-feed-" + uuid.uuid4().hex).session
                    if second is not None and ev.session_id == second.id:
                        return seen, first, second

    seen, first, second = asyncio.run(asyncio.wait_for(main(), 20))
    assert [e.session_id for e in seen].count(first.id) == 1
    assert len({e.cursor for e in seen}) == len(seen) and all(e.cursor for e in seen)
    assert proxy.accepted >= 2


def test_entity_changes_resume_inside_one_event(url, key, client, session, proxy):
    """A cut after 2 of the 5 changes one recordRead makes: the other 3 follow, none twice."""
    with sessiongraph.Client(proxy.url, key, reconnect=FAST) as c, c.entity_changes(session) as changes:
        with client.turn(session, "warm up") as turn:  # the stream is live before the cut is armed
            turn.record_read(table="recipes", records=[{"id": str(uuid.uuid4()), "name": "First"}])
            turn.assistant_message = "-"
        assert changes.next(timeout=10).ref == "recipe_1"
        proxy.drop_after(2)
        with client.turn(session, "five dishes") as turn:
            turn.record_read(table="recipes", records=[{"id": str(uuid.uuid4()), "name": f"Dish {i}"} for i in range(5)])
            turn.assistant_message = "-"
        got = [changes.next(timeout=10) for _ in range(5)]
        assert [g.ref for g in got] == [f"recipe_{i}" for i in range(2, 7)]
        assert len({g.sequence for g in got}) == 1
        assert proxy.accepted >= 2
        with client.turn(session, "one more") as turn:
            turn.record_read(table="recipes", records=[{"id": str(uuid.uuid4()), "name": "Last"}])
            turn.assistant_message = "-"
        assert changes.next(timeout=10).ref == "recipe_7"


def test_session_events_carry_their_turn(url, key, client, session):
    with client.turn(session, "find recipes") as turn:
        turn.record_read(table="recipes", records=[{"id": str(uuid.uuid4()), "name": "Dal"}])
        turn.assistant_message = "one dish"
    got = []
    with sessiongraph.Client(url, key) as c:
        sub = c.session_events(session, after=0)
        with sub:
            while not got or got[-1].kind != "turn.ended":
                got.append(sub.next(timeout=10))
    assert got[0].kind == "session.opened" and got[0].turn is None
    assert [(e.kind, e.turn) for e in got if e.turn is not None] == [("turn.began", 1), ("refs.read", 1), ("turn.ended", 1)]
