"""LLM client figures: local model prompt / generation tokens per second (llama.cpp, Qwen2.5-Coder
GGUF) and the client's own overhead per call (ScriptedLLM), printed with their ratio.

    python benchmarks/bench_llm.py [--quick] [--model qwen2.5-coder-0.5b]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from atlas.infra import local_models
from atlas.infra.llm import ScriptedLLM, make_llm

FILLER = (
    "The agent walked from room_{i} to room_{j}, looked around, saw a key, a torch and a map, "
    "picked up the key and noted the exits. "
)


def scripted_overhead(calls: int) -> float:
    """Seconds per acomplete() through the full client path (no cache), scripted backend."""
    llm = ScriptedLLM(default="ok")
    messages = [{"role": "user", "content": "hello " * 50}]

    async def run() -> float:
        start = time.perf_counter()
        for _ in range(calls):
            await llm.acomplete(messages)
        return (time.perf_counter() - start) / calls

    return asyncio.run(run())


def local_figures(name: str, reps: int, gen_tokens: int) -> dict[str, float]:
    llm = make_llm(f"local:{name}", n_ctx=4096, temperature=0.0, timeout=0)
    t0 = time.perf_counter()
    llm.backend.load()  # type: ignore[attr-defined]
    load_s = time.perf_counter() - t0
    prompt_rates, gen_rates, latencies = [], [], []
    for r in range(reps):
        # A distinct prompt each time so llama.cpp's prefix cache cannot skip the work.
        text = "".join(FILLER.format(i=r * 100 + k, j=r * 100 + k + 1) for k in range(12))
        messages = [{"role": "user", "content": text + "\nSummarize the story in one sentence."}]
        t = time.perf_counter()
        first = llm.complete(messages, max_tokens=1)
        prefill = time.perf_counter() - t
        prompt_rates.append(first.usage.prompt_tokens / prefill)
        messages = [
            {"role": "user", "content": f"Write a long Python module #{r} with ten documented functions."}
        ]
        t = time.perf_counter()
        out = llm.complete(messages, max_tokens=gen_tokens)
        total = time.perf_counter() - t
        t = time.perf_counter()
        llm.complete(
            [
                {
                    "role": "user",
                    "content": f"Write a long Python module #{r + 1000} with ten documented functions.",
                }
            ],
            max_tokens=1,
        )
        short = time.perf_counter() - t
        gen_rates.append((out.usage.completion_tokens - 1) / max(1e-6, total - short))
        latencies.append(total)
    return {
        "load_s": load_s,
        "prompt_tok_s": statistics.median(prompt_rates),
        "gen_tok_s": statistics.median(gen_rates),
        "call_s": statistics.median(latencies),
        "gen_tokens": float(gen_tokens),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and tokens")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", help="local model name")
    args = parser.parse_args()
    reps, gen = (1, 48) if args.quick else (3, 128)

    per_call = scripted_overhead(200 if args.quick else 2000)
    print(f"ScriptedLLM client overhead: {per_call * 1e6:.0f} µs/call")

    t = time.perf_counter()
    verified = local_models.verify(args.model)
    verify_s = time.perf_counter() - t
    if not verified:
        print(f"local model {args.model} not assembled: run `atlas models pull {args.model}`; skipping")
        return
    t = time.perf_counter()
    local_models.is_verified(args.model)
    marker_s = time.perf_counter() - t
    print(f"verify {args.model}: full SHA-256 {verify_s:.2f} s, marker check {marker_s * 1e3:.2f} ms")

    try:
        figures = local_figures(args.model, reps, gen)
    except ImportError:
        print("llama-cpp-python not installed; skipping the local model figures")
        return
    print(f"local {args.model}: load {figures['load_s']:.2f} s")
    print(f"  prompt (prefill): {figures['prompt_tok_s']:.0f} tok/s")
    print(f"  generation:       {figures['gen_tok_s']:.1f} tok/s")
    print(f"  one call ({gen} new tokens): {figures['call_s']:.2f} s")
    print(
        f"  ratio: one local call = {figures['call_s'] / per_call:,.0f}x the client overhead of a scripted call"
    )


if __name__ == "__main__":
    main()
