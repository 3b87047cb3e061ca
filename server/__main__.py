"""``python -m contenox``."""

import sys

from contenox.cli import main

sys.exit(main())
