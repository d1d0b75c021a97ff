"""LLM backends: determinism, grammar, cache, HTTP errors. The embedded model runs for real."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from mags_lib.errors import BackendUnavailableError, MagsError
from mags_lib.llm import Completion, LLMConfig, load_llm
from mags_lib.llm.cache import CachedLLM, GenerationCache

MSGS = [{"role": "user", "content": "In one sentence, what is a knowledge graph?"}]


@pytest.mark.slow
def test_temperature_zero_is_deterministic_across_calls_and_instances(embedded_llm):
    first = embedded_llm.chat(MSGS, max_tokens=24, temperature=0.0, seed=0)
    embedded_llm.chat([{"role": "user", "content": "Say hi"}], max_tokens=5)  # disturb KV cache
    again = embedded_llm.chat(MSGS, max_tokens=24, temperature=0.0, seed=0)
    fresh = load_llm(LLMConfig(cache=False, n_ctx=1024)).chat(MSGS, max_tokens=24)
    assert first.text and first.text == again.text == fresh.text
    assert first.usage["completion_tokens"] > 0 and first.seconds > 0


@pytest.mark.slow
def test_sampling_with_a_fixed_seed_repeats(embedded_llm):
    a = embedded_llm.chat(MSGS, max_tokens=16, temperature=1.0, seed=7).text
    b = embedded_llm.chat(MSGS, max_tokens=16, temperature=1.0, seed=7).text
    others = {embedded_llm.chat(MSGS, max_tokens=16, temperature=1.0, seed=s).text for s in range(8, 12)}
    assert a == b
    assert len(others | {a}) > 1  # the seed does change samples


@pytest.mark.slow
def test_grammar_constrains_output(embedded_llm):
    grammar = 'root ::= "colour: " ("red" | "green" | "blue")'
    for seed in range(3):
        out = embedded_llm.chat(MSGS, grammar=grammar, max_tokens=8, temperature=1.0, seed=seed)
        assert out.text in {"colour: red", "colour: green", "colour: blue"}


@pytest.mark.slow
def test_plain_completion_and_context_overflow(embedded_llm):
    out = embedded_llm.complete("One, two, three,", max_tokens=4)
    assert out.text.strip()
    with pytest.raises(MagsError, match="context window"):
        embedded_llm.complete("word " * 2000, max_tokens=8)


def test_bad_grammar_is_a_clear_error(embedded_llm):
    with pytest.raises(MagsError, match="GBNF"):
        embedded_llm.chat(MSGS, grammar="root ::= (((", max_tokens=4)


class _FakeLLM:
    name = "fake"

    def __init__(self):
        self.calls = 0

    def chat(self, messages, **kw):
        self.calls += 1
        return Completion(text=f"reply {self.calls}", usage={"completion_tokens": 2}, seconds=0.5)

    complete = chat


def test_cache_answers_repeats_and_keys_on_settings(tmp_path):
    llm = CachedLLM(_FakeLLM(), GenerationCache(tmp_path / "c.sqlite"))
    a = llm.chat(MSGS, max_tokens=8, temperature=0.0, seed=0)
    b = llm.chat(MSGS, max_tokens=8, temperature=0.0, seed=0)
    c = llm.chat(MSGS, max_tokens=8, temperature=0.0, seed=1)
    assert (a.cached, b.cached, c.cached) == (False, True, False)
    assert a.text == b.text == "reply 1" and c.text == "reply 2"
    assert llm.inner.calls == 2
    # persists across processes/objects
    again = CachedLLM(_FakeLLM(), GenerationCache(tmp_path / "c.sqlite"))
    assert again.chat(MSGS, max_tokens=8, temperature=0.0, seed=0).text == "reply 1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_names_cause_and_fix():
    llm = load_llm(backend="openai", model="m", base_url=f"http://127.0.0.1:{_free_port()}/v1",
                   cache=False, timeout_s=5)
    with pytest.raises(BackendUnavailableError) as err:
        llm.chat(MSGS)
    assert "cannot reach" in err.value.cause and "embedded" in err.value.fix


def test_missing_api_key_for_remote_endpoint(monkeypatch):
    monkeypatch.delenv("MAGS_TEST_KEY", raising=False)
    with pytest.raises(BackendUnavailableError) as err:
        load_llm(backend="openai", model="gpt-x", base_url="https://api.example.invalid/v1",
                 api_key_env="MAGS_TEST_KEY", cache=False)
    assert "MAGS_TEST_KEY" in err.value.cause and "export MAGS_TEST_KEY" in err.value.fix


@pytest.fixture
def fake_server():
    """An OpenAI-compatible server on loopback that echoes what it received."""
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
            if body.get("model") == "broken":
                self.send_response(500)
                self.end_headers()
                self.wfile.write(b"model crashed")
                return
            if body.get("stream"):  # server-sent events, one piece per word, then [DONE]
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for word in ["hello ", "from ", "fake"]:
                    chunk = {"choices": [{"delta": {"content": word}}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                return
            if self.path.endswith("/chat/completions"):
                choice = {"message": {"content": "hello from fake"}, "finish_reason": "stop"}
            else:
                choice = {"text": " fake completion", "finish_reason": "length"}
            payload = {"choices": [choice], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1", seen
    server.shutdown()


def test_openai_backend_round_trip_with_grammar(fake_server, monkeypatch):
    url, seen = fake_server
    monkeypatch.setenv("MAGS_TEST_KEY", "sk-test")
    llm = load_llm(backend="openai", model="served", base_url=url, api_key_env="MAGS_TEST_KEY",
                   grammar_field="guided_grammar", cache=False)
    out = llm.chat(MSGS, grammar='root ::= "x"', max_tokens=5)
    assert out.text == "hello from fake" and out.usage["completion_tokens"] == 2
    assert seen[-1]["body"]["guided_grammar"] == 'root ::= "x"'
    assert seen[-1]["auth"] == "Bearer sk-test"
    assert llm.complete("Once", max_tokens=2).finish_reason == "length"


def test_openai_backend_server_error_is_clear(fake_server):
    url, _ = fake_server
    llm = load_llm(backend="openai", model="broken", base_url=url, cache=False)
    with pytest.raises(BackendUnavailableError, match="HTTP 500"):
        llm.chat(MSGS)


def test_replies_stream_from_a_server_and_from_llama_cpp(fake_server, embedded_llm):
    from mags_lib.llm.stream import stream_chat

    url, seen = fake_server
    served = load_llm(backend="openai", model="served", base_url=url)  # cached: streams anyway
    assert list(stream_chat(served, MSGS, max_tokens=5)) == ["hello ", "from ", "fake"]
    assert seen[-1]["body"]["stream"] is True
    pieces = list(stream_chat(embedded_llm, MSGS, max_tokens=12, temperature=0.0, seed=0))
    whole = embedded_llm.chat(MSGS, max_tokens=12, temperature=0.0, seed=0).text
    assert len(pieces) > 1 and "".join(pieces) == whole


def test_a_backend_that_cannot_stream_answers_in_one_piece():
    from mags_lib.llm import Completion
    from mags_lib.llm.stream import stream_chat

    class Whole:
        name = "whole"

        def chat(self, messages, **kw):
            return Completion("all at once")

    assert list(stream_chat(Whole(), MSGS)) == ["all at once"]


def test_chat_prompt_is_the_text_chat_generates_after(embedded_llm):
    """`chat_prompt` renders what `chat` evaluates: the greedy reply's first token is the one
    `score` ranks first among the reply's possible beginnings after that text."""
    reply = embedded_llm.chat(MSGS, max_tokens=6, temperature=0.0, seed=0).text
    text = embedded_llm.chat_prompt(MSGS)
    assert text.rstrip().endswith("assistant") and MSGS[-1]["content"] in text
    first = embedded_llm.llama.tokenize(reply.encode(), add_bos=False, special=True)[0]
    word = embedded_llm.llama.detokenize([first]).decode()
    others = [w for w in (" Paris", "I", "The", "Hello", "1") if w != word]
    scores = embedded_llm.score(text, [word, *others])
    assert scores[0] == max(scores), (word, scores)
