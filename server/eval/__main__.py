"""``python -m contenox.eval``: materialize and validate the eval task set."""

from __future__ import annotations

import sys

from contenox.eval.prepare import main

sys.exit(main())
