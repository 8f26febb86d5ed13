"""Shared by the benchmarks: machine facts, statistics, tables, the benchmark model, docs/performance.md.

Every benchmark script has `main(argv) -> Section`; run on its own it prints its table and, with
--write, replaces its own part of docs/performance.md. bench/run_all.py runs them all and rewrites
the whole file.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):  # model/, viz/ and tests/browser_utils.py
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from model import runtime  # noqa: E402

TORCH_ENV = runtime.configure()  # as app.py does, before torch loads

DOC = ROOT / "docs" / "performance.md"
DEPLOY_DOC = ROOT / "docs" / "deploy.md"
EN_ES = ROOT / "pretrained" / "en-es"
BENCH_MODEL_ID = "bench-en-es-arch"
# The en-es architecture (model/train.py's translation defaults), used with random weights when the
# trained en-es checkpoint is not there yet: the cost of a forward pass depends on shapes, not values.
EN_ES_ARCH = dict(vocab_size=8000, d_model=256, n_heads=8, n_encoder_layers=3, n_decoder_layers=3, d_ff=1024,
                  dropout=0.0, max_len=512)


# -- results --------------------------------------------------------------------------------------
@dataclass
class Check:
    target: str          # "capture off <= 1.1x torch.nn.Transformer at 256 tokens"
    measured: str        # "1.04x"
    ok: bool | None      # None: informational, no target


@dataclass
class Section:
    name: str            # marker in docs/performance.md
    title: str
    body: str            # markdown: tables and notes
    checks: list[Check] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"<!-- bench:{self.name} -->", f"## {self.title}", "", self.body.strip(), ""]
        if self.checks:
            lines += [table(["target", "measured", "met"], [[c.target, c.measured, verdict(c.ok)] for c in self.checks]), ""]
        lines.append(f"<!-- /bench:{self.name} -->")
        return "\n".join(lines)


def verdict(ok: bool | None) -> str:
    return "—" if ok is None else ("yes" if ok else "**NO**")


# -- machine and statistics ---------------------------------------------------------------------
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict:
    import torch
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "nproc": os.cpu_count(),
        "cpu": cpu_model(),
        "load": f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
    }


def machine_line(when: str) -> str:
    """Date, machine, software and load average; `when` says at which point of the run it was read."""
    m = machine()
    return (f"{m['date']}; {m['nproc']} CPUs ({m['cpu']}); Python {m['python']}, torch {m['torch']}; "
            + ", ".join(f"{k}={v}" for k, v in TORCH_ENV.items())
            + f"; load average {m['load']} (1/5/15 min) {when}")


def median(values) -> float:
    return statistics.median(values)


def percentile(values, q: float) -> float:
    """Nearest-rank percentile (q in 0..100): an observed value, no interpolation."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


def secs(seconds: float) -> str:
    return f"{seconds:.2f} s"


def mb(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:.1f} MiB"


def table(headers: list[str], rows: list[list]) -> str:
    """A markdown table, readable as plain text in a terminal too."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    fmt = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    return "\n".join([fmt(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [fmt(r) for r in cells[1:]])


# -- docs/performance.md ------------------------------------------------------------------------
HEADER = """# Performance, load and memory

Measured by `python bench/run_all.py` (each `bench/*.py` also runs alone; `--quick` is a smoke run
with fewer repeats and sizes, whose numbers are not meant to be quoted). Medians and ratios in a
table come from the same run, interleaved, so a busy machine slows both sides of a ratio alike.

What was slow, why, and what changed (with before/after numbers): [performance-fixes.md](performance-fixes.md).

