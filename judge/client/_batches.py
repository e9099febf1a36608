"""The Batch API's control plane (`/v1/files`, `/v1/batches`) through the `openai` SDK,
with the chat client's retry policy and error translation (`judge.client._retry`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from openai.types import Batch

from judge.client._retry import async_sdk, call
from judge.config import JudgeConfig

__all__ = ["Batch", "BatchClient"]


class BatchClient:
    """Upload request files, create and poll batches, download their result files."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self._sdk = async_sdk(config)

    async def aclose(self) -> None:
        await self._sdk.close()

    async def __aenter__(self) -> BatchClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def create(self, path: Path, metadata: dict[str, str]) -> Batch:
        """Upload one request file (purpose `batch`) and create its batch."""

        async def upload() -> Any:
            with path.open("rb") as handle:
                return await self._sdk.files.create(file=(path.name, handle), purpose="batch")

        uploaded = await call(self.config, upload)

        async def create() -> Batch:
            return await self._sdk.batches.create(
                input_file_id=uploaded.id,
                endpoint="/v1/chat/completions",
                completion_window="24h",
                metadata=metadata,
            )

        return await call(self.config, create)

    async def retrieve(self, batch_ids: Sequence[str]) -> list[Batch]:
        return [await call(self.config, partial(self._sdk.batches.retrieve, i)) for i in batch_ids]

    async def download(self, file_id: str, path: Path) -> None:
        """Stream a file's content to `path` (through a `.part` file, renamed when whole)."""
        await call(self.config, partial(self._download, file_id, path))

    async def _download(self, file_id: str, path: Path) -> None:
        tmp = path.with_name(path.name + ".part")
        async with self._sdk.files.with_streaming_response.content(file_id) as response:
            with tmp.open("wb") as handle:
                async for chunk in response.iter_bytes():
                    handle.write(chunk)
        os.replace(tmp, path)
