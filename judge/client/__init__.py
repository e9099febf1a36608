"""The only package that talks HTTP to a judge endpoint, with the `openai` SDK's types and
errors (chat requests straight on aiohttp where it is installed): chat completions
(`ChatClient`), the model list (`served_models`) and the Batch API's control
plane (`BatchClient`). One retry policy and one error translation for all of them
(`judge.client._retry`): SDK exceptions become `judge.errors` types here and nowhere else.
"""

from judge.client._batches import Batch, BatchClient
from judge.client._chat import (
    ChatClient,
    Completion,
    checked_completion,
    completion_from,
    served_models,
)
from judge.client._http import httpx as _httpx
from judge.client._logprobs import TokenLogprob, read_logprobs
from judge.client._retry import RetryWait, call, parse_retry_after, retrying, translate_error

AsyncHttpClient = _httpx.AsyncClient  # what `http_client=` takes: the installed SDK's httpx

__all__ = [
    "AsyncHttpClient",
    "Batch",
    "BatchClient",
    "ChatClient",
    "Completion",
    "RetryWait",
    "TokenLogprob",
    "call",
    "checked_completion",
    "completion_from",
    "parse_retry_after",
    "read_logprobs",
    "retrying",
    "served_models",
    "translate_error",
]
