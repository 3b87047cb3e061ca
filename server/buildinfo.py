"""Which build of Contenox this process runs: the version plus a digest of the package's files.

The node records its build beside its lock (``node.build``) and reports it in ``status``; a CLI or editor relay
of another build (the package was upgraded or the checkout changed while a node ran) restarts an idle node, or
says how (:func:`contenox.client.node_client.replace_stale_node`).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from contenox import __version__

__all__ = ["build_id"]

_PACKAGE = Path(__file__).resolve().parent


@functools.cache
def build_id() -> str:
    """``<version>+<12 hex digits>``: the digest covers every source and data file's path, size and mtime (a
    reinstall or an edit changes it; a stat of each file, no reads)."""
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(_PACKAGE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            info = path.stat()
            digest.update(f"{path.relative_to(_PACKAGE).as_posix()}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return f"{__version__}+{digest.hexdigest()[:12]}"
