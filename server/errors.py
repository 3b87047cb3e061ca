"""One error hierarchy for Contenox.

Every error a user can hit is a ``ContenoxError`` subclass named by what the user did or hit.
Third-party errors (OpenVINO, pygit2, tree-sitter, network) are translated at the boundary that
calls them, with ``raise ... from exc``. Protocol adapters turn these into JSON-RPC errors with
the stable ``code`` and the ``kind`` name; the CLI prints ``message`` on one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar

__all__ = [
    "Cancelled",
    "ChecksumMismatch",
    "ConfigError",
    "ContenoxError",
    "EngineBusy",
    "EngineCrashed",
    "EngineError",
    "EvalSetupError",
    "IncompatibleSnapshot",
    "InvalidRequest",
    "ModelNotFound",
    "ModelSourceUnavailable",
    "NodeUnavailable",
    "OverBatch",
    "OverContext",
    "PathOutsideWorkspace",
    "PeerNotAllowed",
    "ProfileError",
    "ProfileMismatch",
    "RepositoryError",
    "ServingError",
    "StaleEdit",
    "TokenizerMismatch",
    "VerifyError",
    "WorkspaceError",
]


class ContenoxError(Exception):
    """Base of every error Contenox reports to a user or a client.

    ``code`` is a stable JSON-RPC error code (server-error range -32000..-32099 and the
    application range below -32800); ``kind`` is a stable machine-readable name.
    """

    code: ClassVar[int] = -32000
    kind: ClassVar[str] = "contenox_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """The structured form sent to clients and written by ``--json``."""
        return {"code": self.code, "kind": self.kind, "message": self.message, "details": self.details}

    @staticmethod
    def from_wire(data: Mapping[str, Any]) -> ContenoxError | None:
        """The error a :meth:`to_dict` form describes (from the engine process, or a node's JSON-RPC error data),
        as its own class found by ``kind``; None when the kind is not one of this module's (the caller keeps
        the wire's code and kind: a newer node's error, a server's)."""
        cls = _by_kind().get(str(data.get("kind", "")))
        if cls is None:
            return None
        raw = data.get("details")
        return cls(str(data.get("message", "")) or cls.__name__, **(raw if isinstance(raw, dict) else {}))


class ConfigError(ContenoxError):
    """A config value is invalid (the key is named in the message)."""

    code = -32001
    kind = "config_error"


class ModelNotFound(ContenoxError):
    """The model is neither installed nor in the catalog."""

    code = -32002
    kind = "model_not_found"


class ModelSourceUnavailable(ContenoxError):
    """Every source of a model failed; the message names each one tried."""

    code = -32003
    kind = "model_source_unavailable"


class ChecksumMismatch(ContenoxError):
    """Bytes do not match their pinned sha256: a download, or installed weights changed since (expected and actual
    are named)."""

    code = -32004
    kind = "checksum_mismatch"


class ProfileError(ContenoxError):
    """A model profile is malformed or has unknown fields (the field is named)."""

    code = -32005
    kind = "profile_error"


class ProfileMismatch(ContenoxError):
    """The model on disk does not match its profile (digest, format, device...)."""

    code = -32006
    kind = "profile_mismatch"


class OverContext(ContenoxError):
    """The prompt does not fit the profile's tested context; says by how much."""

    code = -32007
    kind = "over_context"


class OverBatch(ContenoxError):
    """More requests than the engine's batch allows are queued."""

    code = -32008
    kind = "over_batch"


class Cancelled(ContenoxError):
    """A turn was cancelled (during prefill or decode)."""

    code = -32800  # LSP's RequestCancelled
    kind = "cancelled"


class EngineBusy(ContenoxError):
    """The engine cannot take the request now."""

    code = -32009
    kind = "engine_busy"


class EngineError(ContenoxError):
    """The inference backend failed in a way not covered by a more specific error."""

    code = -32010
    kind = "engine_error"


class EngineCrashed(EngineError):
    """The engine process died or stopped answering; the turns it was running end with this, the engine
    restarts on the next turn."""

    code = -32019
    kind = "engine_crashed"


class ServingError(EngineError):
    """A serving engine (``[engine] backend = "openai"``) failed a request: unreachable, timed out, or answered an
    error status; the server and the status are named (``details``: server, status)."""

    code = -32026
    kind = "serving_error"


class TokenizerMismatch(ProfileMismatch):
    """The serving engine tokenizes differently from the local model the node plans with (a probe counted both
    ways); ``[model] default`` must name the catalog model the server serves."""

    code = -32027
    kind = "tokenizer_mismatch"


class IncompatibleSnapshot(ContenoxError):
    """A KV snapshot is corrupt or was made for another model, tokenizer or profile."""

    code = -32011
    kind = "incompatible_snapshot"


class WorkspaceError(ContenoxError):
    """A workspace cannot be opened or indexed."""

    code = -32012
    kind = "workspace_error"


class PathOutsideWorkspace(WorkspaceError):
    """A path resolves outside the workspace root."""

    code = -32013
    kind = "path_outside_workspace"


class RepositoryError(WorkspaceError):
    """A git operation failed (translated from pygit2)."""

    code = -32014
    kind = "repository_error"


class NodeUnavailable(ContenoxError):
    """The node daemon could not be reached or started."""

    code = -32016
    kind = "node_unavailable"


class PeerNotAllowed(ContenoxError):
    """A socket peer of another uid tried to connect."""

    code = -32017
    kind = "peer_not_allowed"


class EvalSetupError(ContenoxError):
    """An eval task file is invalid or an eval repository cannot be obtained (file, task or tool is named)."""

    code = -32018
    kind = "eval_setup_error"


class VerifyError(ContenoxError):
    """A change could not be verified: the scratch copy of the workspace could not be built or written."""

    code = -32025
    kind = "verify_error"


class StaleEdit(ContenoxError):
    """A proposed edit was not applied: its file no longer holds the text the edit was made from."""

    code = -32028
    kind = "stale_edit"


class InvalidRequest(ContenoxError):
    """A client request is malformed or has invalid parameters."""

    code = -32602
    kind = "invalid_request"


@cache
def _by_kind() -> dict[str, type[ContenoxError]]:
    """This module's errors by ``kind`` (unique: a test holds them stable)."""
    found = (globals()[name] for name in __all__)
    return {cls.kind: cls for cls in found if isinstance(cls, type) and issubclass(cls, ContenoxError)}
