"""A local stand-in for the Hugging Face Hub, enough for ``huggingface_hub.snapshot_download``.

Serves repositories the tests build themselves on 127.0.0.1 (a free port), implementing the
endpoints huggingface_hub 2.x calls for a download into ``local_dir``:

- ``GET /api/models/<repo>/revision/<rev>``  model info; ``sha`` resolves the revision to a commit
- ``GET /api/models/<repo>/tree/<commit>``   the file listing (recursive; one page)
- ``HEAD|GET /<repo>/resolve/<rev>/<path>`` ``ETag``, ``X-Repo-Commit``, ``Content-Length``; ``Range`` on GET

No ``X-Xet-Hash`` header and no ``xetHash`` in the listing, so the client never tries xet.
``stall`` names a file whose GET sends ``stall_after`` bytes and then hangs until shutdown, to
interrupt a pull mid-file.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import unquote, urlsplit

__all__ = ["HubStandin"]

_API = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/(?P<what>revision|tree)/(?P<rev>[^/]+)(?:/.*)?$")
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")


def _git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class HubStandin:
    """``with HubStandin({"org/repo": {"file": b"..."}}) as hub: hub.endpoint``."""

    def __init__(self, repos: Mapping[str, Mapping[str, bytes]], *, stall: str | None = None,
                 stall_after: int = 0) -> None:
        self.repos = {name: dict(files) for name, files in repos.items()}
        self.commits = {name: hashlib.sha1(name.encode()).hexdigest() for name in self.repos}
        self.stall = stall
        self.stall_after = stall_after
        self.requests: list[str] = []
        self.stalled = threading.Event()
        """Set once a GET of the ``stall`` file has sent its bytes and hangs."""
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> HubStandin:
        self._thread.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    # -- request handling ---------------------------------------------------------------------
    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                hub._serve(self, head=False)

            def do_HEAD(self) -> None:
                hub._serve(self, head=True)

        return Handler

    def _commit(self, repo: str, rev: str) -> str | None:
        if repo not in self.repos:
            return None
        commit = self.commits[repo]
        return commit if rev in ("main", commit) else None

    def _serve(self, req: BaseHTTPRequestHandler, *, head: bool) -> None:
        path = unquote(urlsplit(req.path).path)
        self.requests.append(f"{req.command} {path}")
        if match := _API.match(path):
            repo, rev = match["repo"], match["rev"]
            commit = self._commit(repo, rev)
            if commit is None:
                return self._error(req, repo, rev)
            files = self.repos[repo]
            if match["what"] == "revision":
                body = {"id": repo, "modelId": repo, "sha": commit, "private": False,
                        "siblings": [{"rfilename": name} for name in sorted(files)]}
                return self._json(req, body)
            tree = [{"type": "file", "path": name, "size": len(data), "oid": _git_blob_id(data)}
                    for name, data in sorted(files.items())]
            return self._json(req, tree)
        if match := _RESOLVE.match(path):
            repo, rev, name = match["repo"], match["rev"], match["path"]
            commit = self._commit(repo, rev)
            if commit is None or name not in self.repos[repo]:
                return self._error(req, repo, rev, entry=True)
            return self._file(req, commit, name, self.repos[repo][name], head=head)
        self._send(req, HTTPStatus.NOT_FOUND, b"not found", {"Content-Type": "text/plain"})

    def _file(self, req: BaseHTTPRequestHandler, commit: str, name: str, data: bytes, *, head: bool) -> None:
        headers = {"ETag": f'"{_git_blob_id(data)}"', "X-Repo-Commit": commit, "Accept-Ranges": "bytes",
                   "Content-Type": "application/octet-stream"}
        start = 0
        status = HTTPStatus.OK
        if not head and (rng := re.fullmatch(r"bytes=(\d+)-", req.headers.get("Range", ""))):
            start = int(rng.group(1))
            status = HTTPStatus.PARTIAL_CONTENT
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        body = data[start:]
        headers["Content-Length"] = str(len(body))
        req.send_response(status)
        for key, value in headers.items():
            req.send_header(key, value)
        req.end_headers()
        if head:
            return
        if name == self.stall:
            req.wfile.write(body[: self.stall_after])
            req.wfile.flush()
            self.stalled.set()
            self._release.wait()
            return
        req.wfile.write(body)

    def _json(self, req: BaseHTTPRequestHandler, body: object) -> None:
        self._send(req, HTTPStatus.OK, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def _error(self, req: BaseHTTPRequestHandler, repo: str, rev: str, *, entry: bool = False) -> None:
        if repo not in self.repos:
            code, message = "RepoNotFound", f"Repository {repo} not found"
        elif entry:
            code, message = "EntryNotFound", "Entry not found"
        else:
            code, message = "RevisionNotFound", f"Revision {rev} not found"
        self._send(req, HTTPStatus.NOT_FOUND, json.dumps({"error": message}).encode(),
                   {"Content-Type": "application/json", "X-Error-Code": code, "X-Error-Message": message})

    @staticmethod
    def _send(req: BaseHTTPRequestHandler, status: HTTPStatus, body: bytes, headers: Mapping[str, str]) -> None:
        req.send_response(status)
        for key, value in headers.items():
            req.send_header(key, value)
        req.send_header("Content-Length", str(len(body)))
        req.end_headers()
        if req.command != "HEAD":
            req.wfile.write(body)
