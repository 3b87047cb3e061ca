"""What goes to an OpenAI-compatible serving engine and what comes back, as data.

The request body of ``POST {url}/completions`` for a :class:`GenerateRequest`, the routing hints beside it,
the streamed chunks (``text_completion`` objects; the usage chunk ``stream_options.include_usage`` adds; the
``timings`` llama.cpp's server adds to its last chunk) decoded into typed structs, the server's cache evidence
read from them, and a refused or failed response turned into a :class:`ServingError` naming the server and the
status. No I/O here: :mod:`contenox.runtime_ov.served` sends and streams.
"""

from __future__ import annotations

import hashlib
import logging
import os
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import msgspec

from contenox.config import EngineConfig
from contenox.errors import ConfigError, ServingError
from contenox.runtime_ov.requests import GenerateRequest

__all__ = ["Chunk", "Secret", "ServedOptions", "Usage", "backoff_s", "cache_evidence", "completion_body", "error_from_status",
           "routing_headers", "server_label", "tokenize_url"]

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 503})
_MAX_BACKOFF_S = 30.0


class Secret(str):
    """A string that never shows itself in a repr (an options struct logged by mistake shows ``'***'``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "'***'" if self else "''"


class ServedOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How to reach the serving engine and what to send it (``[engine]`` with ``backend = "openai"``)."""

    url: str
    model: str
    api_key: Secret = Secret("")
    """Never logged nor put in an error."""
    token_prompt: bool = False
    timeout_s: float = 120.0
    connect_timeout_s: float = 10.0
    retries: int = 3
    backoff_s: float = 0.5
    """The first retry's wait; each next one doubles it (a Retry-After the server sends wins, up to 30 s)."""
    cache_key_field: str = "prompt_cache_key"
    affinity_header: str = "x-session-id"
    prefix_hash_header: str = "x-contenox-prefix-hash"
    grammar_field: str = ""
    max_new_tokens: int = 512
    """Default for requests that ask for 0 new tokens."""
    chunk_tokens: int = 256
    cache_size_gb: float = 2.0
    """Sizes the block model that predicts the server's prefix cache (what it holds is the server's affair)."""
    max_queued: int = 64

    def __post_init__(self) -> None:
        if type(self.api_key) is not Secret:  # a plain str given: keep it out of every repr all the same
            msgspec.structs.force_setattr(self, "api_key", Secret(self.api_key))

    @classmethod
    def from_config(cls, engine: EngineConfig, model: str) -> ServedOptions:
        """From ``[engine]``; ``model``: ``[model] default``, the name sent when ``engine.model`` is empty. The
        API key is read here (``api_key_env``, else ``api_key_file``) and named in no message."""
        if not engine.url.strip():
            raise ConfigError('engine.url is empty: backend = "openai" needs the serving engine\'s OpenAI base URL '
                              "(http://gpu-box:8080/v1)", key="engine.url")
        if urlsplit(engine.url).scheme not in ("http", "https"):
            raise ConfigError(f"engine.url must be an http:// or https:// URL, got {server_label(engine.url)!r}",
                              key="engine.url")
        key = ""
        if engine.api_key_env:
            key = os.environ.get(engine.api_key_env, "").strip()
            if not key:
                log.warning("engine.api_key_env names %s, which is not set: no API key sent", engine.api_key_env)
        if not key and engine.api_key_file:
            try:
                key = Path(engine.api_key_file).expanduser().read_text(encoding="utf-8").strip().splitlines()[0]
            except (OSError, UnicodeDecodeError, IndexError) as exc:
                raise ConfigError(f"engine.api_key_file {engine.api_key_file} cannot be read: "
                                  f"{type(exc).__name__}", key="engine.api_key_file") from None
        return cls(url=engine.url.strip(), model=engine.model or model, api_key=Secret(key), token_prompt=engine.token_prompt,
                   timeout_s=engine.timeout_s, retries=engine.retries, cache_key_field=engine.cache_key_field,
                   affinity_header=engine.affinity_header, prefix_hash_header=engine.prefix_hash_header,
                   grammar_field=engine.grammar_field, max_new_tokens=engine.max_new_tokens,
                   chunk_tokens=engine.chunk_tokens, cache_size_gb=engine.cache_size_gb)


# -- the streamed chunks (only the fields read; servers add more) ---------------------------------------------
class PromptDetails(msgspec.Struct, frozen=True, kw_only=True):
    cached_tokens: int | None = None


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: PromptDetails | None = None


class Timings(msgspec.Struct, frozen=True, kw_only=True):
    """llama.cpp's server: ``cache_n`` prompt tokens reused from the slot's cache, ``prompt_n`` computed."""

    cache_n: int | None = None
    prompt_n: int | None = None


class Choice(msgspec.Struct, frozen=True, kw_only=True):
    text: str = ""
    index: int = 0
    finish_reason: str | None = None
    token_ids: list[int] | None = None
    """vLLM with ``return_token_ids``: the ids of this delta."""


