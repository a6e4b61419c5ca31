"""Fixtures: the real server started by clients/python_test.go (SG_URL and
keys in the environment), fresh sessions, and a TCP proxy the tests cut."""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import threading
import uuid
from typing import List, Optional

import pytest

import sessiongraph

HERE = os.path.dirname(os.path.abspath(__file__))


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through `go test ./clients -run TestPythonClient`, "
                    "which installs the wheel in a venv, starts a real server and sets SG_URL, SG_ADMIN_KEY, "
                    "SG_API_KEY and SG_OTHER_KEY")
    return value


@pytest.fixture(scope="session")
def url() -> str:
    return _env("SG_URL")


@pytest.fixture(scope="session")
def admin_key() -> str:
    return _env("SG_ADMIN_KEY")


@pytest.fixture(scope="session")
def key() -> str:
    return _env("SG_API_KEY")


@pytest.fixture(scope="session")
def other_key() -> str:
    return _env("SG_OTHER_KEY")


@pytest.fixture
def client(url: str, key: str):
    with sessiongraph.Client(url, key) as c:
        yield c


@pytest.fixture
def admin(url: str, admin_key: str):
    with sessiongraph.Client(url, admin_key) as c:
        yield c


@pytest.fixture
def session(client: sessiongraph.Client) -> sessiongraph.Session:
    """A new session of tenant acme."""
    return client.open_session("acme", "py-" + uuid.uuid4().hex).session


class Proxy:
    """A TCP proxy between a client and the server. cut() drops every
    connection at once; close_all(code) and complete() send, between two
    whole WebSocket frames, what a server would: a close frame, or a
    graphql-transport-ws complete of the operation last seen."""

    def __init__(self, target: str):
        host, port = target.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.lock = threading.Lock()
        self.conns: List["_Conn"] = []
        self.accepted = 0
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                down, _ = self.listener.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(self.target)
            except OSError:
                down.close()
                continue
            conn = _Conn(down, up)
            with self.lock:
                self.conns.append(conn)
                self.accepted += 1
            threading.Thread(target=conn.run_up, daemon=True).start()
            threading.Thread(target=conn.run_down, daemon=True).start()

    def websockets(self) -> List["_Conn"]:
        with self.lock:
            return [c for c in self.conns if c.upgraded and not c.dead]

    def cut(self) -> int:
        """Drops every open connection (a network failure); returns how many."""
        with self.lock:
            conns, self.conns = self.conns, []
        for c in conns:
            c.kill()
        return len(conns)

    def close_all(self, code: int, reason: str = "") -> None:
        for c in self.websockets():
            c.inject(struct.pack("!BB", 0x88, 2 + len(reason)) + struct.pack("!H", code) + reason.encode(), then_kill=True)

    def complete(self) -> None:
        for c in self.websockets():
            if c.last_id is not None:
                body = json.dumps({"id": c.last_id, "type": "complete"}).encode()
                c.inject(struct.pack("!BB", 0x81, len(body)) + body)

    def drop_after(self, n: int) -> None:
        """Drops every connection once n more `next` messages have gone through
        (a cut between two messages of one event, say)."""
        for c in self.websockets():
            c.drop_after = n

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        self.cut()


class _Conn:
    def __init__(self, down: socket.socket, up: socket.socket):
        self.down, self.up = down, up
        self.dead = False
        self.upgraded = False
        self.plain = False
        self.last_id: Optional[str] = None
        self.drop_after: Optional[int] = None
        self.pending: List[tuple] = []
        self.plock = threading.Lock()

    def kill(self) -> None:
        self.dead = True
        for s in (self.down, self.up):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def inject(self, frame: bytes, then_kill: bool = False) -> None:
        with self.plock:
            self.pending.append((frame, then_kill))

    def run_up(self) -> None:  # client -> server, as is
        try:
            while not self.dead:
                data = self.down.recv(65536)
                if not data:
                    break
                self.up.sendall(data)
        except OSError:
            pass
        self.kill()

    def run_down(self) -> None:  # server -> client, whole frames, with injections between them
        buf = b""
        try:
            while not self.dead:
                ready, _, _ = select.select([self.up], [], [], 0.02)
                if ready:
                    data = self.up.recv(65536)
                    if not data:
                        break
                    buf += data
                if self.plain:
                    self.down.sendall(buf)
                    buf = b""
                    continue
                if not self.upgraded:
                    end = buf.find(b"\r\n\r\n")
                    if end < 0:
                        continue
                    if not buf.startswith(b"HTTP/1.1 101"):  # plain HTTP: pass it all through
                        self.plain = True
                        continue
                    self.down.sendall(buf[:end + 4])
                    buf = buf[end + 4:]
                    self.upgraded = True
                while True:
                    n = _frame_length(buf)
                    if n is None:
                        break
                    frame, buf = buf[:n], buf[n:]
                    is_next = self._note(frame)
                    self.down.sendall(frame)
                    if is_next and self.drop_after is not None:
                        self.drop_after -= 1
                        if self.drop_after <= 0:
                            self.kill()
                            return
                with self.plock:
                    pending, self.pending = self.pending, []
                for frame, then_kill in pending:
                    self.down.sendall(frame)
                    if then_kill:
                        self.down.shutdown(socket.SHUT_WR)
                        threading.Timer(0.5, self.kill).start()
                        return
        except OSError:
            pass
        self.kill()

    def _note(self, frame: bytes) -> bool:
        """Whether frame is a `next` message (its id is remembered)."""
        if frame[0] & 0x0F != 1:
            return False
        try:
            msg = json.loads(frame[_header_length(frame):])
        except ValueError:
            return False
        if msg.get("type") != "next":
            return False
        self.last_id = msg.get("id")
        return True


def _header_length(buf: bytes) -> int:
    n = buf[1] & 0x7F
    return 2 + (2 if n == 126 else 8 if n == 127 else 0)


def _frame_length(buf: bytes) -> Optional[int]:
    if len(buf) < 2:
        return None
    n, h = buf[1] & 0x7F, _header_length(buf)
    if len(buf) < h:
        return None
    if n == 126:
        n = struct.unpack("!H", buf[2:4])[0]
    elif n == 127:
        n = struct.unpack("!Q", buf[2:10])[0]
    return h + n if len(buf) >= h + n else None


@pytest.fixture
def proxy(url: str):
    p = Proxy(url)
    yield p
    p.close()
