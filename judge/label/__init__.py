"""Blind human labelling in the browser (`judge label`) and its CSV export.

Roles: `choices` (a rubric's label set and what of a case is shown), `sampling` (which
cases, with inclusion probabilities), `store` (SQLite, every label committed as given),
`queue` (each annotator's next case), `labelset` (create or resume a set), `app` (the
FastAPI page and API), `export` (the CSV for `judge calibrate`), `cli`.
"""

from judge.label.choices import Choice, label_choices
from judge.label.export import export_labels
from judge.label.sampling import Item, allocate, select_items, stratified_sample
from judge.label.store import LabelStore

__all__ = [
    "Choice",
    "Item",
    "LabelStore",
    "allocate",
    "export_labels",
    "label_choices",
    "select_items",
    "stratified_sample",
]
