"""Learned juror weights: each juror's confusion matrix from human labels, and the
posterior label of a case given every juror's vote (Dawid and Skene's model).

Model: a case's true class ``c`` has prior ``p_c``; juror ``j`` gives label ``l`` with
probability ``pi_j[c, l]``, independently of the other jurors given ``c``. Then

    P(c | votes) ∝ p_c · Π_j pi_j[c, v_j]        (a juror with no vote contributes 1)

With human labels on a development split the confusions and the prior are estimated
directly (counts plus ``smoothing`` in every cell: a Laplace prior), the supervised
M-step of Dawid and Skene's EM; no EM is run on unlabelled cases. A juror that is often
right gets a sharp diagonal, so its vote weighs more; two jurors that err the same way
are still counted as independent (the model's known blind spot), which the error
correlation (calibration.compare.jury) shows.

Reference: Dawid and Skene (1979), "Maximum likelihood estimation of observer error-rates
using the EM algorithm", J. R. Stat. Soc. C 28(1); Passonneau and Carpenter (2014), TACL 2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["class_prior", "juror_confusions", "posterior_labels"]


def juror_confusions(
    human: Sequence[str],
    jurors: Mapping[str, Sequence[str | None]],
    *,
    labels: Sequence[str],
    smoothing: float = 1.0,
) -> dict[str, np.ndarray]:
    """Each juror's confusion ``pi_j[c, l]`` (rows: the human's class, columns: the juror's
    label; each row sums to 1) from the cases both labelled, plus ``smoothing`` per cell."""
    index = {label: i for i, label in enumerate(labels)}
    out = {}
    for name, given in jurors.items():
        counts = np.full((len(labels), len(labels)), float(smoothing))
        for h, g in zip(human, given, strict=True):
            if g is not None and g in index:
                counts[index[h], index[g]] += 1
        out[name] = counts / counts.sum(axis=1, keepdims=True)
    return out


def class_prior(
    human: Sequence[str], *, labels: Sequence[str], smoothing: float = 1.0
) -> np.ndarray:
    """``p_c``: the share of each class among the human labels, plus ``smoothing``."""
    counts = np.array([sum(h == c for h in human) + smoothing for c in labels], dtype=float)
    return counts / counts.sum()


def posterior_labels(
    jurors: Mapping[str, Sequence[str | None]],
    confusions: Mapping[str, np.ndarray],
    prior: np.ndarray,
    *,
    labels: Sequence[str],
) -> list[str | None]:
    """The most probable class of each case given the votes (module formula); ``None``
    where two classes tie for the most probable (never settled by the order of classes)
    or where no juror voted."""
    index = {label: i for i, label in enumerate(labels)}
    columns = list(jurors.values())
    names = list(jurors)
    out: list[str | None] = []
    for votes in zip(*columns, strict=True):
        if all(v is None or v not in index for v in votes):
            out.append(None)
            continue
        log_p = np.log(prior).copy()
        for name, vote in zip(names, votes, strict=True):
            if vote is not None and vote in index:
                log_p += np.log(confusions[name][:, index[vote]])
        best = np.flatnonzero(np.isclose(log_p, log_p.max(), rtol=0, atol=1e-12))
        out.append(labels[int(best[0])] if len(best) == 1 else None)
    return out
