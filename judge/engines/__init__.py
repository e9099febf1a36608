"""Executors that run the grader's per-case work somewhere other than this process.

`judge.engines.ray` (the `ray` extra, `pip install 'llm-judge[ray]'`) maps the grader over a
Ray Dataset: an actor pool of the project's own client against OpenAI-compatible endpoints,
or `ray.data.llm`'s vLLM processor on the cluster's GPUs (`judge.engines._vllm`). Nothing
here imports Ray until one of them is used; importing this package imports nothing.
"""
