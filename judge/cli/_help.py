"""What the `judge` command says to its users: the description, and each subcommand's
examples (argparse epilogs, laid out as written with RawDescriptionHelpFormatter).

Plain text only, so building any parser costs no import. Examples use the bundled files in
examples/ where they can (run them from the repository root); other file names and batch
ids stand for the user's own.
"""

from __future__ import annotations

DESCRIPTION = """\
Grade RAG answers with a pinned LLM judge and versioned rubrics, audit the judge for bias,
and check it against human labels before it gates a release. With no model configured the
offline rules judge grades, deterministically and with no network."""

EPILOG = """\
examples:
  judge grade examples/cases.jsonl --rubric faithfulness -o graded.jsonl --summary summary.json
  judge grade cases.jsonl --rubric faithfulness -o graded.jsonl --model gpt-4o-2024-08-06
  judge rubrics
  judge probe position examples/pairs.jsonl --rubric pairwise -o probes/position.json
  judge calibrate graded.jsonl examples/human_labels.csv -o calibration-report
  judge serve --port 8080

A model judge is any OpenAI-compatible endpoint: --model/--base-url, or $JUDGE_MODEL,
$OPENAI_BASE_URL and $OPENAI_API_KEY (read once, never written anywhere).
Exit codes: 0 done, 1 the run failed (a crash, a fatal judge error, too many failed
cases), 2 bad input or usage, 3 a gate you asked for failed (judge drift: the alarm),
4 too few labels to tell (judge drift).
`judge COMMAND --help` gives a command's options and examples.
"""


GRADE_EXAMPLES = """\
examples:
  judge grade examples/cases.jsonl --rubric faithfulness -o graded.jsonl --summary summary.json
  judge grade examples/pairs.jsonl --rubric pairwise -o pairs.graded.jsonl
  judge grade cases.jsonl --rubric faithfulness@1 -o graded.jsonl \\
      --model gpt-4o-2024-08-06 --concurrency 32          # needs OPENAI_API_KEY
  judge grade cases.jsonl --rubric relevance --limit 20 -o first20.jsonl
  judge grade examples/rag/cases.jsonl --rubric retrieval,context_relevance,faithfulness \\
      -o rag-graded/ --summary rag-graded/summary.json --fail-if 'faithfulness.mean_score < 0.5'
                                      one pass: rag-graded/<rubric>.jsonl each, one summary
                                      and the retrieval x generation two-by-two
  judge grade answers.jsonl --rubric faithfulness --model gpt-4o-2024-08-06 --batch-api -o graded.jsonl

Running the same command again resumes: records already done are kept.
With several rubrics, a retrieval and a generation rubric add the two-by-two diagnosis
(--retrieval-threshold/--generation-threshold move its thresholds); a --fail-if name
without a rubric prefix gates every rubric that has it.
With no --model (and no $JUDGE_MODEL) the offline rules judge grades, with no network.
"""


LABEL_EXAMPLES = """\
examples:
  judge label examples/cases.jsonl --rubric faithfulness --annotator ana
                                       open the printed URL; keys 1-9 label, S skip, U undo (a label or skip)
  judge label examples/cases.jsonl --rubric faithfulness --records graded.jsonl --sample 20
                                       a stratified sample over the judge's labels (still blind)
  judge label export --db cases.faithfulness.labels.sqlite -o labels.csv
                                       the CSV judge calibrate reads (id,label,annotator,...)
"""

GATE_EXAMPLES = """\
examples:
  judge gate --baseline old.graded.jsonl --candidate new.graded.jsonl --labels anchor.csv
                                       exit 3 if the candidate is significantly worse
  judge gate --baseline old.jsonl --candidate new.jsonl --labels anchor.csv \\
      --min-kappa 0.6 --max-drop 0.05 --json gate.json --markdown gate.md
"""

DRIFT_EXAMPLES = """\
examples:
  judge drift runs/week-*.graded.jsonl --labels labels.csv --window 100
                                       exit 3 when agreement drops, 0 when it holds
  judge drift watched/faithfulness.jsonl --labels labels.csv --by week \\
      --reference calibration/calibration.json --html drift.html
"""

CERTIFY_EXAMPLES = """\
examples:
  judge certify cheap.graded.jsonl --labels labels.csv --agreement 0.9
                                       a certified confidence threshold for one judge
  judge certify cheap.graded.jsonl strong.graded.jsonl --labels labels.csv \\
      --agreement 0.9 --delta 0.1 -o cert.json --html certify.html
                                       a cascade: cheap first, strong next, people last
"""

