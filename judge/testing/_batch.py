"""OpenAI's Files and Batch endpoints for the test server (`judge.testing.server`), in memory.

Every request line of a batch runs through the server's own chat handler, so scripted
replies, the responder and the fault plan apply to batches as they do online.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from judge.testing._http import DROP_HEADER as _DROP_HEADER
from judge.testing._http import error_body, error_response

if TYPE_CHECKING:
    from judge.testing.server import FakeOpenAIServer


class BatchAPI:
    """OpenAI's Files and Batch endpoints, in memory.

    A batch goes validating -> in_progress -> finalizing -> completed and then has an output
    file (the status-200 lines, in the order they finished) and an error file (the rest).
    A bad input file fails the batch at validation with `errors`. `hold = True` keeps batches
    in_progress until it is set back to False; `expire_after = N` runs N requests and then
    expires the batch, the others getting `batch_expired` error lines, as OpenAI does;
    `POST /v1/batches/{id}/cancel` stops a batch the same way (`batch_cancelled`).
    """

    def __init__(self, server: FakeOpenAIServer, concurrency: int = 8) -> None:
        self.server = server
        self.concurrency = concurrency
        self.hold = False
        self.expire_after: int | None = None
        self.files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self._numbers: Counter[str] = Counter()
        self._tasks: set[asyncio.Task[None]] = set()

    def routes(self) -> list[Route]:
        return [
            Route("/v1/files", self._upload, methods=["POST"]),
            Route("/v1/files/{file_id}", self._file, methods=["GET"]),
            Route("/v1/files/{file_id}/content", self._content, methods=["GET"]),
            Route("/v1/batches", self._create, methods=["POST"]),
            Route("/v1/batches/{batch_id}", self._get, methods=["GET"]),
            Route("/v1/batches/{batch_id}/cancel", self._cancel, methods=["POST"]),
        ]

    def file_text(self, file_id: str) -> str:
        """A stored file's content (tests read output files with it)."""
        return self.files[file_id][1].decode("utf-8")

    def _next_id(self, prefix: str) -> str:
        self._numbers[prefix] += 1
        return f"{prefix}-test-{self._numbers[prefix]}"

    def _store(self, content: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = self._next_id("file")
        meta: dict[str, Any] = {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }
        self.files[file_id] = (meta, content)
        return meta

    def _refused(self, request: Request) -> Response | None:
        self.server._count_path(request)
        key = self.server.api_key
        if key is not None and request.headers.get("authorization", "") != f"Bearer {key}":
            return error_response(401, "Incorrect API key provided", "invalid_api_key")
        return None

    async def _upload(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        fields = parse_multipart(request.headers.get("content-type", ""), await request.body())
        purpose = fields.get("purpose", (None, b""))[1].decode()
        filename, content = fields.get("file", (None, b""))
        if purpose != "batch" or "file" not in fields:
            return error_response(
                400, "expected a file with purpose=batch", "invalid_request_error"
            )
        return JSONResponse(self._store(content, filename or "upload.jsonl", purpose))

    async def _file(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        stored = self.files.get(request.path_params["file_id"])
        if stored is None:
            return error_response(404, "No such file", "invalid_request_error")
        return JSONResponse(stored[0])

    async def _content(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        stored = self.files.get(request.path_params["file_id"])
        if stored is None:
            return error_response(404, "No such file", "invalid_request_error")
        return Response(stored[1], media_type="application/octet-stream")

    async def _create(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        try:
            body = json.loads(await request.body())
        except ValueError:
            return error_response(400, "the body is not valid JSON", "invalid_request_error")
        if body.get("input_file_id") not in self.files:
            return error_response(404, "No such input file", "invalid_request_error")
        if body.get("endpoint") != "/v1/chat/completions":
            return error_response(400, "unsupported endpoint", "invalid_request_error")
        now = int(time.time())
        batch: dict[str, Any] = {
            "id": self._next_id("batch"),
            "object": "batch",
            "endpoint": body["endpoint"],
            "errors": None,
            "input_file_id": body["input_file_id"],
            "completion_window": body.get("completion_window") or "24h",
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": now,
            "expires_at": now + 86400,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
        }
        self.batches[batch["id"]] = batch
        task = asyncio.ensure_future(self._run(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return JSONResponse(dict(batch))

    async def _get(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        batch = self.batches.get(request.path_params["batch_id"])
        if batch is None:
            return error_response(404, "No such batch", "invalid_request_error")
        return JSONResponse(dict(batch))

    async def _cancel(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        batch = self.batches.get(request.path_params["batch_id"])
        if batch is None:
            return error_response(404, "No such batch", "invalid_request_error")
        if batch["status"] in ("validating", "in_progress"):
            batch.update(status="cancelling", cancelling_at=int(time.time()))
        return JSONResponse(dict(batch))

    # ---- running a batch ---------------------------------------------------------------

    async def _run(self, batch: dict[str, Any]) -> None:
        try:
            await self._process(batch)
        except Exception as exc:  # a bug here must show as a failed batch, not a hang
            batch.update(status="failed", failed_at=int(time.time()))
            batch["errors"] = {"object": "list", "data": [{"code": "server", "message": str(exc)}]}

    async def _process(self, batch: dict[str, Any]) -> None:
        lines, problems = self._validate(self.files[batch["input_file_id"]][1])
        if problems:
            batch.update(status="failed", failed_at=int(time.time()))
            batch["errors"] = {"object": "list", "data": problems}
            return
        batch["request_counts"]["total"] = len(lines)
        if batch["status"] == "validating":
            batch.update(status="in_progress", in_progress_at=int(time.time()))
        while self.hold and batch["status"] == "in_progress" and not self.server._closing:
            await asyncio.sleep(0.01)
        outputs: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        started = [0]
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(line: dict[str, Any]) -> None:
            async with semaphore:
                stop = self._stop_code(batch, started[0])
                if stop is not None:
                    errors.append(self._line(line, None, {"code": stop, "message": _STOPS[stop]}))
                    return
                started[0] += 1
                status, body = await self._call_chat(line["body"])
                (outputs if status == 200 else errors).append(self._line(line, (status, body)))
                batch["request_counts"]["completed" if status == 200 else "failed"] += 1

        await asyncio.gather(*(one(line) for line in lines))
        self._finish(batch, outputs, errors)

    def _stop_code(self, batch: dict[str, Any], started: int) -> str | None:
        if batch["status"] == "cancelling":
            return "batch_cancelled"
        if self.expire_after is not None and started >= self.expire_after:
            return "batch_expired"
        return None

    def _finish(
        self, batch: dict[str, Any], outputs: list[dict[str, Any]], errors: list[dict[str, Any]]
    ) -> None:
        cancelled = batch["status"] == "cancelling"
        expired = any(e["error"] and e["error"]["code"] == "batch_expired" for e in errors)
        batch.update(status="finalizing", finalizing_at=int(time.time()))
        for key, rows, purpose in (
            ("output_file_id", outputs, "batch_output"),
            ("error_file_id", errors, "batch_error"),
        ):
            if rows:
                content = "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")
                name = f"{batch['id']}_{purpose}.jsonl"
                batch[key] = self._store(content, name, purpose)["id"]
        now = int(time.time())
        if cancelled:
            batch.update(status="cancelled", cancelled_at=now)
        elif expired:
            batch.update(status="expired", expired_at=now)
        else:
            batch.update(status="completed", completed_at=now)

    def _validate(self, content: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        lines: list[dict[str, Any]] = []
        problems: list[dict[str, Any]] = []
        seen: set[str] = set()
        for number, raw in enumerate(content.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                line = None
            if not (
                isinstance(line, dict)
                and isinstance(line.get("custom_id"), str)
                and line.get("method") == "POST"
                and line.get("url") == "/v1/chat/completions"
                and isinstance(line.get("body"), dict)
            ):
                problems.append({"code": "invalid_request", "message": "bad line", "line": number})
            elif line["custom_id"] in seen:
                problems.append(
                    {"code": "duplicate_custom_id", "message": "custom_id reused", "line": number}
                )
            else:
                seen.add(line["custom_id"])
                lines.append(line)
        if not lines and not problems:
            problems.append({"code": "empty_file", "message": "the input file is empty"})
        return lines, problems

    def _line(
        self,
        line: dict[str, Any],
        response: tuple[int, Any] | None,
        error: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self._next_id("batch_req"), "custom_id": line["custom_id"]}
        out["response"] = None
        if response is not None:
            status, body = response
            request_id = self._next_id("req")
            out["response"] = {"status_code": status, "request_id": request_id, "body": body}
        out["error"] = error
        return out

    async def _call_chat(self, body: dict[str, Any]) -> tuple[int, Any]:
        """One request line through the server's own chat handler, in-process."""
        raw = json.dumps(body).encode("utf-8")
        headers = [(b"content-type", b"application/json")]
        if self.server.api_key is not None:
            headers.append((b"authorization", f"Bearer {self.server.api_key}".encode()))
        scope = {
            "type": "http",
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/v1/chat/completions",
            "raw_path": b"/v1/chat/completions",
            "root_path": "",
            "query_string": b"",
            "headers": headers,
            "server": (self.server.host, self.server.port),
            "client": ("127.0.0.1", 0),
        }
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                return {"type": "http.disconnect"}
            delivered = True
            return {"type": "http.request", "body": raw, "more_body": False}

        response = await self.server._chat(Request(scope, receive))
        if _DROP_HEADER in response.headers:
            return 500, error_body("the connection dropped", "server_error")
        return response.status_code, json.loads(bytes(response.body))


_STOPS = {
    "batch_expired": "This request could not be executed before the completion window expired.",
    "batch_cancelled": "This request was not executed because the batch was cancelled.",
}


def parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """Form fields of a multipart/form-data body: name -> (filename, bytes)."""
    import email  # only here: the rest of the server has no use for it

    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.message_from_bytes(head + body)
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in message.get_payload() if message.is_multipart() else []:
        if isinstance(part, str):
            continue
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str):
            fields[name] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    return fields


# ---- end of batch API --------------------------------------------------------------------
