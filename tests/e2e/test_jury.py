"""A jury through the loopback test server: three simulated jurors of planted accuracy
against planted human labels (two with correlated errors, one answering text that is not
JSON on 10% of cases), each on its own server. One request per juror per case (the
malformed juror's one repair besides, as a single judge's), none for a finished case on a
rerun; every record lists every vote; the malformed cases read `votes: 2 of 3`; an even
panel's tie is `no_majority` in either order; the panel does not beat its best juror when
the others share its errors, and does when errors are independent."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
import yaml
from sklearn.metrics import cohen_kappa_score

from judge.cli import main
from judge.jury import grade_file_with_jury, load_jury
from judge.testing import FakeOpenAIServer
from judge.testing.jurors import PlantedJuror, plant_panel, write_cases
from judge.testing.jurors import planted_truth as plant_truth
from tests.helpers import REPO, read_jsonl

# juries end to end (three juror servers per run): run by .ci/slow
pytestmark = pytest.mark.slow

LABELS = ["compliant", "minor_issue", "violation"]
RUBRICS = REPO / "examples" / "rubrics"
N = 60
NAMES = ["a", "b", "c"]


def planted_truth(seed: int = 7) -> dict[str, str]:
    return plant_truth(N, seed=seed, id_format="c{:03d}")


Make = Callable[..., FakeOpenAIServer]


def start_jurors(make: Make, jurors: list[PlantedJuror], names: list[str]) -> dict[str, Any]:
    return {
        name: make(responder=juror, model=f"juror-{name}-2024-01-01")
        for name, juror in zip(names, jurors, strict=True)
    }


def write_jury(path: Path, servers: dict[str, FakeOpenAIServer], **rules: Any) -> Path:
    jurors = [
        {
            "name": name,
            "model": s.model,
            "base_url": s.base_url,
            "api_key_env": "JUROR_KEY",
            "concurrency": 4,
            "sampling": {"temperature": 0, "seed": 1},
        }
        for name, s in servers.items()
    ]
    path.write_text(yaml.safe_dump({"jurors": jurors, **rules}), "utf-8")
    return path


def grade(tmp_path: Path, jury: Path, cases: Path, out: Path, *extra: str) -> int:
    args = [
        "grade",
        str(cases),
        "--rubric",
        "policy",
        "--rubrics-dir",
        str(RUBRICS),
        "--jury",
        str(jury),
        "-o",
        str(out),
        "--summary",
        str(out / "summary.json"),
        "--max-error-rate",
        "1",
        *extra,
    ]
    env = {"JUROR_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return main(args, env=env)


def accuracy(labels: dict[str, str | None], truth: dict[str, str]) -> float:
    """Share of all cases given the true label (an undecided or failed case is wrong)."""
    return sum(labels.get(i) == t for i, t in truth.items()) / len(truth)


@pytest.fixture
def truth() -> dict[str, str]:
    return planted_truth()


def correlated(truth: dict[str, str]) -> list[PlantedJuror]:
    return plant_panel(
        truth,
        LABELS,
        error_rates=[0.2, 0.25, 0.15],
        shared=[0, 1],
        malformed_rate=[0, 0, 0.1],
        seed=1,
    )


def independent(truth: dict[str, str]) -> list[PlantedJuror]:
    return plant_panel(
        truth, LABELS, error_rates=[0.15, 0.15, 0.15], malformed_rate=[0, 0, 0.1], seed=2
    )


@pytest.mark.slow  # a jury through the test server: a minute; .ci/slow
def test_every_vote_recorded_and_one_request_per_juror_per_case(
    tmp_path: Path, server_factory: Make, truth: dict[str, str]
) -> None:
    jurors = correlated(truth)
    servers = start_jurors(server_factory, jurors, NAMES)
    cases, out = write_cases(tmp_path / "cases.jsonl", truth), tmp_path / "out"
    jury = write_jury(tmp_path / "jury.yaml", servers)
    assert grade(tmp_path, jury, cases, out) == 0
    malformed = jurors[2].malformed
    assert len(malformed) == N // 10
    assert servers["a"].stats.requests == servers["b"].stats.requests == N
    # the malformed juror asks once per case, and repairs once where the reply is not JSON
    assert servers["c"].stats.requests == N + len(malformed)

    records = read_jsonl(out / "policy.jsonl")
    assert [r["id"] for r in records] == list(truth)
    for record in records:
        votes = record["panel"]["jurors"]
        assert [v["juror"] for v in votes] == NAMES
        assert [v["judge"]["model"] for v in votes] == [s.model for s in servers.values()]
        if record["id"] in malformed:
            assert record["panel"]["votes"] == "2 of 3"
            assert [f["juror"] for f in record["panel"]["failed"]] == ["c"]
            assert record["panel"]["failed"][0]["status"] == "parse_error"
            assert votes[2]["status"] == "parse_error"
        else:
            assert record["panel"]["votes"] == "3 of 3" and record["panel"]["failed"] == []
    for name in NAMES:  # each juror's file is a single judge's
        own = read_jsonl(out / "jurors" / f"{name}.jsonl")
        assert [r["id"] for r in own] == list(truth) and "panel" not in own[0]
    bad = {r["id"] for r in read_jsonl(out / "jurors" / "c.jsonl") if r["status"] == "parse_error"}
    assert bad == malformed

    for server in servers.values():
        server.reset_stats()
    assert grade(tmp_path, jury, cases, out) == 0
    # a rerun sends nothing: the juror's answers that did not parse are kept as answered
    assert sum(s.stats.requests for s in servers.values()) == 0
    again = read_jsonl(out / "policy.jsonl")
    assert [decision(r) for r in again] == [decision(r) for r in records]
    # --retry-failed asks those cases again (a request and a repair each), and only those
    assert grade(tmp_path, jury, cases, out, "--retry-failed") == 0
    assert servers["a"].stats.requests == servers["b"].stats.requests == 0
    assert servers["c"].stats.requests == 2 * len(malformed)
    assert [decision(r) for r in read_jsonl(out / "policy.jsonl")] == [decision(r) for r in records]


def test_retry_failed_without_a_jury_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", planted_truth())
    args = ["grade", str(cases), "--rubric", "policy", "--rubrics-dir", str(RUBRICS)]
    assert main([*args, "--retry-failed"], env={}) == 2
    assert "--retry-failed is for --jury" in capsys.readouterr().err
    assert not list(tmp_path.glob("cases.policy*"))


def decision(record: dict[str, Any]) -> tuple[Any, ...]:
    panel = record["panel"]
    return record["id"], record["status"], record["label"], panel["votes"], panel["tally"]


@pytest.mark.slow  # a jury through the test server: a minute; .ci/slow
def test_the_summary_measures_the_panel_as_the_libraries_do(
    tmp_path: Path, server_factory: Make, truth: dict[str, str]
) -> None:
    servers = start_jurors(server_factory, correlated(truth), NAMES)
    cases, out = write_cases(tmp_path / "cases.jsonl", truth), tmp_path / "out"
    assert grade(tmp_path, write_jury(tmp_path / "jury.yaml", servers), cases, out) == 0
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    agreement = summary["jury"]["agreement"]
    table = [
        [
            r["label"] if r["status"] == "ok" else None
            for r in read_jsonl(out / "jurors" / f"{n}.jsonl")
        ]
        for n in NAMES
    ]
    codes = {label: i for i, label in enumerate(LABELS)}
    data = np.array([[np.nan if v is None else codes[v] for v in row] for row in table])
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert agreement["krippendorff_alpha"] == pytest.approx(expected, abs=1e-6)
    assert summary["jury"]["votes"] == {"2 of 3": N // 10, "3 of 3": N - N // 10}
    assert set(summary["jury"]["jurors"]) == set(NAMES)
    assert summary["jury"]["jurors"]["c"]["status"]["parse_error"] == N // 10

    # `judge calibrate` reads the panel's records (and each juror's) as any records file
    human = tmp_path / "human.csv"
    human.write_text("id,label\n" + "".join(f"{i},{t}\n" for i, t in truth.items()), "utf-8")
    for name, path in [("panel", out / "policy.jsonl"), ("c", out / "jurors" / "c.jsonl")]:
        report = tmp_path / f"cal-{name}"
        assert main(["calibrate", str(path), str(human), "-o", str(report)], env={}) == 0
        result = json.loads((report / "calibration.json").read_text("utf-8"))
        decided = [r for r in read_jsonl(path) if r["status"] == "ok"]
        expected = cohen_kappa_score(
            [truth[r["id"]] for r in decided], [r["label"] for r in decided]
        )
        assert result["kappa"] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(("plant", "beats"), [(correlated, False), (independent, True)])
def test_the_panel_beats_its_best_juror_only_when_errors_are_independent(
    tmp_path: Path, server_factory: Make, truth: dict[str, str], plant: Any, beats: bool
) -> None:
    servers = start_jurors(server_factory, plant(truth), NAMES)
    cases, out = write_cases(tmp_path / "cases.jsonl", truth), tmp_path / "out"
    summary = grade_file_with_jury(
        load_jury(write_jury(tmp_path / "jury.yaml", servers)),
        cases,
        out,
        "policy",
        rubrics_dir=RUBRICS,
        env={"JUROR_KEY": "sk-test"},
        n_boot=200,
        human_labels=[{"id": i, "label": t} for i, t in truth.items()],
    )
    panel = accuracy({r["id"]: r["label"] for r in read_jsonl(out / "policy.jsonl")}, truth)
    best = max(
        accuracy({r["id"]: r["label"] for r in read_jsonl(out / "jurors" / f"{n}.jsonl")}, truth)
        for n in NAMES
    )
    assert (panel > best) is beats
    vs = summary["jury"]["vs_humans"]
    versus = vs["panel_vs_best"]
    # At 60 cases the independent panel is ahead of every juror, but against the best it
    # has 7 cases to 1 (McNemar p 0.07 even for that juror alone, before any correction
    # for having picked it): too few to call. The old bootstrap-only verdict said "better".
    assert versus["verdict"] == "no_difference"
    assert (
        all((j["kappa_difference"] > 0) is beats for j in versus["per_juror"].values()) or not beats
    )
    assert "max-statistic" in versus["method"]
    # every member's kappa is sklearn's on the same cases, a missing label a disagreement
    columns = {n: read_jsonl(out / "jurors" / f"{n}.jsonl") for n in NAMES}
    columns["panel"] = read_jsonl(out / "policy.jsonl")
    for name, records in columns.items():
        given = [r["label"] if r["status"] == "ok" else "(none)" for r in records]
        expected = cohen_kappa_score(list(truth.values()), given)
        assert vs["members"][name]["kappa"] == pytest.approx(expected, abs=1e-6)
    learned = vs["learned_weights"]  # Dawid-Skene on a dev half, judged on the other
    assert (learned["dev"], learned["test"]) == (N // 2, N // 2)
    assert set(learned["confusions"]) == set(NAMES)
    errors = vs["error_correlation"]
    assert errors["pairs"]["a~b"] > 0.8 if not beats else errors["pairs"]["a~b"] < 0
    assert errors["n_eff"] == pytest.approx(3 / (1 + 2 * max(errors["mean"], 0)), abs=1e-5)
    assert 1 <= errors["n_eff_ci95"][0] <= errors["n_eff"] <= errors["n_eff_ci95"][1] <= 3


def test_an_even_panel_tie_is_no_majority_whatever_the_order(
    tmp_path: Path, server_factory: Make, truth: dict[str, str]
) -> None:
    jurors = plant_panel(truth, LABELS, error_rates=[0.2, 0.2], seed=4)
    servers = start_jurors(server_factory, jurors, ["a", "b"])
    cases = write_cases(tmp_path / "cases.jsonl", truth)
    outcomes = []
    for order in (["a", "b"], ["b", "a"]):
        out = tmp_path / "-".join(order)
        jury = write_jury(tmp_path / f"{out.name}.yaml", {n: servers[n] for n in order})
        assert grade(tmp_path, jury, cases, out) == 0
        outcomes.append(
            {
                r["id"]: (r["status"], r["label"], r["panel"]["outcome"])
                for r in read_jsonl(out / "policy.jsonl")
            }
        )
    assert outcomes[0] == outcomes[1]
    split = set(jurors[0].errors) | set(jurors[1].errors)
    assert len(split) == 24
    for case_id, (status, label, outcome) in outcomes[0].items():
        if case_id in split:
            assert (status, label, outcome) == ("abstained", None, "no_majority")
        else:
            assert (status, label, outcome) == ("ok", truth[case_id], "unanimous")


def test_a_bad_jury_file_is_a_usage_error_naming_it(tmp_path: Path, truth: dict[str, str]) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", truth)
    jury = tmp_path / "jury.yaml"
    jury.write_text("jurors: [{name: a, model: m}]\n", "utf-8")
    assert grade(tmp_path, jury, cases, tmp_path / "out") == 2
    assert not (tmp_path / "out").exists()


def test_a_panel_short_of_min_votes_is_a_failed_case_that_fails_the_run(
    tmp_path: Path, server_factory: Make, truth: dict[str, str]
) -> None:
    """min_votes 3 of 3: the malformed juror's cases are failed panel cases (parse_error),
    counted against --max-error-rate like a single judge's, never a smaller silent panel."""
    jurors = correlated(truth)
    servers = start_jurors(server_factory, jurors, NAMES)
    cases, out = write_cases(tmp_path / "cases.jsonl", truth), tmp_path / "out"
    jury = write_jury(tmp_path / "jury.yaml", servers, min_votes=3)
    args = [
        "grade",
        str(cases),
        "--rubric",
        "policy",
        "--rubrics-dir",
        str(RUBRICS),
        "--jury",
        str(jury),
        "-o",
        str(out),
        "--max-error-rate",
        "0.05",
    ]
    assert main(args, env={"JUROR_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path)}) == 1
    records = {r["id"]: r for r in read_jsonl(out / "policy.jsonl")}
    for case_id in jurors[2].malformed:
        record = records[case_id]
        assert (record["status"], record["label"], record["score"]) == ("parse_error", None, None)
        assert record["panel"]["outcome"] == "short"
        assert record["error"].startswith("votes: 2 of 3, fewer than min_votes 3 (c parse_error")
    assert sum(r["status"] == "parse_error" for r in records.values()) == N // 10
    for name, server in servers.items():  # each juror within its own concurrency
        assert 1 <= server.stats.peak_concurrency <= 4, name


def test_scores_combine_by_the_median_with_their_spread_where_the_kind_says_so(
    tmp_path: Path, server_factory: Make
) -> None:
    """A scale rubric (`panel_combines = "score"`): the panel's score is the median of the
    jurors' scores, and the record gives their spread."""
    scores = {"a": 2, "b": 4, "c": 5}

    def scale(score: int) -> Any:
        def respond(chat: Any) -> dict[str, Any]:
            return {"rationale": "simulated", "score": score}

        return respond

    servers = {
        n: server_factory(responder=scale(s), model=f"juror-{n}-2024-01-01")
        for n, s in scores.items()
    }
    cases = write_cases(tmp_path / "cases.jsonl", dict(list(planted_truth().items())[:5]))
    out = tmp_path / "out"
    jury = load_jury(write_jury(tmp_path / "jury.yaml", servers, scores="median"))
    summary = grade_file_with_jury(
        jury, cases, out, "tone", rubrics_dir=RUBRICS, env={"JUROR_KEY": "sk-test"}, n_boot=0
    )
    records = read_jsonl(out / "tone.jsonl")
    assert summary["jury"]["combines"] == "score"
    for record in records:  # tone is 1..5: (s - 1) / 4
        assert record["status"] == "ok" and record["score"] == 0.75
        assert record["panel"]["spread"]["min"] == 0.25
        assert record["panel"]["spread"]["max"] == 1.0
        assert record["panel"]["outcome"] == "no_majority" and record["label"] is None


def test_a_fatal_juror_error_stops_the_run_and_a_bad_input_sends_nothing(
    tmp_path: Path, server_factory: Make, truth: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    servers = start_jurors(server_factory, correlated(truth), NAMES)
    cases = write_cases(tmp_path / "cases.jsonl", truth)
    bad = tmp_path / "bad.jsonl"
    lines = cases.read_text("utf-8").splitlines()
    bad.write_text("\n".join([*lines[:3], lines[1]]) + "\n", "utf-8")  # a duplicate id
    jury = write_jury(tmp_path / "jury.yaml", servers)
    assert grade(tmp_path, jury, bad, tmp_path / "bad-out") == 2
    assert sum(s.stats.requests for s in servers.values()) == 0
    assert not (tmp_path / "bad-out" / "jurors").exists()

    locked = server_factory(api_key="sk-other", model="juror-d-2024-01-01")
    jury = write_jury(tmp_path / "fatal.yaml", {"a": servers["a"], "d": locked})
    assert grade(tmp_path, jury, cases, tmp_path / "fatal") == 1
    assert locked.stats.requests_by_path["/v1/chat/completions"] >= 1  # refused: 401
    assert not (tmp_path / "fatal" / "policy.jsonl").exists()
    said = f"juror 'd' (juror-d-2024-01-01, base_url {locked.base_url}, api_key_env $JUROR_KEY)"
    assert f"{said}: HTTP 401" in capsys.readouterr().err


def test_a_juror_changed_between_runs_is_refused_before_any_juror_is_asked(
    tmp_path: Path, server_factory: Make, truth: dict[str, str]
) -> None:
    servers = start_jurors(server_factory, correlated(truth), NAMES)
    cases, out = write_cases(tmp_path / "cases.jsonl", truth), tmp_path / "out"
    assert grade(tmp_path, write_jury(tmp_path / "jury.yaml", servers), cases, out) == 0
    for server in servers.values():
        server.reset_stats()
    spec = yaml.safe_load((tmp_path / "jury.yaml").read_text("utf-8"))
    spec["jurors"][2]["sampling"] = {"temperature": 0.7, "seed": 1}  # c is another judge now
    (tmp_path / "changed.yaml").write_text(yaml.safe_dump(spec), "utf-8")
    (out / "jurors" / "a.jsonl").unlink()  # a has every case to grade again
    assert grade(tmp_path, tmp_path / "changed.yaml", cases, out) == 2
    assert sum(s.stats.requests for s in servers.values()) == 0
