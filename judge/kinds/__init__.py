"""The rubric kinds, one module each, and the registry the engine asks.

Adding a kind is one module (a `Kind` subclass), its rubric YAML and one golden test:
register it here. Nothing outside this package tests a kind's name.
"""

from __future__ import annotations

from typing import Any

from judge.errors import RubricError
from judge.kinds._base import Abstain, Choice, Kind, KindStats, Scored, VerdictModel
from judge.kinds._confidence import LabelSite
from judge.kinds.citations import CitationsKind
from judge.kinds.context_relevance import ContextRelevanceKind
from judge.kinds.conversation_faithfulness import ConversationFaithfulnessKind
from judge.kinds.conversation_pairwise import ConversationPairwiseKind
from judge.kinds.correctness import CorrectnessKind
from judge.kinds.criteria import CriteriaKind
from judge.kinds.faithfulness import FaithfulnessKind
from judge.kinds.knowledge_retention import KnowledgeRetentionKind
from judge.kinds.labels import LabelsKind
from judge.kinds.pairwise import PairwiseKind
from judge.kinds.relevance import RelevanceKind
from judge.kinds.retrieval import RetrievalKind
from judge.kinds.role_adherence import RoleAdherenceKind
from judge.kinds.scale import ScaleKind
from judge.kinds.task_completion import TaskCompletionKind
from judge.kinds.tool_arguments import ToolArgumentsKind
from judge.kinds.trajectory import TrajectoryKind
from judge.kinds.turn_relevancy import TurnRelevancyKind

__all__ = [
    "Abstain",
    "Choice",
    "Kind",
    "KindStats",
    "LabelSite",
    "Scored",
    "VerdictModel",
    "get_kind",
    "kind_for_request",
    "kind_for_schema",
    "kind_names",
    "register",
]

_REGISTRY: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Make `kind` available to rubric files under `kind.name`."""
    if kind.name in _REGISTRY:
        raise ValueError(f"kind {kind.name!r} is registered already")
    _REGISTRY[kind.name] = kind
    return kind


def get_kind(name: str) -> Kind:
    """The registered kind called `name`; RubricError naming the known ones otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise RubricError(f"unknown kind {name!r} (known: {', '.join(kind_names())})") from None


def kind_names() -> list[str]:
    return sorted(_REGISTRY)


def kind_for_schema(schema_name: str | None) -> Kind | None:
    """The kind whose verdicts carry this schema name by default, if any."""
    return next((k for k in _REGISTRY.values() if k.verdict_name == schema_name), None)


def kind_for_request(fields: set[str], payload: dict[str, Any]) -> Kind | None:
    """The first kind that recognises a request's verdict fields and payload (a guess,
    for the loopback test server when no schema name is sent)."""
    return next((k for k in _REGISTRY.values() if k.recognises(fields, payload)), None)


# Order matters only to `kind_for_request`, the test server's guess for a request that names
# no schema: the conversation and RAG kinds recognise their own payloads, so they are asked
# first.
for _kind in (
    ConversationPairwiseKind(),
    TaskCompletionKind(),
    ConversationFaithfulnessKind(),
    TurnRelevancyKind(),
    KnowledgeRetentionKind(),
    RoleAdherenceKind(),
    CitationsKind(),
    ContextRelevanceKind(),
    CorrectnessKind(),
    RetrievalKind(),
    FaithfulnessKind(),
    RelevanceKind(),
    PairwiseKind(),
    ScaleKind(),
    LabelsKind(),
    CriteriaKind(),
    TrajectoryKind(),
    ToolArgumentsKind(),
):
    register(_kind)
