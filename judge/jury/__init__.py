"""Juries: several judges grade the same rendered requests; their votes combine per kind.

`config` reads JURY.yaml, `vote` tallies one case's votes, `records` builds the panel's
record, `run` grades a file with every juror and then the panel, `api` is the Python API.
The panel's statistics (agreement among jurors, effective votes) are calibration's
(`calibration.agreement.panel`).
"""

from judge.jury.api import agrade_file_with_jury, grade_file_with_jury
from judge.jury.config import Juror, Jury, Sampling, load_jury
from judge.jury.records import PanelRecord
from judge.jury.vote import Tally, Vote, tally

__all__ = [
    "Juror",
    "Jury",
    "PanelRecord",
    "Sampling",
    "Tally",
    "Vote",
    "agrade_file_with_jury",
    "grade_file_with_jury",
    "load_jury",
    "tally",
]