COMPARE_EXAMPLES = """\
examples:
  judge grade examples/rag/cases.jsonl --rubric retrieval,faithfulness,correctness -o runs/baseline/
  judge grade examples/rag/reranked.jsonl --rubric retrieval,faithfulness,correctness -o runs/reranked/
  judge compare runs/baseline/ runs/reranked/ --metric '*.score' --json compare.json
                                       B against A per metric; Markdown on stdout
  judge compare runs/baseline/ runs/reranked/ --html compare.html
                                       the table, then the cases that regressed and
                                       improved, their two records side by side
  judge compare runs/a/ runs/b/ runs/c/ --fail-if 'significant_lower > 0'
                                       exit 3 if B or C is significantly lower on a metric
  judge compare old.graded.jsonl new.graded.jsonl --fail-if 'faithfulness.score.diff < -0.05'

Metrics: RUBRIC.score for every rubric, and each kind's own per-case figures
(retrieval.mrr, correctness.recall, a criteria rubric's RUBRIC.criteria.NAME, ...).
Cases are paired by id; ids on one side only are counted and listed, never dropped
silently. p is an exact two-sided sign test (ties left out); "significant" is after
Holm's correction over every test of the command (--metric keeps fewer).
Gate names: METRIC.diff, .ci95_low, .ci95_high, .p_value, .p_adjusted, .a, .b, and the
counts significant, significant_higher, significant_lower.
"""

ALIGN_EXAMPLES = """\
examples:
  judge grade examples/cases.jsonl --rubric faithfulness -o graded.jsonl
  judge align --rubric faithfulness --labels examples/human_labels.csv --records graded.jsonl \\
      --cases examples/cases.jsonl --split test=0.3 --seed 0 --rubrics-dir my-rubrics
                    writes my-rubrics/faithfulness-aligned/v1.yaml (not locked) with up to 4
                    examples from the dev split, the test split's labels to
                    human_labels.test.jsonl, and prints the judge grade + judge gate
                    commands that decide whether to adopt it
  judge align --rubric tone@2 --labels tone-labels.csv --records tone.jsonl \\
      --cases cases.jsonl --dev-ids report/calibration.json --rubrics-dir my-rubrics
                    a user rubric gets its next version (tone v3) in its own folder; the
                    dev ids come from `judge calibrate --split` (its split.dev_ids)
"""

RUBRICS_EXAMPLES = """\
examples:
  judge rubrics                        id, version, kind and short sha256 of every rubric
  judge rubrics show faithfulness@1    the rubric file itself, with its full sha256
  judge rubrics verify                 exit 2 if a released file differs from rubrics.lock
"""


PROBE_EXAMPLES = """\
examples:
  judge probe position examples/pairs.jsonl --rubric pairwise -o probes/position.json
  judge probe verbosity examples/cases.jsonl --rubric faithfulness -o probes/verbosity.json
  judge probe repeat examples/cases.jsonl --rubric relevance --repeats 5 -o probes/repeat.json
  judge probe injection examples/cases.jsonl --rubric faithfulness --max-flip-rate 0
  judge probe position examples/pairs.jsonl --rubric pairwise --fail-if 'consistency_rate < 0.9'
  judge probe position --verdicts tests/data/calibration/llmbar-natural-chatgpt/verdicts.jsonl \\
      --fail-if-biased --tolerance 0.05 -o probes/chatgpt.json
"""


CALIBRATE_EXAMPLES = """\
examples:
  judge calibrate graded.jsonl examples/human_labels.csv -o calibration-report
  judge calibrate relevance.jsonl human.csv --weights quadratic -o report
  judge calibrate judge.csv human.csv --judge-field score --human-field score \\
      --group-field dialogue -o report
  judge calibrate --plan --kappa 0.6 --width 0.2 --prevalence 0.3

Writes REPORT_DIR/calibration.json, report.md and confusion.png. Readiness is read from
the kappa interval's lower bound: below 0.4 not_ready, 0.4-0.6 rough_signal, above gate_ready.
"""


BATCH_EXAMPLES = """\
examples:
  judge batch status batch_abc123                   one batch
  judge batch status batch_abc123 -o graded.jsonl   every batch of that run
  judge batch fetch batch_abc123 -o graded.jsonl    wait, download, write the records

A run started with `judge grade ... --batch-api -o graded.jsonl` keeps its batch ids and
settings in graded.jsonl.batch.json, so fetch can finish it from any process.
"""


SERVE_EXAMPLES = """\
examples:
  judge serve                         http://127.0.0.1:8080, offline rules judge, jobs in ./judge-service
  judge serve --config service.yaml --host 0.0.0.0 --port 8080
  JUDGE_SERVICE_TOKEN=... judge serve --host 0.0.0.0      off loopback a bearer token is required
  judge serve --database postgresql://judge@db/judge --data-dir ./replica-a
                                      jobs in PostgreSQL: run as many replicas as you like

The configuration names the judges clients may pick; endpoints and keys stay on the server.
"""


def __getattr__(name: str) -> object:
    """`FAIL_IF_METRICS` lives with the probe job (judge.app.probe), loaded when asked."""
    if name == "FAIL_IF_METRICS":
        from judge.app.probe import FAIL_IF_METRICS

        return FAIL_IF_METRICS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
