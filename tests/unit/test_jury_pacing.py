"""A juror paces itself as a single judge does (issue 22): `concurrency: auto` and its own
`rpm` / `tpm`, else the command line's caps; the range check is the judge config's."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from judge.config import MAX_CONCURRENCY, JudgeConfig
from judge.jury.config import Juror, juror_config


def test_a_juror_may_learn_its_concurrency_and_cap_its_own_rate() -> None:
    base = JudgeConfig(rpm=60, tpm=9000)
    auto = juror_config(Juror(name="a", model="m", concurrency="auto", rpm=500), base, {})
    assert auto.concurrency == "auto" and auto.max_in_flight == MAX_CONCURRENCY
    assert (auto.rpm, auto.tpm) == (500, 9000)  # its own rpm, the command line's tpm
    fixed = juror_config(Juror(name="b", model="m", concurrency=4), base, {})
    assert (fixed.max_in_flight, fixed.rpm, fixed.tpm) == (4, 60, 9000)


@pytest.mark.parametrize("field", [{"concurrency": 0}, {"concurrency": "fast"}, {"rpm": 0}])
def test_a_juror_out_of_range_is_refused(field: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Juror.model_validate({"name": "a", "model": "m", **field})
