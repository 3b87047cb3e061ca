"""Commands the node refuses to pass on, whatever the model asks: a ``run_command`` call whose command reaches
outside the workspace destructively (deletes or overwrites what is not the workspace's, needs root, wipes a disk,
powers the machine off) or sends the workspace off the machine (``git push``, a script piped from the network).

The check is a floor, not the safety story: every command still goes through the user's permission in the
editor or CLI, and the certification counts the call as the model made it. It reads the command as a shell would
split it (``;``, ``&&``, ``||``, ``|``, newlines) and looks at each simple command's program and arguments; it
errs on the side of refusing (the model is told to name the command to the user instead).
"""

from __future__ import annotations

import re
import shlex

__all__ = ["refusal"]

_SPLIT = re.compile(r"\|\||&&|[;|&\n]")
_ROOT = ("sudo", "su", "doas", "pkexec")
_DISK = ("mkfs", "fdisk", "sfdisk", "parted", "wipefs", "shred")
_SHELLS = ("sh", "bash", "zsh", "dash")
_POWER = ("shutdown", "reboot", "halt", "poweroff")
_OUTSIDE = re.compile(r"^(/|~|\$HOME|\$\{HOME\}|\.\.(/|$))")
"""A path that leaves the workspace: absolute, the home folder, or above the workspace root."""


def _words(part: str) -> list[str]:
    try:
        words = shlex.split(part, comments=True)
    except ValueError:  # unbalanced quotes: read it word by word
        words = part.split()
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):  # VAR=value before the program
        words = words[1:]
    return words


def _simple(words: list[str]) -> str | None:
    program = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if program in (*_SHELLS, "eval") and args:  # sh -c '...', eval '...': the quoted command itself
        inner = args[args.index("-c") + 1:] if "-c" in args else args if program == "eval" else []
        return refusal(" ".join(inner)) if inner else None
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    if program in _ROOT:
        return f"`{program}` runs it as root"
    if program.startswith(_DISK) or (program == "dd" and any(a.startswith("of=/dev/") for a in args)):
        return "it writes to a disk or wipes it"
    if program in _POWER:
        return "it powers the machine off or restarts it"
    if program in ("rm", "rmdir", "shred", "unlink", "mv", "chmod", "chown") and any(
            _OUTSIDE.match(a) for a in args if not a.startswith("-")):
        return f"`{program}` changes files outside the workspace"
    if program == "rm" and ("r" in flags.lower() or "--recursive" in args) and "--no-preserve-root" in args:
        return "it deletes the whole file system"
    if program == "git" and args[:1] == ["push"]:
        return "it sends the repository off this machine"
    if program in ("curl", "wget", "scp", "rsync", "nc", "ftp", "sftp") and any(
            a in ("-T", "--upload-file", "-F", "--form", "--data-binary", "--post-file") for a in args):
        return "it uploads data off this machine"
    return None


def refusal(command: str) -> str | None:
    """Why the node will not run ``command`` (a short reason for the model and the user), or None."""
    if re.search(r":\s*\(\s*\)\s*\{", command):
        return "it is a fork bomb"
    if re.search(r">\s*/dev/(sd|nvme|hd|disk|mmcblk)", command):
        return "it writes to a disk or wipes it"
    parts = [_words(p) for p in _SPLIT.split(command)]
    for before, words in zip([[], *parts], parts, strict=False):
        if not words:
            continue
        why = _simple(words)
        if why:
            return why
        if before and words[0].rsplit("/", 1)[-1] in _SHELLS and before[0] in ("curl", "wget"):
            return "it runs a script fetched from the network"
    return None
