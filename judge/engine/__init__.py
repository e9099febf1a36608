"""The grading engine: one rubric over many cases.

`grader` runs the loop (cache, bounded concurrency, input order, per-case isolation);
`files` grades a whole file (validate, resume, stream records out, summarise); `inputs`
reads cases, `records` the records file, `summary` the summary, `cache` the verdict cache,
`identity` who judged. The two judges are `rules` (offline) and `model` (an endpoint, via
`judge.client`), both behind the `outcome.Backend` protocol; `parse` reads a model's reply;
`gates` decides a run's exit code; `pricing` its cost.
"""
