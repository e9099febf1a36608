"""The application layer: one module per job (grade, probe, calibrate, compare, gate, align,
label, and the service's job run). Each job takes a typed request and returns a typed result;
it never parses arguments and never prints. The CLI, the Python API, the service and the pytest
plugin all call these functions, so the flow of a job lives here once."""
