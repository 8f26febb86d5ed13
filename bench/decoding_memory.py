"""The decoding page's step-through: peak memory of its decoding, keeping every step's whole trace (as it did)
against keeping only the rows the page draws as each step is captured (model.analysis.decoding.step_rows).
Both in one run, on the shipped model, greedy and beam search, for the 40-word sentence and the longest one the
step-through reads (tests/long_text.py, cut at MAX_STEP_TOKENS).

    python bench/decoding_memory.py

Each measurement runs in its own process: the growth of its peak resident memory (VmHWM) over the decoding,
after the model is loaded (0.0: it stayed under the load's own peak). Beam search at the longest sentence takes minutes on 2 cores: --beam-longest adds it.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from long_text import SENTENCES  # noqa: E402
from model.analysis import decoding  # noqa: E402
from model.analysis.attention_math import log_softmax  # noqa: E402
from model.capture import schema  # noqa: E402
from model.inference.decode import beam_search, greedy  # noqa: E402
from model.inference.pipeline import encode_text  # noqa: E402
from model.io.checkpoint import load_checkpoint  # noqa: E402


def whole_traces(bundle, text: str, method: str, max_tokens: int) -> int:
    """The former way: every step's whole Trace kept until the end, then its rows read. Returns the steps."""
    src = encode_text(bundle, text, max_tokens)
    if method == "greedy":
        best = greedy(bundle.model, src.ids, names=decoding.CAPTURE, return_traces=True)
    else:
        best = beam_search(bundle.model, src.ids, beam_size=4, names=decoding.CAPTURE, return_traces=True)[0]
    n_dec = bundle.config.n_decoder_layers
    rows = [(schema.stacked(tr.arrays, "decoder", layers=range(n_dec))[:, :, -1],
             schema.stacked(tr.arrays, "cross", layers=range(n_dec))[:, :, -1],
             log_softmax(decoding._last_logits(tr.arrays))) for tr in best.step_traces]
    return len(rows)


def rows_kept(bundle, text: str, method: str, max_tokens: int) -> int:
    return decoding.run_decoding(bundle, text, method, 4, max_tokens).n_steps


def peak_mb() -> float:
    """This process's peak resident memory so far (VmHWM), MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


VARIANTS = {"whole": whole_traces, "rows": rows_kept}


def one(variant: str, case: str, method: str) -> None:
    """In a fresh process: load, decode once, print 'growth_mb seconds steps'."""
    bundle = load_checkpoint(ROOT / "pretrained" / "en-es")
    encode_text(bundle, "warm up", 8)
    base = peak_mb()
    started = time.perf_counter()
    steps = VARIANTS[variant](bundle, CASES[case], method, decoding.MAX_STEP_TOKENS)
    print(f"{peak_mb() - base:.1f} {time.perf_counter() - started:.1f} {steps}")


LONGEST = "Today " + " and ".join(["the students in the back row read the long sentence"] * 20) + "."
CASES = {"40 words": SENTENCES["40"], f"{decoding.MAX_STEP_TOKENS} tokens": LONGEST}


def measure(variant: str, case: str, method: str) -> tuple[float, float, int]:
    out = subprocess.run([sys.executable, __file__, "--one", variant, case, method], capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[0]), float(out[1]), int(out[2])


def main(beam_longest: bool) -> None:
    print(f"{'sentence':<12} {'method':<7} {'steps':>5}  {'whole traces MB':>15} {'s':>6}  {'rows kept MB':>12} {'s':>6}"
          f"  {'ratio':>6}")
    for case in CASES:
        for method in ("greedy", "beam"):
            if method == "beam" and case != "40 words" and not beam_longest:
                continue
            before, t_before, steps = measure("whole", case, method)
            after, t_after, steps_after = measure("rows", case, method)
            assert steps == steps_after, (steps, steps_after)
            print(f"{case:<12} {method:<7} {steps:>5}  {before:>15.1f} {t_before:>6.1f}  {after:>12.1f} {t_after:>6.1f}"
                  f"  {before / max(after, 1.0):>5.1f}x", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        one(*sys.argv[2:5])
    else:
        main("--beam-longest" in sys.argv)