Last full rewrite: {machine}.
"""


GLANCE_HEADERS = ["benchmark", "target", "measured", "met"]
RERUN_PREFIX = "Rerun alone since then:"


def glance_rows(section: Section) -> list[list[str]]:
    return [[section.title, c.target, c.measured, verdict(c.ok)] for c in section.checks if c.ok is not None]


def replace_block(text: str, section: Section) -> str:
    """`text` with the block between this section's <!-- bench:NAME --> markers replaced (appended if new)."""
    block = section.markdown()
    pattern = re.compile(rf"<!-- bench:{re.escape(section.name)} -->.*?<!-- /bench:{re.escape(section.name)} -->",
                         re.S)
    return pattern.sub(lambda _m: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block + "\n"


def write_deploy_section(section: Section) -> None:
    """Replace this section's block in docs/deploy.md (bench/load_deploy.py, bench/faults.py)."""
    DEPLOY_DOC.write_text(replace_block(DEPLOY_DOC.read_text(encoding="utf-8"), section), encoding="utf-8")


def write_section(section: Section) -> None:
    """Replace this section's block in docs/performance.md (append it if new), its rows of the targets
    at a glance, and note the time it was rerun alone."""
    text = DOC.read_text(encoding="utf-8") if DOC.is_file() else HEADER.format(machine=machine_line("after this benchmark"))
    text = replace_block(text, section)
    text = _refresh_glance(text, section)
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")


def _refresh_glance(text: str, section: Section) -> str:
    """The targets-at-a-glance table with this section's rows replaced in place, and the rerun note."""
    match = re.search(r"## Targets at a glance\n\n((?:\|.*\n)+)", text)
    if not match:
        return text
    rows = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in match.group(1).splitlines()[2:]]
    at = next((i for i, r in enumerate(rows) if r[0] == section.title), len(rows))
    rows = [r for r in rows if r[0] != section.title]
    rows[at:at] = glance_rows(section)
    text = text[:match.start(1)] + table(GLANCE_HEADERS, rows) + "\n" + text[match.end(1):]
    stamp = f"{section.name} {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC"
    note = re.search(rf"^{re.escape(RERUN_PREFIX)} (.*)\.$", text, re.M)
    if note:
        kept = [e for e in note.group(1).split("; ") if not e.startswith(section.name + " ")]
        return text[:note.start()] + f"{RERUN_PREFIX} {'; '.join(kept + [stamp])}." + text[note.end():]
    return re.sub(r"^(Last full rewrite: .*)$", lambda m: f"{m.group(1)}\n{RERUN_PREFIX} {stamp}.", text, count=1,
                  flags=re.M)


def write_document(sections: list[Section], machine: str) -> None:
    """The whole document; `machine` is machine_line() taken before the first benchmark (the load
    average at the end would only show the benchmarks' own load)."""
    summary = [row for s in sections for row in glance_rows(s)]
    parts = [HEADER.format(machine=machine).strip(), "",
             "## Targets at a glance", "", table(GLANCE_HEADERS, summary), ""]
    parts += [s.markdown() + "\n" for s in sections]
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text("\n".join(parts), encoding="utf-8")


def report(section: Section, write: bool) -> Section:
    print(f"\n## {section.title}\n\n{section.body.strip()}\n")
    if section.checks:
        print(table(["target", "measured", "met"], [[c.target, c.measured, verdict(c.ok)] for c in section.checks]))
    if write:
        write_section(section)
        print(f"\n(updated {DOC.relative_to(ROOT)})")
    return section


# -- the benchmark model ------------------------------------------------------------------------
def en_es_available() -> bool:
    return all((EN_ES / f).is_file() for f in ("config.json", "model.safetensors", "tokenizer.json"))


def load_bench_bundle():
    """(bundle, description): the trained en-es model, or its architecture with random weights."""
    import torch

    from model.inference.pipeline import Engine, load_engine
    from model.nn.config import TransformerConfig
    from model.io.tokenizer import Tokenizer
    from model.nn.transformer import Transformer

    if en_es_available():
        return load_engine(EN_ES, device="cpu"), "pretrained/en-es (trained weights)"
    torch.manual_seed(0)
    cfg = TransformerConfig(**EN_ES_ARCH)
    tokenizer = Tokenizer.word_level([f"w{i}" for i in range(3, cfg.vocab_size)])
    model = Transformer(cfg).eval()
    return Engine(model, tokenizer, cfg, Path(BENCH_MODEL_ID)), "en-es architecture, random weights (no pretrained/en-es yet)"


@contextlib.contextmanager
def app_models():
    """(env, model_id, description) for a server: pretrained/ when en-es is there; otherwise a temporary
    model folder holding the en-es architecture with random weights (the toy models have max_len 32,
    too short for the 256- and 512-token measurements)."""
    if en_es_available():
        yield {}, "en-es", "pretrained/en-es (trained weights)"
        return
    from model.io.checkpoint import save_checkpoint
    bundle, description = load_bench_bundle()
    with tempfile.TemporaryDirectory(prefix="bench-models-") as tmp:
        folder = save_checkpoint(bundle.model, bundle.tokenizer, Path(tmp) / BENCH_MODEL_ID)
        (folder / "presets.txt").write_text(" ".join(f"w{i}" for i in range(3, 13)) + "\n", encoding="utf-8")
        yield {"TRANSFORMER_VIZ_MODELS": tmp}, BENCH_MODEL_ID, description