class Chunk(msgspec.Struct, frozen=True, kw_only=True):
    choices: list[Choice] = msgspec.field(default_factory=list)
    usage: Usage | None = None
    timings: Timings | None = None
    tokens_cached: int | None = None
    """llama.cpp's native completion: tokens of the prompt reused from the previous one."""
    error: dict[str, Any] | str | None = None
    """A server that fails mid-stream (vLLM) sends an error object instead of choices."""


_DECODER = msgspec.json.Decoder(Chunk)


def decode_chunk(data: str) -> Chunk:
    return _DECODER.decode(data)


def cache_evidence(chunk: Chunk, prompt_tokens: int) -> int | None:
    """Prompt tokens the server says it served from its prefix cache, if this chunk says so."""
    usage = chunk.usage
    if usage is not None and usage.prompt_tokens_details is not None \
            and usage.prompt_tokens_details.cached_tokens is not None:
        return max(0, min(prompt_tokens, usage.prompt_tokens_details.cached_tokens))
    if chunk.timings is not None and chunk.timings.cache_n is not None:
        return max(0, min(prompt_tokens, chunk.timings.cache_n))
    if chunk.tokens_cached is not None:
        return max(0, min(prompt_tokens, chunk.tokens_cached))
    return None


# -- what is sent ----------------------------------------------------------------------------------------------
def server_label(url: str) -> str:
    """The server as errors and logs name it: scheme, host, port and path, never credentials or a query."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def tokenize_url(url: str) -> str:
    """``/tokenize`` sits at the server's root (llama.cpp, vLLM), beside the OpenAI ``/v1`` base."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    head, _, last = path.rpartition("/")
    if last[:1] == "v" and last[1:].isdigit():
        path = head
    return urlunsplit((parts.scheme, parts.netloc, path + "/tokenize", "", ""))


def cache_key(session_id: str) -> str:
    """A stable per-thread key that names nothing of the machine (the session id holds a path's hash)."""
    return "contenox-" + hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:24]


def prefix_hash(ids: Sequence[int]) -> str:
    """The stable prefix's hash: equal for every developer whose planner made the same prefix."""
    return hashlib.sha256(array("q", ids).tobytes()).hexdigest()[:32]


def routing_headers(options: ServedOptions, request: GenerateRequest) -> dict[str, str]:
    headers: dict[str, str] = {}
    if options.affinity_header and request.session_id:
        headers[options.affinity_header] = cache_key(request.session_id)
    if options.prefix_hash_header and request.stable_tokens > 0:
        headers[options.prefix_hash_header] = prefix_hash(request.token_ids[:request.stable_tokens])
    return headers


def completion_body(options: ServedOptions, request: GenerateRequest, prompt: str | list[int],
                    stops: Sequence[str]) -> dict[str, Any]:
    """The streamed ``/completions`` request: the prompt, its limits and sampling, the usage chunk asked for."""
    body: dict[str, Any] = {
        "model": options.model,
        "prompt": prompt,
        "max_tokens": request.max_new_tokens or options.max_new_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.sampling is None:
        body["temperature"] = 0.0
    else:
        body.update(temperature=request.sampling.temperature, top_p=request.sampling.top_p,
                    seed=request.sampling.seed)
    if stops:
        body["stop"] = list(stops)
    if isinstance(prompt, list):
        body["return_token_ids"] = True  # vLLM: the ids of each delta (llama.cpp ignores it)
    if options.cache_key_field and request.session_id:
        body[options.cache_key_field] = cache_key(request.session_id)
    if request.grammar and options.grammar_field:
        body[options.grammar_field] = request.grammar
    return body


# -- what goes wrong -------------------------------------------------------------------------------------------
def backoff_s(options: ServedOptions, attempt: int, retry_after: str | None) -> float:
    """How long to wait before retry ``attempt`` (0-based): the server's Retry-After seconds, else doubling."""
    if retry_after:
        try:
            return max(0.0, min(_MAX_BACKOFF_S, float(retry_after)))
        except ValueError:
            pass  # an HTTP date: fall back to our own backoff
    return float(min(_MAX_BACKOFF_S, options.backoff_s * (2 ** attempt)))


def _excerpt(body: bytes) -> str:
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        text = body.decode("utf-8", "replace").strip()
    else:
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict):
            text = str(error.get("message") or error)
        elif error is not None:
            text = str(error)
        else:
            text = str(data.get("message") or data.get("detail") or data) if isinstance(data, dict) else str(data)
    return text[:300]


def error_from_status(server: str, status: int, reason: str, body: bytes, *, attempts: int = 1) -> ServingError:
    """A refused request as the ServingError the user reads: the server, the status and what it said."""
    what = _excerpt(body)
    tried = f" (after {attempts} attempts)" if attempts > 1 else ""
    return ServingError(f"serving engine {server} answered {status} {reason}{tried}" + (f": {what}" if what else ""),
                        server=server, status=status)


def error_in_stream(server: str, error: dict[str, Any] | str) -> ServingError:
    message = str(error.get("message") or error) if isinstance(error, dict) else str(error)
    status = error.get("code") if isinstance(error, dict) else None
    return ServingError(f"serving engine {server} failed the request mid-stream: {message[:300]}", server=server,
                        status=status if isinstance(status, int) else None)
