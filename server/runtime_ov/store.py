"""The model store: ``$CONTENOX_HOME/models/<name>/`` holding weights and their profile.

Installs are atomic: a pull downloads and verifies under ``models/.partial-*`` and renames the
finished directory into place. An interrupted pull leaves no model behind; its scratch directory
is removed by the next store operation once its process is gone.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

from contenox.errors import (
    ChecksumMismatch,
    ContenoxError,
    InvalidRequest,
    ModelNotFound,
    ModelSourceUnavailable,
    ProfileMismatch,
)
from contenox.processes import pid_alive
from contenox.runtime_ov.catalog import Catalog, Source, load_catalog
from contenox.runtime_ov.digests import model_digests
from contenox.runtime_ov.profile import PROFILE_FILENAME, Profile, read_profile, write_profile
from contenox.runtime_ov.progress import NullProgress, Progress
from contenox.runtime_ov.sources import fetch_source

__all__ = ["InstalledModel", "ModelStore"]

log = logging.getLogger(__name__)

_SOURCE_FILE = "source.json"
_PARTIAL = ".partial-"
_NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]*")


class InstalledModel(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    path: str
    profile: Profile
    size_bytes: int
    source: str

    @property
    def weights(self) -> Path:
        return Path(self.path) / self.profile.weights


def _dir_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


class ModelStore:
    def __init__(self, models_dir: Path, catalog: Catalog | None = None) -> None:
        self.root = models_dir
        self.catalog = catalog or load_catalog()

    # -- reading ---------------------------------------------------------------------------
    def list(self) -> list[InstalledModel]:
        self._sweep_partials()
        if not self.root.is_dir():
            return []
        found = []
        for child in sorted(self.root.iterdir()):
            if child.name.startswith(".") or not (child / PROFILE_FILENAME).is_file():
                continue
            try:
                found.append(self._read(child))
            except ContenoxError as exc:
                log.warning("skipping %s: %s", child, exc.message)
        return found

    def get(self, name: str) -> InstalledModel:
        if not _NAME_RE.fullmatch(name):
            raise ModelNotFound(f"invalid model name {name!r}; known models: {', '.join(self.catalog.names())}",
                                model=name)
        path = self.root / name
        if not (path / PROFILE_FILENAME).is_file():
            hint = f"run `contenox model pull {name}`" if name in self.catalog.names() else (
                f"known models: {', '.join(self.catalog.names())}")
            raise ModelNotFound(f"model {name!r} is not installed; {hint}", model=name)
        return self._read(path)

    def _read(self, path: Path) -> InstalledModel:
        profile = self._with_catalog_fim(read_profile(path))
        weights = path / profile.weights
        if not weights.exists():
            raise ModelNotFound(f"{path}: weights {profile.weights} missing", model=path.name)
        source = ""
        if (path / _SOURCE_FILE).is_file():
            try:
                record = msgspec.json.decode((path / _SOURCE_FILE).read_bytes())
            except msgspec.DecodeError:
                record = None
            if isinstance(record, dict):
                source = str(record.get("source", ""))
        return InstalledModel(name=path.name, path=str(path), profile=profile, size_bytes=_dir_size(path),
                              source=source)

    # -- writing ---------------------------------------------------------------------------
    def ensure(self, name: str, progress: Progress | None = None) -> InstalledModel:
        """The installed model, pulling it first when it is in the catalog but not installed."""
        try:
            return self.get(name)
        except ModelNotFound:
            self.catalog.resolve(name)
            return self.pull(name, progress)

    def pull(self, name: str, progress: Progress | None = None, *, force: bool = False) -> InstalledModel:
        entry = self.catalog.resolve(name)
        progress = progress or NullProgress()
        with self._lock(name):
            self._sweep_partials()
            if not force and (self.root / name / PROFILE_FILENAME).is_file():
                return self.get(name)
            failures: list[str] = []
            mismatches: list[ChecksumMismatch] = []
            for source in entry.sources:
                try:
                    with self._partial(name) as work:
                        weights = fetch_source(source, work, progress)
                        profile = self._profile_for(entry.profile, source, weights)
                        return self._install(name, work, weights, profile, source)
                except ChecksumMismatch as exc:
                    mismatches.append(exc)
                    failures.append(f"{source.describe()}: {exc.message}")
                except (ModelSourceUnavailable, ProfileMismatch) as exc:
                    failures.append(f"{source.describe()}: {exc.message}")
                except OSError as exc:  # writing the store itself failed (disk full, permissions)
                    failures.append(f"{source.describe()}: {exc}")
                log.info("source failed for %s: %s", name, failures[-1])
            if mismatches and len(mismatches) == len(failures):
                raise ChecksumMismatch(f"cannot pull {name}: " + "; ".join(failures), model=name,
                                       expected=mismatches[0].details.get("expected"),
                                       actual=mismatches[0].details.get("actual"))
            raise ModelSourceUnavailable(f"cannot pull {name}; tried " + "; ".join(failures),
                                         model=name, tried=failures)

    def import_path(self, path: Path, name: str | None = None) -> InstalledModel:
        """Install a local IR directory or .gguf file with a conservative profile."""
        path = path.expanduser().resolve()
        if not path.exists():
            raise ModelNotFound(f"nothing to import at {path}", path=str(path))
        if path.is_dir() and not (path / "openvino_model.xml").is_file():
            raise InvalidRequest(f"{path} is not an OpenVINO IR directory (no openvino_model.xml)", path=str(path))
        if path.is_file() and path.suffix.lower() != ".gguf":
            raise InvalidRequest(f"{path} is neither a .gguf file nor an IR directory", path=str(path))
        stem = path.stem if path.is_file() else path.name
        name = name or re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-.") or "imported"
        if not _NAME_RE.fullmatch(name):
            raise InvalidRequest(f"invalid model name {name!r}: use lowercase letters, digits, '.', '_' or '-'",
                                 model=name)
        with self._lock(name), self._partial(name) as work:
            if (self.root / name).exists():
                raise InvalidRequest(f"model {name!r} is already installed; `contenox model rm {name}` first",
                                     model=name)
            weights = work / ("ir" if path.is_dir() else "model.gguf")
            try:
                if path.is_dir():
                    shutil.copytree(path, weights)
                else:
                    shutil.copyfile(path, weights)
            except OSError as exc:
                raise ModelSourceUnavailable(f"cannot import {path}: {exc}", path=str(path)) from exc
            digests = model_digests(weights)
            context = min(digests.context_length or 4096, 4096)
            profile = Profile(
                id=name, family="unknown", format="openvino-ir" if path.is_dir() else "gguf",
                weights=weights.name, default_context=min(2048, context), max_tested_context=context,
                model_digest=digests.model_digest, tokenizer_digest=digests.tokenizer_digest,
                chat_template_digest=digests.chat_template_digest,
                warning="imported model: untested by Contenox; context limited conservatively",
            )
            return self._install(name, work, weights, profile, None, origin=f"import {path}")

    def remove(self, name: str) -> int:
        """Delete an installed model; returns the bytes freed.

        The directory is first renamed out of the way, so the model is gone at once even if the
        deletion is interrupted (the next store operation sweeps the rest). A symlinked model
        (a shared cache) is unlinked, freeing nothing.
        """
        self.get(name)
        path = self.root / name
        with self._lock(name):
            if path.is_symlink():
                path.unlink()
                return 0
            size = _dir_size(path)
            self._discard(path, name)
        return size

    # -- internals -------------------------------------------------------------------------
    def _with_catalog_fim(self, profile: Profile) -> Profile:
        """A model installed before its catalog entry declared a FIM format gets it (same id, same tokenizer)."""
        if profile.fim is not None or profile.id not in self.catalog.names():
            return profile
        tested = self.catalog.resolve(profile.id).profile
        if tested.fim is None or (tested.tokenizer_digest and profile.tokenizer_digest
                                  and tested.tokenizer_digest != profile.tokenizer_digest):
            return profile
        return msgspec.structs.replace(profile, fim=tested.fim)

    def _profile_for(self, tested: Profile, source: Source, weights: Path) -> Profile:
        known = getattr(source, "sha256", None) if tested.format == "gguf" and source.format == "gguf" else None
        digests = model_digests(weights, model_digest=known if not getattr(source, "requantize", None) else None)
        updates: dict[str, object] = {"weights": weights.name, "format": source.format}
        for field in ("model_digest", "tokenizer_digest", "chat_template_digest"):
            pinned = getattr(tested, field)
            actual = getattr(digests, field)
            if pinned and source.format == tested.format and pinned != actual:
                raise ProfileMismatch(
                    f"{field} of the downloaded model does not match the catalog profile: "
                    f"expected {pinned}, got {actual}", field=field, expected=pinned, actual=actual)
            updates[field] = actual
        return msgspec.structs.replace(tested, **updates)

    def _install(self, name: str, work: Path, weights: Path, profile: Profile, source: Source | None,
                 origin: str = "") -> InstalledModel:
        write_profile(work, profile)
        (work / _SOURCE_FILE).write_bytes(msgspec.json.encode(
            {"source": origin or (source.describe() if source else ""), "catalog": source}))
        target = self.root / name
        if target.is_symlink():
            target.unlink()
        elif target.exists():
            self._discard(target, name)
        os.replace(work, target)
        log.info("installed %s at %s", name, target)
        return self._read(target)

    @contextmanager
    def _partial(self, name: str) -> Iterator[Path]:
        self.root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f"{_PARTIAL}{name}-{os.getpid()}-", dir=self.root))
        work.chmod(0o755)  # mkdtemp makes it 0700; the installed model is an ordinary directory
        try:
            yield work
        finally:
            if work.exists():
                shutil.rmtree(work, ignore_errors=True)

    @contextmanager
    def _lock(self, name: str) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / f".{name}.lock").open("w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _discard(self, path: Path, name: str) -> None:
        """Rename ``path`` to a scratch name the sweep recognises, then delete it."""
        trash = self.root / f"{_PARTIAL}{name}-{os.getpid()}-rm{os.urandom(4).hex()}"
        os.replace(path, trash)
        shutil.rmtree(trash, ignore_errors=True)

    def _sweep_partials(self) -> None:
        """Remove scratch directories left by pulls whose process is gone."""
        if not self.root.is_dir():
            return
        for child in self.root.glob(f"{_PARTIAL}*"):
            match = re.match(rf"{re.escape(_PARTIAL)}.+-(\d+)-[^-]+$", child.name)
            if match and pid_alive(int(match.group(1))):
                continue
            log.info("removing interrupted pull %s", child)
            shutil.rmtree(child, ignore_errors=True)
