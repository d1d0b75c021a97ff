"""OpenAI-compatible HTTP backend: a vLLM server, a llama.cpp server, or a cloud API.

    llm = load_llm(LLMConfig(backend="openai", model="served-name",
                             base_url="http://127.0.0.1:8000/v1"))

Built on httpx (imported when the backend is built, so `import mags_lib` stays instant) with
tenacity for retries. The API key comes from the environment variable named in
`LLMConfig.api_key_env`; it is required only for non-local endpoints. A GBNF grammar is sent in
the field `LLMConfig.grammar_field` ('grammar' for llama.cpp's server, 'guided_grammar' for vLLM).

`LLMConfig.timeout_s` bounds a whole request: connecting, every retry and its wait, and reading
the complete reply (a streamed one too). httpx's own timeouts apply to each network operation,
so a server trickling a byte at a time would beat them; a watchdog shuts the socket at the
deadline instead. An overloaded server (HTTP 429, 502, 503, 504) and a connection closed before
a complete answer are retried up to `LLMConfig.max_retries` times, with exponential backoff from
`LLMConfig.retry_backoff_s` or the wait the server's Retry-After asks for, all inside the
deadline. A stream is retried only until its reply starts. Every failure reaches the caller as
a `BackendUnavailableError` whose fix names its cause: overload, timeout, model name, API key,
unreachable server, or a body that is not an OpenAI answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import urlparse

from mags_lib.errors import BackendUnavailableError, ConfigError
from mags_lib.llm.base import Completion, LLMConfig, Message

_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
_OVERLOAD_STATUS = {429, 502, 503, 504}  # worth retrying: the server may answer in a moment
_ERROR_DETAIL_BYTES = 2000  # how much of an error body is kept for the message
_MODEL_MISSING = re.compile(r"model_not_found|model\b.{0,80}\b(not found|does not exist)", re.I)
T = TypeVar("T")


class _Deadline:
    """The end of a whole request, and a watchdog that shuts a reply's socket when it comes, so
    a read blocked on a hung or trickling server returns at the deadline, not later."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.start = time.monotonic()
        self.end = self.start + seconds
        self.expired = False  # set by the watchdog: a read that ended early ended for this

    def left(self) -> float:
        return self.end - time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def watch(self, response: Any) -> Callable[[], None]:
        """Arm the watchdog on the response's socket; returns the function that disarms it."""
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is None:  # not HTTP/1.1 over a socket: httpx's per-operation timeouts remain
            return lambda: None
        timer = threading.Timer(max(self.left(), 0.0), self._cut, args=(sock,))
        timer.daemon = True
        timer.start()
        return timer.cancel

    def _cut(self, sock: socket.socket) -> None:
        self.expired = True
        # the plain socket's shutdown (under TLS too) wakes a blocked recv at once; OSError:
        # the request ended meanwhile and closed it
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Transient(Exception):
    """A failure worth retrying: an overloaded server, or a connection closed before the answer."""

    def __init__(self, what: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(what)
        self.what = what
        self.status = status
        self.retry_after = retry_after


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (a number or an HTTP date); None if absent or odd."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError, OverflowError):
        return None


def _check_limits(config: LLMConfig) -> None:
    """A timeout, retry count or backoff that cannot work is a ConfigError, not a hang."""
    for name, ok in (("timeout_s", config.timeout_s > 0), ("max_retries", config.max_retries >= 0),
                     ("retry_backoff_s", config.retry_backoff_s >= 0)):
        if not ok:
            raise ConfigError(f"LLMConfig.{name}={getattr(config, name)!r} is out of range",
                              "timeout_s > 0, max_retries >= 0, retry_backoff_s >= 0")


class OpenAICompatibleLLM:
    """Chat and completions over an OpenAI-compatible REST API."""

    def __init__(self, config: LLMConfig):
        try:
            import httpx
            import tenacity  # noqa: F401  (used per request; missing should fail here)
        except ImportError as exc:
            raise BackendUnavailableError(
                f"the OpenAI-compatible backend needs httpx and tenacity ({exc})",
                "pip install -e . (or pip install httpx tenacity)") from exc

        _check_limits(config)
        self.config = config
        self.base_url = config.base_url.rstrip("/")
        parsed = urlparse(self.base_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise BackendUnavailableError(
                f"LLMConfig.base_url {config.base_url!r} is not an http(s) URL",
                "give the server's /v1 endpoint, e.g. base_url='http://127.0.0.1:8000/v1'")
        self.api_key = os.environ.get(config.api_key_env, "")
        if not self.api_key and parsed.hostname not in _LOCAL_HOSTS:
            raise BackendUnavailableError(
                f"no API key for {self.base_url}: the environment variable "
                f"{config.api_key_env} is not set",
                f"export {config.api_key_env}=... (never put keys in configs or notebooks), or "
                "use a local server / model='embedded'",
            )
        self.name = f"openai:{self.base_url}:{config.model}"
        auth = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._client = httpx.Client(headers=auth)

    # -- the public interface ---------------------------------------------------------------

    def chat(self, messages: list[Message], *, grammar: str | None = None, max_tokens: int = 128,
             temperature: float = 0.0, seed: int = 0, stop: list[str] | None = None) -> Completion:
        body = self._body(grammar, stop, model=self.config.model, messages=messages,
                          max_tokens=max_tokens, temperature=temperature, seed=seed)
        out, choice, seconds = self._post("/chat/completions", body)
        message = choice.get("message")
        text = message.get("content") if isinstance(message, dict) else None
        return Completion(text=text if isinstance(text, str) else "", usage=_usage(out),
                          seconds=seconds, finish_reason=choice.get("finish_reason") or "stop")

    def complete(self, prompt: str, *, grammar: str | None = None, max_tokens: int = 128,
                 temperature: float = 0.0, seed: int = 0, stop: list[str] | None = None) -> Completion:
        body = self._body(grammar, stop, model=self.config.model, prompt=prompt,
                          max_tokens=max_tokens, temperature=temperature, seed=seed)
        out, choice, seconds = self._post("/completions", body)
        text = choice.get("text")
        return Completion(text=text if isinstance(text, str) else "", usage=_usage(out),
                          seconds=seconds, finish_reason=choice.get("finish_reason") or "stop")

    def stream_chat(self, messages: list[Message], *, grammar: str | None = None,
                    max_tokens: int = 128, temperature: float = 0.0, seed: int = 0,
                    stop: list[str] | None = None) -> Iterator[str]:
        """`chat` with `stream: true`: yields the reply's pieces from the server-sent events.
        A stream that breaks after its first piece raises BackendUnavailableError there."""
        import httpx

        route = "/chat/completions"
        body = self._body(grammar, stop, model=self.config.model, messages=messages,
                          max_tokens=max_tokens, temperature=temperature, seed=seed, stream=True)
        deadline = _Deadline(self.config.timeout_s)
        response = self._with_retries(lambda: self._send(route, body, deadline), route, deadline)
        disarm = deadline.watch(response)
        try:
            yield from self._pieces(response, route, deadline)
        except httpx.HTTPError as exc:
            error = self._network_error(exc, route, deadline)
            if isinstance(error, _Transient):
                error = BackendUnavailableError(
                    f"the reply stream from {self.base_url}{route} broke in the middle "
                    f"({error.what})",
                    "the server may have crashed or restarted: check its logs, then ask again "
                    "(or chat without streaming, which is retried)")
            raise error from exc
        finally:
            disarm()
            response.close()

    # -- one request: send, read, retry -------------------------------------------------------

    def _body(self, grammar: str | None, stop: list[str] | None, **fields: Any) -> dict:
        if stop:
            fields["stop"] = stop
        if grammar:
            fields[self.config.grammar_field] = grammar
        return fields

    def _post(self, route: str, body: dict) -> tuple[dict, dict, float]:
        """POST body and return the answer, its first choice and the seconds it took."""
        deadline = _Deadline(self.config.timeout_s)

        def attempt() -> bytes:
            return self._read(self._send(route, body, deadline), route, deadline)

        raw = self._with_retries(attempt, route, deadline)
        out, choice = self._parse(raw, route)
        return out, choice, deadline.elapsed()

    def _with_retries(self, attempt: Callable[[], T], route: str, deadline: _Deadline) -> T:
        """`attempt()`, tried again after each _Transient failure with exponential backoff (or
        the server's Retry-After), at most max_retries times and never past the deadline."""
        import tenacity

        backoff = self.config.retry_backoff_s

        def wait(state: tenacity.RetryCallState) -> float:
            asked = state.outcome.exception().retry_after if state.outcome else None
            return asked if asked is not None else backoff * 2 ** (state.attempt_number - 1)

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(_Transient),
            stop=(tenacity.stop_after_attempt(max(self.config.max_retries, 0) + 1)
                  | tenacity.stop_before_delay(max(deadline.left(), 0.0))),
            wait=wait, reraise=True)
        try:
            return retrying(attempt)
        except _Transient as exc:
            raise self._gave_up(exc, route, retrying.statistics.get("attempt_number", 1),
                                deadline) from exc

    def _send(self, route: str, body: dict, deadline: _Deadline):
        """The open (streamed) response of a POST with a 2xx status; anything else is raised as
        a _Transient or a BackendUnavailableError."""
        import httpx

        if deadline.left() <= 0:
            raise self._timed_out(route, deadline)
        try:
            response = self._client.send(
                self._client.build_request("POST", self.base_url + route, json=body,
                                           timeout=httpx.Timeout(deadline.left())),
                stream=True)
        except httpx.HTTPError as exc:
            raise self._network_error(exc, route, deadline) from exc
        if response.status_code < 300:
            return response
        try:
            detail = self._read(response, route, deadline, limit=_ERROR_DETAIL_BYTES)
        except BackendUnavailableError:
            detail = b""  # the status says enough
        raise self._status_error(response, detail.decode(errors="replace").strip(), route)

    def _read(self, response, route: str, deadline: _Deadline, limit: int | None = None) -> bytes:
        """The response's body (its first `limit` bytes), read before the deadline, then closed."""
        import httpx

        disarm = deadline.watch(response)
        chunks, size = [], 0
        try:
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if limit is not None and size >= limit:
                    break
        except httpx.HTTPError as exc:
            raise self._network_error(exc, route, deadline) from exc
        finally:
            disarm()
            response.close()
        if deadline.expired and limit is None:  # a close-delimited body cut by the watchdog
            raise self._timed_out(route, deadline)
        return b"".join(chunks)[:limit]

    def _pieces(self, response, route: str, deadline: _Deadline) -> Iterator[str]:
        """The text pieces of a server-sent event stream, until `data: [DONE]`."""
        finished = False  # a choice with a finish_reason: the reply is complete
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[len("data:"):].strip()
            if data == "[DONE]":
                return
            try:
                event = json.loads(data)
            except json.JSONDecodeError:
                event = None
            if not isinstance(event, dict):
                raise self._bad_body(route, f"streamed an event that is not a JSON object: "
                                     f"{data[:120]!r}", streaming=True)
            if "error" in event and not event.get("choices"):
                raise BackendUnavailableError(
                    f"{self.base_url}{route} reported an error mid-stream: "
                    f"{str(event['error'])[:300]}", "check the server logs, then ask again")
            for choice in event.get("choices") or []:
                if not isinstance(choice, dict):
                    raise self._bad_body(route, f"streamed a choice that is not an object: "
                                         f"{data[:120]!r}", streaming=True)
                finished = finished or bool(choice.get("finish_reason"))
                delta = choice.get("delta")
                piece = delta.get("content") if isinstance(delta, dict) else None
                if isinstance(piece, str) and piece:
                    yield piece
        if deadline.expired:
            raise self._timed_out(route, deadline)
        if not finished:
            raise BackendUnavailableError(
                f"the reply stream from {self.base_url}{route} ended before the reply was "
                "complete (no [DONE] and no finish_reason)",
                "the server may have crashed or restarted: check its logs, then ask again")

    def _parse(self, raw: bytes, route: str) -> tuple[dict, dict]:
        """The answer as a JSON object and its first choice, or the reason it is not one."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._bad_body(route, f"answered a body that is not UTF-8 text: "
                                 f"{raw[:60]!r}") from exc
        try:
            out = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self._bad_body(route, f"answered a body that is not JSON: "
                                 f"{text[:120]!r}") from exc
        if not isinstance(out, dict):
            raise self._bad_body(route, f"answered JSON that is not an object but a "
                                 f"{type(out).__name__}: {text[:120]!r}")
        choices = out.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise BackendUnavailableError(
                f"{self.base_url}{route} answered without choices: {text[:200]}",
                "check the server logs; the model may have failed to load")
        return out, choices[0]

    # -- one cause, one fix -------------------------------------------------------------------

    def _status_error(self, response, detail: str, route: str) -> Exception:
        where, status, model = f"{self.base_url}{route}", response.status_code, self.config.model
        cause = f"{where} answered HTTP {status}: {detail[:300]}"
        if status in _OVERLOAD_STATUS:
            return _Transient(f"HTTP {status}: {detail[:200]}", status,
                              _retry_after(response.headers.get("Retry-After")))
        if status < 400:  # httpx does not follow redirects, and a POST should not
            fix = (f"base_url redirects to {response.headers.get('Location')!r}: set "
                   "LLMConfig.base_url to where it points")
        elif status in (401, 403):
            fix = (f"check the API key in ${self.config.api_key_env} and that it may use "
                   f"model {model!r}")
        elif status == 404 or (status == 400 and _MODEL_MISSING.search(detail)):
            fix = (f"check the model name: the server may not serve {model!r} (GET "
                   f"{self.base_url}/models lists what it does), and that base_url ends in /v1")
        elif status < 500:
            fix = (f"the server rejected the request: check that it accepts the grammar field "
                   f"{self.config.grammar_field!r}, max_tokens and stop as sent")
        else:
            fix = "the server failed on this request: check its logs (out of memory? crashed?)"
        return BackendUnavailableError(cause, fix)

    def _network_error(self, exc: Exception, route: str, deadline: _Deadline) -> Exception:
        """A BackendUnavailableError for an httpx failure, or a _Transient for a closed
        connection (a restarting server) that is worth another try."""
        import httpx

        if isinstance(exc, httpx.ConnectTimeout):
            return self._unreachable(f"no connection within timeout_s={self.config.timeout_s:g} s")
        if deadline.expired or isinstance(exc, httpx.TimeoutException):
            return self._timed_out(route, deadline)  # httpx's timeouts are the time left
        if isinstance(exc, httpx.ConnectError):
            return self._unreachable(str(exc) or type(exc).__name__)
        if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
            return _Transient(f"connection closed before a complete answer: {exc}")
        return BackendUnavailableError(f"the request to {self.base_url}{route} failed: "
                                       f"{type(exc).__name__}: {exc}",
                                       "check LLMConfig.base_url and the server")

    def _gave_up(self, exc: _Transient, route: str, attempts: int,
                 deadline: _Deadline) -> BackendUnavailableError:
        tried = (f"retried {attempts - 1} time{'s' * (attempts != 2)} over "
                 f"{deadline.elapsed():.1f} s")
        asked = (f"; it asked to wait {exc.retry_after:g} s more, past timeout_s="
                 f"{self.config.timeout_s:g}" if exc.retry_after and
                 exc.retry_after >= deadline.left() else "")
        if exc.status is None:
            return BackendUnavailableError(
                f"{self.base_url}{route}: {exc.what} ({tried})",
                f"the server keeps closing the connection ({tried}): it may be restarting or "
                "crashing; check its logs, or raise LLMConfig.max_retries")
        return BackendUnavailableError(
            f"{self.base_url}{route} answered {exc.what}{asked}",
            f"the server is overloaded; {tried}; lower the request rate, raise "
            "LLMConfig.max_retries/timeout_s, or wait")

    def _timed_out(self, route: str, deadline: _Deadline) -> BackendUnavailableError:
        return BackendUnavailableError(
            f"no complete answer from {self.base_url}{route} within "
            f"timeout_s={self.config.timeout_s:g} s (waited {deadline.elapsed():.1f} s)",
            "the server is slow, hung or busy: check its logs and load, lower max_tokens, or "
            "raise LLMConfig.timeout_s (it bounds the whole request, retries included)")

    def _unreachable(self, reason: str) -> BackendUnavailableError:
        return BackendUnavailableError(
            f"cannot reach the LLM server at {self.base_url} ({reason})",
            "start the server (e.g. `vllm serve MODEL` or llama.cpp's `llama-server -m "
            "FILE.gguf`), fix LLMConfig.base_url, or use backend='llamacpp' with "
            "model='embedded' to run offline")

    def _bad_body(self, route: str, what: str, streaming: bool = False) -> BackendUnavailableError:
        fix = ("check that base_url points at an OpenAI-compatible /v1 endpoint (vLLM, "
               "llama.cpp's server), not a proxy or web page")
        if streaming:
            fix += ", or chat without streaming"
        return BackendUnavailableError(f"{self.base_url}{route} {what}", fix)


def _usage(out: dict) -> dict:
    usage = out.get("usage")
    return usage if isinstance(usage, dict) else {}
