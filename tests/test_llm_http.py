"""The OpenAI-compatible HTTP backend against a scripted fake server on loopback: retries,
the whole-request deadline, and one cause with one fix for each way a server can fail."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mags_lib.errors import BackendUnavailableError
from mags_lib.llm import load_llm

MSGS = [{"role": "user", "content": "Hi"}]
CHAT_OK = {"choices": [{"message": {"content": "hello"}, "finish_reason": "stop"}],
           "usage": {"prompt_tokens": 3, "completion_tokens": 1}}
TEXT_OK = {"choices": [{"text": " world", "finish_reason": "length"}], "usage": {}}


# -- the fake server: each request runs the next scripted behaviour (the last one repeats) -----

def _head(status: int = 200, reason: str = "OK", **headers: str) -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}", "Connection: close",
             *(f"{k.replace('_', '-')}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer(payload=CHAT_OK, status: int = 200, **headers: str):
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()

    def behave(h, stop):
        h.wfile.write(_head(status, Content_Length=str(len(data)),
                            Content_Type="application/json", **headers) + data)
    return behave


def hung_body(stop_after: float = 10.0):
    def behave(h, stop):
        h.wfile.write(_head(Content_Length="100", Content_Type="application/json") + b'{"ch')
        h.wfile.flush()
        stop.wait(stop_after)
    return behave


def trickle(payload=CHAT_OK, every: float = 1.5):
    data = json.dumps(payload).encode()[:6]  # six bytes: nine seconds if nothing stops it

    def behave(h, stop):
        h.wfile.write(_head(Content_Length=str(len(data)), Content_Type="application/json"))
        h.wfile.flush()
        for byte in data:
            if stop.wait(every):
                return
            try:
                h.wfile.write(bytes([byte]))
                h.wfile.flush()
            except OSError:  # the client gave up: what the test wants
                return
    return behave


def reset_mid_body():
    def behave(h, stop):
        h.wfile.write(_head(Content_Length="500", Content_Type="application/json") + b'{"cho')
        h.wfile.flush()
        # SO_LINGER 0: close with a TCP reset, as a crashing server does
        h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        h.connection.close()
    return behave


def sse(events: list, done: bool = True, then_cut: bool = False):
    """A chunked server-sent event stream; `then_cut` drops the connection mid-stream."""
    def chunk(text: str) -> bytes:
        data = text.encode()
        return f"{len(data):x}\r\n".encode() + data + b"\r\n"

    def behave(h, stop):
        h.wfile.write(_head(Content_Type="text/event-stream", Transfer_Encoding="chunked"))
        for event in events:
            line = event if isinstance(event, str) else json.dumps(event)
            h.wfile.write(chunk(f"data: {line}\n\n"))
            h.wfile.flush()
        if then_cut:
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        if done:
            h.wfile.write(chunk("data: [DONE]\n\n"))
        h.wfile.write(b"0\r\n\r\n")
    return behave


def piece(text: str, finish: str | None = None) -> dict:
    return {"choices": [{"delta": {"content": text}, "finish_reason": finish}]}


@pytest.fixture
def serve():
    """serve(*behaviours) -> (base_url, seen requests); every server is stopped afterwards."""
    started = []

    def start(*behaviours):
        script, seen, stop = list(behaviours), [], threading.Event()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                seen.append({"path": self.path, "body": body,
                             "auth": self.headers.get("Authorization"), "at": time.monotonic()})
                behave = script.pop(0) if len(script) > 1 else script[0]
                self.close_connection = True
                behave(self, stop)

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        started.append((server, stop))
        return f"http://127.0.0.1:{server.server_port}/v1", seen

    yield start
    for server, stop in started:
        stop.set()
        server.shutdown()
        server.server_close()


def _llm(url: str, **config):
    config = {"timeout_s": 5.0, "retry_backoff_s": 0.05, "cache": False, **config}
    return load_llm(backend="openai", model="served", base_url=url, **config)


def _fails(call) -> tuple[BackendUnavailableError, float]:
    t0 = time.monotonic()
    with pytest.raises(BackendUnavailableError) as err:
        call()
    return err.value, time.monotonic() - t0


# -- retries ------------------------------------------------------------------------------------

def test_a_503_is_retried_and_then_succeeds(serve):
    url, seen = serve(answer({"error": "busy"}, status=503), answer())
    assert _llm(url).chat(MSGS).text == "hello"
    assert len(seen) == 2


def test_a_429_waits_as_long_as_retry_after_asks(serve):
    url, seen = serve(answer({"error": "slow down"}, status=429, Retry_After="1"), answer())
    t0 = time.monotonic()
    assert _llm(url).chat(MSGS).text == "hello"
    assert seen[1]["at"] - seen[0]["at"] >= 0.9 and time.monotonic() - t0 < 3


def test_a_server_overloaded_for_good_fails_with_the_overload_fix(serve):
    url, seen = serve(answer({"error": "rate limited"}, status=429))
    err, seconds = _fails(lambda: _llm(url, max_retries=2).chat(MSGS))
    assert len(seen) == 3 and seconds < 2
    assert "HTTP 429" in err.cause and "rate limited" in err.cause
    assert "overloaded; retried 2 times" in err.fix and "max_retries" in err.fix
    assert "model" not in err.fix


def test_a_retry_after_past_the_deadline_fails_at_once(serve):
    url, seen = serve(answer({}, status=503, Retry_After="30"), answer())
    err, seconds = _fails(lambda: _llm(url, timeout_s=2).chat(MSGS))
    assert len(seen) == 1 and seconds < 1
    assert "asked to wait 30 s" in err.cause and "overloaded; retried 0 times" in err.fix


def test_a_connection_reset_mid_response_is_retried(serve):
    url, seen = serve(reset_mid_body(), answer(TEXT_OK))
    assert _llm(url).complete("Hello").text == " world"
    assert len(seen) == 2


def test_a_server_error_is_not_retried(serve):
    url, seen = serve(answer(b"model crashed", status=500), answer())
    err, _ = _fails(lambda: _llm(url).chat(MSGS))
    assert len(seen) == 1 and "HTTP 500: model crashed" in err.cause and "logs" in err.fix


# -- one cause, one fix -------------------------------------------------------------------------

def test_a_bad_key_names_the_key(serve):
    url, _ = serve(answer({"error": "invalid api key"}, status=401))
    err, _ = _fails(lambda: _llm(url, api_key_env="MAGS_TEST_KEY").chat(MSGS))
    assert "HTTP 401" in err.cause and "$MAGS_TEST_KEY" in err.fix


@pytest.mark.parametrize("status, body", [
    (404, {"error": {"message": "The model `served` does not exist.", "code": 404}}),
    (400, {"error": {"code": "model_not_found"}}),
])
def test_a_missing_model_names_the_model(serve, status, body):
    url, _ = serve(answer(body, status=status))
    err, _ = _fails(lambda: _llm(url).chat(MSGS))
    assert f"HTTP {status}" in err.cause
    assert "check the model name" in err.fix and "'served'" in err.fix


def test_a_redirect_names_where_it_points(serve):
    url, _ = serve(answer(b"", status=307, Location="https://llm.example/v1/chat/completions"))
    err, _ = _fails(lambda: _llm(url).chat(MSGS))
    assert "HTTP 307" in err.cause and "https://llm.example/v1" in err.fix


def test_an_unreachable_server_says_start_it():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    err, seconds = _fails(lambda: _llm(f"http://127.0.0.1:{port}/v1").chat(MSGS))
    assert "cannot reach the LLM server" in err.cause and "start the server" in err.fix
    assert seconds < 1  # refused at once: nothing to retry


@pytest.mark.parametrize("body, says", [
    (b'{"choices": "\xff\xfe"}', "not UTF-8"),
    (b"<html>502 Bad Gateway</html>", "not JSON"),
    (b'[{"message": {"content": "hi"}}]', "not an object but a list"),
])
def test_a_body_that_is_not_an_answer_is_named(serve, body, says):
    url, _ = serve(answer(body))
    err, _ = _fails(lambda: _llm(url).chat(MSGS))
    assert says in err.cause and "OpenAI-compatible /v1 endpoint" in err.fix


@pytest.mark.parametrize("payload", [{"object": "chat.completion"}, {"choices": []},
                                     {"choices": ["text"]}])
def test_an_answer_without_choices_points_at_the_server_logs(serve, payload):
    url, _ = serve(answer(payload))
    err, _ = _fails(lambda: _llm(url).chat(MSGS))
    assert "without choices" in err.cause and "server logs" in err.fix


# -- the deadline covers the whole request -------------------------------------------------------

def test_a_hung_body_times_out_within_timeout_s(serve):
    url, seen = serve(hung_body())
    err, seconds = _fails(lambda: _llm(url, timeout_s=1).chat(MSGS))
    assert 0.9 <= seconds < 1.8 and len(seen) == 1
    assert "no complete answer" in err.cause and "timeout_s=1" in err.cause
    assert "raise LLMConfig.timeout_s" in err.fix and "start the server" not in err.fix


def test_a_trickling_body_cannot_outlast_the_deadline(serve):
    url, _ = serve(trickle())
    err, seconds = _fails(lambda: _llm(url, timeout_s=2).chat(MSGS))
    assert 1.9 <= seconds < 2.8  # not nine seconds, nor the three of a check after each byte
    assert "timeout_s=2" in err.cause


def test_retries_stay_inside_the_deadline(serve):
    url, seen = serve(answer({}, status=503, Retry_After="1"))
    err, seconds = _fails(lambda: _llm(url, timeout_s=1.5, max_retries=10).chat(MSGS))
    assert len(seen) == 2 and seconds < 1.5
    assert "overloaded; retried 1 time over" in err.fix


# -- streaming ----------------------------------------------------------------------------------

def test_a_reply_streams_in_pieces(serve):
    url, seen = serve(sse([piece("hello "), piece("there", finish="stop")]))
    assert list(_llm(url).stream_chat(MSGS)) == ["hello ", "there"]
    assert seen[0]["body"]["stream"] is True


def test_a_stream_is_retried_until_it_starts(serve):
    url, seen = serve(answer({}, status=503), sse([piece("ok", finish="stop")]))
    assert list(_llm(url).stream_chat(MSGS)) == ["ok"]
    assert len(seen) == 2


@pytest.mark.parametrize("behaviour, says", [
    (sse([piece("hello "), piece("the")], then_cut=True), "broke in the middle"),
    (sse([piece("hello "), piece("the"), "{not json"]), "not a JSON object"),
    (sse([piece("hello "), piece("the"), [1, 2]]), "not a JSON object"),
    (sse([piece("hello "), piece("the")], done=False), "ended before the reply was complete"),
    (sse([piece("hello "), piece("the"), {"error": {"message": "OOM"}}]), "OOM"),
], ids=["connection-cut", "not-json", "json-list", "no-done", "error-event"])
def test_a_stream_that_breaks_keeps_its_pieces_and_raises(serve, behaviour, says):
    url, seen = serve(behaviour, answer())
    pieces = []
    with pytest.raises(BackendUnavailableError) as err:
        for p in _llm(url).stream_chat(MSGS):
            pieces.append(p)
    assert pieces == ["hello ", "the"] and says in err.value.cause
    assert len(seen) == 1  # pieces were shown: asking again would repeat them


def test_a_stream_that_hangs_times_out(serve):
    url, _ = serve(hung_body())
    err, seconds = _fails(lambda: list(_llm(url, timeout_s=1).stream_chat(MSGS)))
    assert seconds < 1.8 and "timeout_s=1" in err.cause


@pytest.mark.parametrize("call", ["chat", "complete", "stream_chat"])
def test_every_entry_point_raises_backend_unavailable(serve, call):
    url, _ = serve(answer(b"[]"))
    llm = _llm(url)
    run = {"chat": lambda: llm.chat(MSGS), "complete": lambda: llm.complete("Hi"),
           "stream_chat": lambda: list(llm.stream_chat(MSGS))}[call]
    _fails(run)


# -- the request itself ---------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["grammar", "guided_grammar"])
def test_the_grammar_goes_in_the_configured_field(serve, monkeypatch, field):
    url, seen = serve(answer(), answer(TEXT_OK), sse([piece("x", finish="stop")]))
    monkeypatch.setenv("MAGS_TEST_KEY", "sk-test")
    llm = _llm(url, grammar_field=field, api_key_env="MAGS_TEST_KEY")
    llm.chat(MSGS, grammar='root ::= "x"', stop=["\n"])
    llm.complete("Hi", grammar='root ::= "x"')
    list(llm.stream_chat(MSGS, grammar='root ::= "x"'))
    assert [s["body"][field] for s in seen] == ['root ::= "x"'] * 3
    assert [s["path"] for s in seen] == ["/v1/chat/completions", "/v1/completions",
                                         "/v1/chat/completions"]
    assert seen[0]["body"]["stop"] == ["\n"] and seen[0]["auth"] == "Bearer sk-test"
    assert all(({"grammar", "guided_grammar"} - {field}).isdisjoint(s["body"]) for s in seen)


def test_the_http_client_is_imported_only_when_the_backend_is_built():
    code = ("import sys, mags_lib, mags_lib.llm, mags_lib.llm.http; "
            "print(sorted({'httpx', 'tenacity'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("field, value", [("timeout_s", 0.0), ("max_retries", -1),
                                          ("retry_backoff_s", -0.5)])
def test_limits_that_cannot_work_are_a_config_error(field, value):
    from mags_lib.errors import ConfigError

    with pytest.raises(ConfigError, match=field):
        load_llm(backend="openai", model="m", base_url="http://127.0.0.1:9/v1", **{field: value})
