"""The node's three protocols fuzzed with a fixed seed (the first fault campaign, kept as a suite): every probe after
a fuzzed message is answered on the same connection, fuzzed requests get structured errors, the node lives."""

from __future__ import annotations

import pytest

from contenox.bench.fuzz import fuzz_messages, fuzz_protocol
from contenox.config import Config
from support.nodekit import node_pid, pid_alive

pytestmark = pytest.mark.slow

SEED = 20261130
COUNT = 150


def test_the_fuzz_messages_are_reproducible_and_varied() -> None:
    first = list(fuzz_messages("lsp", SEED, 60))
    assert first == list(fuzz_messages("lsp", SEED, 60))
    assert first != list(fuzz_messages("lsp", SEED + 1, 60))
    joined = b"".join(first)
    assert b"Content-Length" in joined and b"[[[[" in joined and b"\xff" in joined
    assert all(m.endswith(b"\n") for m in fuzz_messages("acp", SEED, 30))


@pytest.mark.parametrize("protocol", ["rpc", "lsp", "acp"])
def test_fuzzed_messages_get_errors_and_never_break_the_connection(node_config: Config, protocol: str) -> None:
    result = fuzz_protocol(node_config, protocol, seed=SEED, count=COUNT)
    pid = node_pid(node_config)
    assert pid is not None and pid_alive(pid)
    assert (result.sent, result.probes_answered, result.probes_lost, result.reconnects) == (COUNT, COUNT, 0, 0)
    assert result.errors_structured >= COUNT // 3  # the bad requests were answered, not dropped
