"""Sample planner inputs shared by the planner tests."""

from __future__ import annotations

import msgspec

from contenox.planner import Pin, PlannerInputs

PIN_A = '''"""Accounts."""


class Account:
    def __init__(self, owner: str, balance: int = 0) -> None:
        self.owner = owner
        self.balance = balance

    def deposit(self, amount: int) -> None:
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.balance += amount
'''

PIN_B = '''from bank.accounts import Account


def transfer(src: Account, dst: Account, amount: int) -> None:
    src.balance -= amount
    dst.deposit(amount)
'''


def sample_inputs(**changes: object) -> PlannerInputs:
    """A realistic turn: instructions, repo map, two pins, a diff, test output and a question."""
    base = PlannerInputs(
        workspace="/work/bank",
        user="  Why does test_transfer fail when the amount is larger than the balance?\n",
        instructions=(("AGENTS.md", "Run tests with `pytest -q`.\nKeep functions small.\n\n"),),
        repo_map="bank/accounts.py:\n  class Account\n    def deposit(self, amount)\nbank/transfer.py:\n"
                 "  def transfer(src, dst, amount)\n",
        pins=(Pin(path="bank/accounts.py", text=PIN_A), Pin(path="bank/transfer.py", text=PIN_B)),
        diff="--- a/bank/transfer.py\n+++ b/bank/transfer.py\n@@ -4,2 +4,3 @@\n def transfer(src, dst, amount):\n"
             "+    # TODO: check the balance\n     src.balance -= amount\n",
        terminal="    FAILED tests/test_transfer.py::test_overdraft - AssertionError: -50 != 0\n1 failed, 4 passed\n",
    )
    return msgspec.structs.replace(base, **changes)
