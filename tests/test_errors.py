"""The error hierarchy: stable, unique codes and kinds; the structured form clients receive."""

from __future__ import annotations

import re

import pytest

import contenox.errors as errors_module
from contenox.errors import ContenoxError, ModelNotFound, PathOutsideWorkspace, WorkspaceError

# The wire contract: clients (LSP, ACP, the VS Code panel, scripts reading --json) match on these.
# Changing one is a breaking change; adding a class means adding it here.
STABLE = {
    "ContenoxError": (-32000, "contenox_error"),
    "ConfigError": (-32001, "config_error"),
    "ModelNotFound": (-32002, "model_not_found"),
    "ModelSourceUnavailable": (-32003, "model_source_unavailable"),
    "ChecksumMismatch": (-32004, "checksum_mismatch"),
    "ProfileError": (-32005, "profile_error"),
    "ProfileMismatch": (-32006, "profile_mismatch"),
    "OverContext": (-32007, "over_context"),
    "OverBatch": (-32008, "over_batch"),
    "EngineBusy": (-32009, "engine_busy"),
    "EngineError": (-32010, "engine_error"),
    "EngineCrashed": (-32019, "engine_crashed"),
    "IncompatibleSnapshot": (-32011, "incompatible_snapshot"),
    "WorkspaceError": (-32012, "workspace_error"),
    "PathOutsideWorkspace": (-32013, "path_outside_workspace"),
    "RepositoryError": (-32014, "repository_error"),
    "NodeUnavailable": (-32016, "node_unavailable"),
    "PeerNotAllowed": (-32017, "peer_not_allowed"),
    "EvalSetupError": (-32018, "eval_setup_error"),
    "VerifyError": (-32025, "verify_error"),
    "ServingError": (-32026, "serving_error"),
    "TokenizerMismatch": (-32027, "tokenizer_mismatch"),
    "StaleEdit": (-32028, "stale_edit"),
    "InvalidRequest": (-32602, "invalid_request"),
    "Cancelled": (-32800, "cancelled"),
}


def _all_error_classes() -> list[type[ContenoxError]]:
    found: list[type[ContenoxError]] = [ContenoxError]
    stack = [ContenoxError]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub.__module__ == errors_module.__name__ and sub not in found:
                found.append(sub)
                stack.append(sub)
    return found


def test_every_exported_error_is_a_contenox_error() -> None:
    exported = {name: getattr(errors_module, name) for name in errors_module.__all__}
    assert set(exported) == {cls.__name__ for cls in _all_error_classes()}
    for cls in exported.values():
        assert issubclass(cls, ContenoxError)


def test_codes_and_kinds_are_unique_and_stable() -> None:
    classes = _all_error_classes()
    assert {cls.__name__: (cls.code, cls.kind) for cls in classes} == STABLE
    codes = [cls.code for cls in classes]
    kinds = [cls.kind for cls in classes]
    assert len(set(codes)) == len(codes)
    assert len(set(kinds)) == len(kinds)


@pytest.mark.parametrize("cls", _all_error_classes(), ids=lambda c: c.__name__)
def test_code_range_and_kind_shape(cls: type[ContenoxError]) -> None:
    # JSON-RPC: server errors -32000..-32099, or the reserved codes we reuse on purpose
    # (-32602 invalid params, -32800 LSP RequestCancelled).
    assert -32099 <= cls.code <= -32000 or cls.code in (-32602, -32800)
    assert re.fullmatch(r"[a-z][a-z_]*[a-z]", cls.kind)
    # every subclass names its own kind, none silently inherits its parent's
    if cls is not ContenoxError:
        assert "kind" in vars(cls) and "code" in vars(cls)


@pytest.mark.parametrize("cls", _all_error_classes(), ids=lambda c: c.__name__)
def test_to_dict_shape(cls: type[ContenoxError]) -> None:
    err = cls("something went wrong", path="/x", n=3)
    assert str(err) == "something went wrong"
    assert err.to_dict() == {"code": cls.code, "kind": cls.kind, "message": "something went wrong",
                             "details": {"path": "/x", "n": 3}}
    assert cls("plain").to_dict()["details"] == {}


def test_subclasses_are_catchable_by_their_parent() -> None:
    with pytest.raises(WorkspaceError) as info:
        raise PathOutsideWorkspace("../etc/passwd is outside the workspace", path="../etc/passwd")
    assert info.value.kind == "path_outside_workspace"
    with pytest.raises(ContenoxError):
        raise ModelNotFound("no such model", model="x")


def test_an_error_comes_back_from_the_wire_as_its_own_class() -> None:
    """One registry keyed by ``kind`` rebuilds errors sent by the engine process and by the node."""
    sent = errors_module.ModelNotFound("no model x", model="x")
    back = ContenoxError.from_wire(sent.to_dict())
    assert type(back) is errors_module.ModelNotFound and back.message == "no model x" and back.details == {"model": "x"}
    assert ContenoxError.from_wire({"kind": "newer_kind", "message": "?"}) is None  # the caller keeps the wire's
    from contenox.client import RemoteError
    from contenox.runtime_ov._pipe import WireError, error_from, error_to

    assert type(error_from(error_to(errors_module.EngineBusy("busy")))) is errors_module.EngineBusy
    assert type(error_from(WireError(kind="unknown", message="boom"))) is errors_module.EngineError
    remote = RemoteError({"code": -32999, "message": "new", "data": {"kind": "newer_kind", "details": {}}})
    assert remote.to_dict()["kind"] == "newer_kind" and remote.to_dict()["code"] == -32999
