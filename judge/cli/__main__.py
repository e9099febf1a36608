"""`python -m judge.cli ARGS`: the same as the `judge` console script."""

import sys

from judge.cli import main

sys.exit(main())
