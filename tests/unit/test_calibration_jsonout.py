"""Issue 12 item 6: one strict-JSON rule for every file and response (calibration.io.jsonout)."""

from __future__ import annotations

import json
import math

import numpy as np

from calibration.io.jsonout import dumps_strict, to_strict_json, write_strict_json


def test_undefined_numbers_become_null_and_numpy_becomes_plain():
    value = {
        1: np.float64("nan"),
        "inf": float("inf"),
        "ci": (np.float32(0.25), -math.inf),
        "counts": np.array([[1, 2], [3, 4]]),
        "n": np.int64(7),
        "ok": np.bool_(True),
        "text": "café",
    }
    strict = to_strict_json(value)
    assert strict == {
        "1": None,
        "inf": None,
        "ci": [0.25, None],
        "counts": [[1, 2], [3, 4]],
        "n": 7,
        "ok": True,
        "text": "café",
    }
    assert type(strict["n"]) is int and type(strict["ok"]) is bool


def test_files_are_strict_json_in_utf8(tmp_path):
    path = write_strict_json(tmp_path / "new" / "out.json", {"kappa": float("nan"), "label": "é"})
    text = path.read_text("utf-8")
    assert text.endswith("\n") and '"é"' in text and "NaN" not in text
    assert json.loads(text, parse_constant=lambda c: 1 / 0) == {"kappa": None, "label": "é"}
    assert dumps_strict([np.nan], indent=None) == "[null]"
