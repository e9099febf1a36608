"""Speed, cost and scale harness: `python -m benchmarks [--quick]` (see benchmarks/run.py)."""