class SentenceMaker:
    """Distinct sentences of about n tokens for the benchmark model, and the tick labels they produce."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.words = self._english_words() if en_es_available() else None
        self._tokenizer = None

    @staticmethod
    def _english_words() -> list[str]:
        words = []
        test = EN_ES / "test.tsv"
        if test.is_file():
            for line in test.read_text(encoding="utf-8").splitlines()[:2000]:
                words += re.findall(r"[A-Za-z]+", line.split("\t")[0])
        return words or "the man went to the house and saw a small dog in the garden".split()

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            from model.io.tokenizer import Tokenizer
            path = EN_ES / "tokenizer.json"
            self._tokenizer = Tokenizer.load(path) if en_es_available() else \
                Tokenizer.word_level([f"w{i}" for i in range(3, EN_ES_ARCH["vocab_size"])])
        return self._tokenizer

    def sentence(self, n_tokens: int) -> str:
        """A fresh sentence of n_tokens tokens including the final </s> (BPE: as close as words allow)."""
        if self.words is None:
            return " ".join(f"w{self.rng.randrange(3, EN_ES_ARCH['vocab_size'])}" for _ in range(n_tokens - 1))
        words: list[str] = []
        while len(self.tokenizer.encode(" ".join(words))) < n_tokens:
            words.append(self.rng.choice(self.words))
        return " ".join(words)

    def labels(self, text: str, max_tokens: int = 10**6) -> list[str]:
        """The position-prefixed tick labels the explorer shows for this source sentence (read in the sidebar's
        default style: a two-style model's first token is its style token, and every position after it moves)."""
        from viz.core.text import position_labels
        from viz.core.view import STYLE
        ids = self.tokenizer.encode(self.tokenizer.styled(text.strip(), STYLE.default))
        if len(ids) > max_tokens:
            ids = ids[: max_tokens - 1] + [2]
        return position_labels(self.tokenizer.token_strings(ids))


# -- server processes ---------------------------------------------------------------------------
def rss_bytes(pid: int, children: bool = True) -> int:
    """VmRSS of a process (and its descendants) from /proc, in bytes."""
    total = 0
    for p in [pid] + (descendants(pid) if children else []):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) of a process and its descendants, or of the whole machine (pid None)."""
    tick = os.sysconf("SC_CLK_TCK")
    if pid is None:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        return (sum(map(int, fields)) - int(fields[3]) - int(fields[4])) / tick   # all but idle and iowait
    total = 0
    for p in [pid] + descendants(pid):
        try:
            stat = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(stat[11]) + int(stat[12])                                  # utime, stime
        except OSError:
            pass
    return total / tick


def descendants(pid: int) -> list[int]:
    kids = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return kids + [g for k in kids for g in descendants(k)]


class Server:
    """`streamlit run app.py` of `root` (this tree unless told) on a free port; its pid for RSS; stopped on exit
    (only this process)."""

    def __init__(self, env: dict | None = None, root: Path = ROOT):
        from browser_utils import free_port
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.started_at = 0.0

    def start(self) -> "Server":
        cmd = [sys.executable, "-m", "streamlit", "run", str(self.root / "app.py"), "--server.headless", "true",
               "--server.port", str(self.port), "--server.address", "127.0.0.1",
               "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(cmd, cwd=self.root, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return self

    def wait_healthy(self, timeout: float = 180) -> float:
        """Seconds from start until /_stcore/health answers."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {self.proc.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return time.perf_counter() - self.started_at
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("streamlit did not start in time")

    def rss(self) -> int:
        return rss_bytes(self.proc.pid)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def __enter__(self) -> "Server":
        self.start().wait_healthy()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


# -- the explorer in a browser --------------------------------------------------------------------
# True once the script has finished (no "Running" widget), nothing is faded as stale, and the large
# heatmap's x tick labels include one of `wanted` (labels only the new sentence has).
MAPS_DRAWN_JS = """(wanted) => {
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-testid="stException"]')) return true;   // reported as an error
  if (document.querySelector('[data-stale="true"]')) return false;
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  if (plots.length < 2) return false;
  const ticks = new Set(plots.flatMap(p => [...p.querySelectorAll('.xtick text')].map(e => e.textContent)));
  return wanted.some(w => ticks.has(w));
}"""


# x tick labels on the page that are not among `own` (the session's own sentence): cross-talk.
CHECK_OWN_LABELS_JS = """(own) => {
  const mine = new Set(own);
  return [...document.querySelectorAll('.js-plotly-plot .xtick text')].map(e => e.textContent)
    .filter(t => !mine.has(t));
}"""


def new_labels(new: list[str], old: list[str]) -> list[str]:
    """Labels of the new sentence the old one did not have (position-prefixed, so almost all)."""
    fresh = sorted(set(new) - set(old), key=new.index)
    return fresh or new


def explorer_url(base: str, model_id: str, text: str | None = None, **params) -> str:
    import urllib.parse
    query = {"model": model_id, **({"text": text} if text else {}), **{k: v for k, v in params.items() if v is not None}}
    return f"{base}/explorer?{urllib.parse.urlencode(query)}"


def timestamp() -> str:
    return dt.datetime.now().strftime("%H:%M:%S")


def log(message: str) -> None:
    print(f"[{timestamp()}] {message}", flush=True)
