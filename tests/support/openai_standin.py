"""A local stand-in for an OpenAI-compatible serving engine (vLLM, llama.cpp's server), on 127.0.0.1.

Streams ``POST /v1/completions`` as the servers do: ``data: {text_completion chunk}`` lines, one per piece,
then (``usage`` asked with ``stream_options.include_usage``) the usage chunk with an empty ``choices`` and
``usage.prompt_tokens_details.cached_tokens`` (vLLM, OpenAI), or, in ``llama`` style, a last chunk with
``finish_reason``, ``usage`` and llama.cpp's ``timings.cache_n``; then ``data: [DONE]``. A non-streamed
request gets one ``text_completion`` object with its usage. ``POST /tokenize`` answers ``{"tokens": [...]}``
from the ``tokenize`` function it was given (None: 404, as OVMS and OpenAI do).

Replies are scripted (``Reply``), consumed in order; the default replies with ``pieces``. Every request is
recorded (path, headers, JSON body); ``disconnected`` is set when a client closes a stream it was sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["OpenAIStandin", "Recorded", "Reply"]


@dataclass
class Reply:
    status: int = 200
    pieces: Sequence[str] = ("Hello", " world", ".")
    ids: Sequence[Sequence[int]] | None = None
    """Token ids per piece, sent as vLLM's ``token_ids`` (None: not sent)."""
    finish_reason: str = "stop"
    cached_tokens: int | None = None
    style: str = "openai"
    """"openai": a usage chunk with prompt_tokens_details; "llama": timings.cache_n on the last chunk; "none":
    no cache figure at all."""
    delay_s: float = 0.0
    """Between pieces."""
    error: str = "the server failed"
    retry_after: str | None = None
    error_mid_stream: bool = False
    """Send the pieces, then an error object instead of the end (vLLM's mid-stream failure)."""


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class OpenAIStandin:
    """``with OpenAIStandin(tokenize=tok.encode) as server: server.url`` (the ``/v1`` base)."""

    tokenize: Callable[[str], list[int]] | None = None
    prompt_tokens: Callable[[Any], int] | None = None
    """What the usage reports as prompt_tokens for a request's prompt (default: ``tokenize``'s count, or the
    length of a token-id prompt)."""
    replies: list[Reply] = field(default_factory=list)
    default: Reply = field(default_factory=Reply)
    prefix_cache: bool = False
    """Report a reply without its own ``cached_tokens`` as cached the longest prefix (in ids) this prompt shares
    with any earlier one, as a server whose prefix cache holds everything it computed would."""
    requests: list[Recorded] = field(default_factory=list)
    disconnected: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def completions(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == "/v1/completions" and r.body.get("stream")]

    def __enter__(self) -> OpenAIStandin:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _count(self, prompt: Any) -> int:
        if self.prompt_tokens is not None:
            return self.prompt_tokens(prompt)
        if isinstance(prompt, list):
            return len(prompt)
        return len(self.tokenize(prompt)) if self.tokenize else len(str(prompt).split())

    def _cached(self, prompt: Any) -> int | None:
        if not self.prefix_cache or not isinstance(prompt, list):
            return None
        best = 0
        for earlier in self.completions()[:-1]:
            seen = earlier.body.get("prompt")
            if isinstance(seen, list):
                n = 0
                for a, b in zip(seen, prompt, strict=False):
                    if a != b:
                        break
                    n += 1
                best = max(best, n)
        return best

    def _next(self) -> Reply:
        with self._lock:
            return self.replies.pop(0) if self.replies else self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with standin._lock:
                    standin.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()},
                                                     body))
                if self.path == "/tokenize":
                    if standin.tokenize is None:
                        self._json(404, {"detail": "Not Found"})
                    else:
                        self._json(200, {"tokens": standin.tokenize(body.get("content") or body.get("prompt"))})
                    return
                if self.path != "/v1/completions":
                    self._json(404, {"error": {"message": f"no route {self.path}", "code": 404}})
                    return
                prompt_tokens = standin._count(body.get("prompt"))
                if not body.get("stream"):
                    self._json(200, {"id": "cmpl-probe", "object": "text_completion", "created": 1,
                                     "model": body.get("model"), "choices": [{"index": 0, "text": "x",
                                                                              "logprobs": None,
                                                                              "finish_reason": "length"}],
                                     "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1,
                                               "total_tokens": prompt_tokens + 1}})
                    return
                reply = standin._next()
                if reply.cached_tokens is None:
                    reply = replace(reply, cached_tokens=standin._cached(body.get("prompt")))
                if reply.status != 200:
                    headers = {"Retry-After": reply.retry_after} if reply.retry_after else {}
                    self._json(reply.status, {"error": {"message": reply.error, "type": "server_error",
                                                        "code": reply.status}}, headers)
                    return
                self._stream(body, reply, prompt_tokens)

            def _send(self, data: Any) -> bool:
                text = data if isinstance(data, str) else json.dumps(data)
                try:
                    self.wfile.write(f"data: {text}\n\n".encode())
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    standin.disconnected.set()
                    return False
                return True

            def _stream(self, body: dict[str, Any], reply: Reply, prompt_tokens: int) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                head = {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": body.get("model")}
                for index, piece in enumerate(reply.pieces):
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    choice: dict[str, Any] = {"index": 0, "text": piece, "logprobs": None, "finish_reason": None}
                    if reply.ids is not None:
                        choice["token_ids"] = list(reply.ids[index])
                    if not self._send({**head, "choices": [choice]}):
                        return
                if reply.error_mid_stream:
                    self._send({"error": {"message": reply.error, "type": "server_error", "code": 500}})
                    return
                completion = len(reply.pieces)
                usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                                         "total_tokens": prompt_tokens + completion}
                end = {**head, "choices": [{"index": 0, "text": "", "logprobs": None,
                                            "finish_reason": reply.finish_reason}]}
                if reply.style == "llama":
                    end["usage"] = usage
                    if reply.cached_tokens is not None:
                        end["timings"] = {"cache_n": reply.cached_tokens,
                                          "prompt_n": prompt_tokens - reply.cached_tokens,
                                          "prompt_ms": 1.0, "predicted_n": completion, "predicted_ms": 1.0}
                    self._send(end)
                else:
                    self._send(end)
                    if (body.get("stream_options") or {}).get("include_usage"):
                        if reply.style == "openai" and reply.cached_tokens is not None:
                            usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
                        self._send({**head, "choices": [], "usage": usage})
                self._send("[DONE]")

        return Handler
