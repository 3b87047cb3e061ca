"""Materializing eval repositories: pinned commit ids, deterministic rebuilds, cache reuse, clear errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest

import contenox.eval.repos as repos_module
from contenox.errors import ChecksumMismatch, EvalSetupError
from contenox.eval import RepoSpec, TaskSet, git, materialize

# What every machine must build from the pinned archives (fixed author, committer and dates).
EXPECTED_COMMITS = {
    "cachetools": {
        "v8.0.0": "e8aed8217bf57b456e69894fc04cff0f6bd3b697",
        "v8.0.1": "fee0cc208021bbca76e69819b38cd1b07b535ef5",
        "v8.0.2": "72b2e9b142d5dbe9ca43de2837e3f2860598eb12",
    },
    "itsdangerous": {
        "v2.0.1": "fba5ddd15954a5e0013022707ff53f21558e8041",
        "v2.1.2": "71f7426fa4b26b2f649d46110cd24327ef6fc6b7",
        "v2.2.0": "ddfcfdbb62e4fb27fbc7f4526211f6482164e6ed",
    },
    "python-dotenv": {
        "v1.0.0": "ea04465e6e73bdfe72717ed744c901e17877041c",
        "v1.0.1": "202c92adbafbfe919be2930c881472e5233c42e6",
        "v1.1.0": "b08a691d3b53da855f3b4332b5cea085b2bc210e",
    },
    "semver": {
        "v7.6.0": "079a881cd7c25e868d2b4f8f4e3f6f302c5eb7e6",
        "v7.6.2": "e39ed6f3abe5c75d4d5aea04c285aef335897685",
        "v7.6.3": "357f7c21a5c0f300d12d6cf0bf6caedacd29d247",
    },
    # The held-out repository (issue 26); its sdists ship src/isodate/version.py, which their .gitignore names.
    "isodate": {
        "v0.6.1": "d4dd4f5ae517ac5f239926a24f986db54404d8da",
        "v0.7.0": "9adc98ceb0c5f8ae890c09da97e9c9a98a171b6c",
        "v0.7.2": "b802681fa2b568f8bf55179636ff18b4112c1d24",
    },
    # Held out in issue 29: h11 (tuned on afterwards) and docstring-parser (sealed).
    "h11": {
        "v0.14.0": "b67bf02b64e0d4e46fd66f0f88a4cc9c989f1ae3",
        "v0.15.0": "ed241d12c4121c2a494fd255f770f6c89b47e5da",
        "v0.16.0": "8fd51351e61f3e932a77223c97a34d13627ebf0a",
    },
    "docstring-parser": {
        "v0.16": "40682c36f6c6ef5861e3d3d7c6023fecab1c99e5",
        "v0.17.0": "fc156f42fcadef3a728399f73c34bc73d4e9a398",
        "v0.18.0": "28c004063346d0691d20eb79fac29fd045062ea5",
    },
    # Held out in issue 26 for the edit step (edit and refactor tasks); its sdists ship src/humanize/_version.py,
    # which their .gitignore names.
    "humanize": {
        "v4.15.0": "670d9a2c5191b895c01b064718de76625566cebb",
        "v4.16.0": "819da499b5677593f0bf0febab9e484acffce9d4",
        "v4.17.0": "0f41b3494f7238e95034f7e682eb17b82adb1e9b",
    },
}


def _commits(repo: Path) -> dict[str, str]:
    tags = git(repo, "tag").split()
    return {tag: git(repo, "rev-parse", f"{tag}^{{commit}}").strip() for tag in tags}


def test_the_set_uses_eight_repositories_one_of_them_javascript(task_set: TaskSet) -> None:
    assert {spec.name for spec in task_set.repos} == set(EXPECTED_COMMITS)
    assert {spec.source for spec in task_set.repos} == {"pypi", "npm"}
    assert all(len(spec.versions) >= 3 for spec in task_set.repos)


def test_materialized_repositories_have_the_pinned_commit_ids(eval_repos: dict[str, Path]) -> None:
    for name, expected in EXPECTED_COMMITS.items():
        repo = eval_repos[name]
        assert _commits(repo) == expected
        log = git(repo, "log", "--format=%H", "main").split()
        assert log == list(reversed(expected.values())), "one commit per version, oldest first"
        assert git(repo, "status", "--porcelain") == ""


def test_files_an_archive_ships_are_committed_even_when_its_gitignore_names_them(
        eval_repos: dict[str, Path]) -> None:
    """Regression: isodate's sdists ship the generated src/isodate/version.py, which their own .gitignore
    lists; left out, a checkout could not `import isodate`."""
    repo = eval_repos["isodate"]
    assert "src/isodate/version.py" in git(repo, "show", "v0.7.2:.gitignore")
    assert git(repo, "ls-tree", "--name-only", "v0.7.2", "src/isodate/version.py").strip() == "src/isodate/version.py"


def test_a_rebuild_gives_the_same_commits(task_set: TaskSet, eval_cache: Path, tmp_path: Path,
                                          eval_repos: dict[str, Path]) -> None:
    # Same verified archives, a fresh build in another place: identical history.
    shutil.copytree(eval_cache / "_archives", tmp_path / "_archives")
    for spec in task_set.repos:
        again = materialize(spec, tmp_path)
        assert again == tmp_path / spec.name
        assert _commits(again) == _commits(eval_repos[spec.name])


def test_the_cache_is_reused_while_the_spec_is_unchanged(task_set: TaskSet, eval_cache: Path,
                                                         eval_repos: dict[str, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def no_build(*args: object) -> None:
        raise AssertionError("rebuilt a cached repository")

    monkeypatch.setattr(repos_module, "_build", no_build)
    for spec in task_set.repos:
        assert materialize(spec, eval_cache) == eval_repos[spec.name]


def test_a_changed_spec_rebuilds(task_set: TaskSet, eval_cache: Path, tmp_path: Path,
                                 eval_repos: dict[str, Path]) -> None:
    spec = task_set.repo("semver")
    shutil.copytree(eval_cache / "_archives", tmp_path / "_archives")
    first = materialize(spec, tmp_path)
    two = msgspec.structs.replace(spec, versions=spec.versions[:2])
    assert materialize(two, tmp_path) == first
    assert set(_commits(first)) == {"v7.6.0", "v7.6.2"}
    assert _commits(first)["v7.6.2"] == EXPECTED_COMMITS["semver"]["v7.6.2"]


def test_a_wrong_digest_is_a_checksum_mismatch(task_set: TaskSet, tmp_path: Path) -> None:
    spec = task_set.repo("semver")
    bad = msgspec.structs.replace(spec, versions=(msgspec.structs.replace(spec.versions[0], sha256="0" * 64),))
    with pytest.raises(ChecksumMismatch) as info:
        materialize(bad, tmp_path)
    assert info.value.details["expected"] == "0" * 64
    assert info.value.details["actual"] == spec.versions[0].sha256
    assert not (tmp_path / "semver").exists()


def test_missing_npm_is_a_clear_setup_error(task_set: TaskSet, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(repos_module.shutil, "which", lambda name: None)
    with pytest.raises(EvalSetupError) as info:
        materialize(task_set.repo("semver"), tmp_path)
    assert "npm is not installed" in info.value.message
    assert info.value.to_dict()["kind"] == "eval_setup_error"
    assert info.value.details["tool"] == "npm"


def test_an_unknown_package_version_is_a_setup_error(tmp_path: Path) -> None:
    spec = RepoSpec(name="nope", source="npm", package="semver",
                    versions=(repos_module.RepoVersion(version="0.0.0-does-not-exist", sha256="0" * 64),))
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    with pytest.raises(EvalSetupError, match="could not fetch npm package semver"):
        materialize(spec, tmp_path)


def test_a_relative_cache_dir_gives_an_absolute_repository(task_set: TaskSet, eval_cache: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: `contenox eval --cache .cache/eval-repos` handed checkout a relative path it cloned from
    another directory."""
    monkeypatch.chdir(eval_cache.parent)
    path = materialize(task_set.repos[0], Path(eval_cache.name))
    assert path.is_absolute() and path == eval_cache / task_set.repos[0].name
