"""Engine tests: the grader, files, records, probes, gates and the CLI in-process, with the
offline rules judge, a fake backend or a mock of the SDK's transport standing in for the endpoint."""
