"""End-to-end tests: real HTTP on loopback (the OpenAI-compatible test server, the grading
service, the labelling app), subprocesses killed and resumed, the browser."""
