"""Where a run meets calibration: human labels of some graded cases, read and checked
(`human_labels`), the prediction-powered estimates they give the summary (`estimates`),
gates on a finished run (`run_gates`), and the next rubric version written from labelled
disagreements (`aligned_rubric`, `judge align`)."""
