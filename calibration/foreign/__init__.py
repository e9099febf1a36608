"""Other tools' judge outputs as label rows: promptfoo's results JSON, DeepEval's test-run
JSON, Inspect's eval logs and Ragas' result CSV. Pure I/O: each reader turns one file into
rows of `id`, `label` (where the tool says pass or fail) and `score`, and says which of the
tool's fields it mapped and which it left unmapped. Nothing here imports the judge.

    >>> from calibration.foreign import FORMATS
    >>> sorted(FORMATS)
    ['deepeval', 'inspect', 'promptfoo', 'ragas']
"""

from __future__ import annotations

from calibration.foreign._common import ForeignFormatError, ForeignRows
from calibration.foreign._detect import FORMATS, detect_format, foreign_metrics, read_foreign

__all__ = [
    "FORMATS",
    "ForeignFormatError",
    "ForeignRows",
    "detect_format",
    "foreign_metrics",
    "read_foreign",
]
