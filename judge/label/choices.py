"""What a human may answer for a rubric, and what of a case the page shows.

`label_choices` is the one place that knows each rubric kind's label set; a kind registry
can later supply it instead. The names are exactly the `label` values of graded records
(DESIGN.md), plus `abstained` for faithfulness, so `judge calibrate` compares like with like.

Pairwise is special: the page shows the two answers in an order drawn per annotator, so it
offers "first", "second" and "tie"; `to_rubric_label` maps the choice back to the case's
A or B with the order that was shown.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any, Literal

from judge.errors import UsageError
from judge.rubric import Rubric
from judge.schemas import Case

Order = Literal["ab", "ba"]
# a conversation case's parts the page shows when the rubric reads them
CONVERSATION_VIEW = ("messages", "messages_a", "messages_b", "expected_tool_calls", "goal")
CONVERSATION_VIEW_SET = frozenset(CONVERSATION_VIEW)


@dataclass(frozen=True)
class Choice:
    """One label the annotator can give: its name, what it means and its key."""

    name: str
    description: str
    key: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


_FAITHFULNESS = [
    ("faithful", "Every claim in the answer is stated or directly implied by the contexts."),
    ("unfaithful", "At least one claim is contradicted by the contexts or not backed by them."),
    ("abstained", "The answer only declines or says it does not know: it makes no claim."),
]
_RELEVANCE = [
    ("1", "Off-topic or empty."),
    ("2", "On the topic but does not answer the question."),
    ("3", "Answers part of it, or buries the answer in off-topic text."),
    ("4", "Answers it, with a small gap or some needless detail."),
    ("5", "Answers the question fully and directly, nothing off-topic."),
]
_PAIRWISE_SHOWN = [
    ("first", "The answer shown first is better."),
    ("second", "The answer shown second is better."),
    ("tie", "Neither answer is better than the other."),
]


_TABLE = {"faithfulness": _FAITHFULNESS, "relevance": _RELEVANCE, "pairwise": _PAIRWISE_SHOWN}
LABELLED_KINDS = tuple(_TABLE)
MAX_CHOICES = 9  # one digit key each


def label_choices(rubric: Rubric) -> list[Choice]:
    """The labels a human may give for `rubric`, each with a digit key (1, 2, ...);
    UsageError for a kind the labelling page has no label set for."""
    table = _PAIRWISE_SHOWN if is_pairwise(rubric) else _TABLE.get(rubric.kind)
    if table is None and CONVERSATION_VIEW_SET & set(rubric.inputs):
        # a conversation rubric: the labels its kind names (trajectory's match/mismatch,
        # task_completion's three, a `labels` or `scale` rubric's own), judged from the
        # transcript the page shows
        table = [(c.name, c.description) for c in rubric.behaviour.choices(rubric)] or None
    if table is None or len(table) > MAX_CHOICES:
        raise UsageError(
            f"judge label has no label set for rubric {rubric.ref} (kind {rubric.kind}); it "
            f"labels the kinds {', '.join(LABELLED_KINDS)} and conversation rubrics whose "
            f"kind names up to {MAX_CHOICES} labels. Label other kinds in a CSV (id,label) "
            "that `judge calibrate` reads"
        )
    return [Choice(name, text, str(i)) for i, (name, text) in enumerate(table, 1)]


def is_pairwise(rubric: Rubric) -> bool:
    """Two answers (or two conversations) shown in an order drawn per annotator."""
    inputs = set(rubric.inputs)
    return {"answer_a", "answer_b"} <= inputs or {"messages_a", "messages_b"} <= inputs


def shown_order(seed: int, annotator: str, case_id: str) -> Order:
    """The order of a pair's answers for one annotator: a fair coin from sha256, so it is
    the same on every reload and restart and independent of Python's hash seed."""
    digest = hashlib.sha256(f"{seed}\x00{annotator}\x00{case_id}\x00order".encode()).digest()
    return "ba" if digest[0] & 1 else "ab"


def to_rubric_label(rubric: Rubric, choice: str, order: Order | None) -> str:
    """The record-style label for a choice made on the page (pairwise: back to A/B)."""
    if not is_pairwise(rubric) or choice == "tie":
        return choice
    first, second = ("A", "B") if order == "ab" else ("B", "A")
    return first if choice == "first" else second


def case_view(rubric: Rubric, case: Case) -> dict[str, Any]:
    """The parts of a case the rubric judges, and nothing else (no metadata, no reference
    unless the rubric uses it): what a human needs to give the same judgement."""
    view: dict[str, Any] = {"question": case.question}
    wanted = set(rubric.inputs) | ({"contexts"} if is_pairwise(rubric) else set())
    for name in ("contexts", "reference", "answer", "answer_a", "answer_b"):
        if name in wanted and getattr(case, name):
            view[name] = getattr(case, name)
    # an empty list of expected calls says "no call expected": shown, not dropped
    shown = [n for n in CONVERSATION_VIEW if n in wanted and getattr(case, n) is not None]
    if shown:  # a conversation: the transcript as the judge reads it (plain JSON)
        payload = rubric.payload(case)
        view.update({name: payload[name] for name in shown if name in payload})
    return view


def shown_answers(view: dict[str, Any], order: Order | None) -> list[str]:
    """The answers in the order the page shows them."""
    if "answer_a" not in view:
        return [view.get("answer") or ""]
    pair = [view["answer_a"], view.get("answer_b") or ""]
    return pair if order == "ab" else pair[::-1]
