"""Juries: several judges grade the same rendered requests; their votes combine per kind.

`config` reads JURY.yaml, `vote` tallies one case's votes, `records` builds the panel's
record, `run` grades a file with every juror and then the panel, `api` is the Python API;
`probe` runs a bias probe on a panel and on each juror, `batch` exports and imports
one batch file per juror, `serve` is a jury as one named judge of `judge serve`;
`plan` says who grades what in the cheaper modes (`cyclic`, `escalate`: `escalate` says
when the first juror is unsure; `cascade`, under a certificate, is judge.engine.cascade's), `pairwise` resolves a juror's two orders, `costs` prices
the jurors, `gates` names the panel's figures for `--fail-if`.
The panel's statistics (agreement among jurors, effective votes) are calibration's
(`calibration.agreement.panel`).
"""

from judge.jury.api import (
    agrade_file_with_jury,
    aprobe_with_jury,
    grade_file_with_jury,
    probe_with_jury,
)
from judge.jury.config import Escalation, Juror, Jury, Price, Sampling, load_jury
from judge.jury.records import PanelRecord
from judge.jury.vote import Tally, Vote, tally

__all__ = [
    "Escalation",
    "Juror",
    "Jury",
    "PanelRecord",
    "Price",
    "Sampling",
    "Tally",
    "Vote",
    "agrade_file_with_jury",
    "aprobe_with_jury",
    "grade_file_with_jury",
    "load_jury",
    "probe_with_jury",
    "tally",
]
