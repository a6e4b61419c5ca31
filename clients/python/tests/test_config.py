"""How a client is set up: the URL and key from the environment (SG_URL,
SG_API_KEY; SG_KEY still read, with a warning), a base URL with or without
/graphql, and a URL that answers a web page instead of GraphQL."""

from __future__ import annotations

import http.server
import threading
import warnings

import pytest

from sessiongraph import Client, SessionGraphError
from sessiongraph.errors import CONFIGURATION_ERROR


def test_url_and_key_from_the_environment(url, key, monkeypatch):
    monkeypatch.setenv("SG_URL", url)
    monkeypatch.setenv("SG_API_KEY", key)
    monkeypatch.delenv("SG_KEY", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation for the current name
        with Client() as sg:
            assert sg.viewer().role == "CLIENT"


def test_the_old_key_variable_still_works_with_a_warning(url, key, monkeypatch):
    monkeypatch.setenv("SG_URL", url)
    monkeypatch.delenv("SG_API_KEY", raising=False)
    monkeypatch.setenv("SG_KEY", key)
    with pytest.warns(DeprecationWarning, match="SG_KEY is deprecated: set SG_API_KEY"):
        sg = Client()
    with sg:
        assert sg.viewer().role == "CLIENT"


def test_no_key_is_a_configuration_error(url, monkeypatch):
    monkeypatch.delenv("SG_API_KEY", raising=False)
    monkeypatch.delenv("SG_KEY", raising=False)
    with pytest.raises(SessionGraphError) as err:
        Client(url)
    assert err.value.code == CONFIGURATION_ERROR and not err.value.retryable
    assert "SG_API_KEY" in err.value.message


@pytest.mark.parametrize("suffix", ["", "/", "/graphql", "/graphql/"])
def test_base_url_with_or_without_graphql(url, key, suffix):
    with Client(url.rstrip("/") + suffix, key) as sg:
        assert sg.url == url.rstrip("/") + "/graphql"
        assert sg.viewer().role == "CLIENT"


class _WebPage(http.server.BaseHTTPRequestHandler):
    """A web server where the GraphQL endpoint was expected (a wrong URL)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b"<!doctype html><title>Welcome</title><p>Our shop</p>"
        self.send_response(200 if self.path.endswith("/graphql") else 404)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def web_page():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WebPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("path", ["", "/shop"])
def test_a_url_that_answers_html_is_a_configuration_error(web_page, key, path):
    with Client(web_page + path, key) as sg:
        with pytest.raises(SessionGraphError) as err:
            sg.viewer()
    assert err.value.code == CONFIGURATION_ERROR
    assert not err.value.retryable, "sending again to the same wrong URL cannot help"
    assert "answered a web page" in err.value.message and "text/html" in err.value.message
