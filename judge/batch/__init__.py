"""Grading through batch files: `format` writes request files and reads result lines,
`replay` exports requests and imports results through the engine's own grader, `api`
drives the OpenAI Batch API (its HTTP calls are `judge.client.BatchClient`'s), `manifest`
remembers a run so `judge batch fetch` can finish it."""
