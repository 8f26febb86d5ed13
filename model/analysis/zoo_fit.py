"""The attention zoo's general and additive scores, fitted to this model's own heads.

The zoo (model/analysis/zoo.py) scores one head's captured queries and keys with older score functions.
Two of them need weights the Transformer never learned: general q^T W k (W [d,d]) and additive
v^T tanh(W1 q + W2 k) (W1, W2 [h,d], v [h], h = d). Random weights only show the shape of the computation.
Here they are fitted, head by head, so that softmax(score(q, k)) (masked as the head is: causal for decoder
self-attention) reproduces the head's own attention pattern (hook_pattern) on a few hundred training
sentences, traced as the app traces them (teacher-forced on the reference, the style token leading the
source). Loss: KL(model pattern || fitted) per query row, averaged; Adam from the random weights the zoo
shows (zoo.random_weights(d, zoo.DEFAULT_SEED)); held-out KL on other sentences says how close each gets.

What to expect: the head computes softmax(q.k / sqrt(d)), which IS the general score with W = I/sqrt(d), so
the general score can copy every head exactly and its loss is convex in W: the fit lands near I/sqrt(d)
(only directions in which the keys never differ stay free: the softmax ignores them). The additive score
can only approximate (each term is bounded by tanh); its held-out KL says how well.

The result is one safetensors file per model folder, zoo_fit.safetensors (never pickle): for every attention
sublayer `{prefix}.general.W` [H,d,d], `{prefix}.additive.W1`, `.W2` [H,h,d] and `.additive.v` [H,h], with
prefix schema.attn_prefix(kind, layer), e.g. encoder.layers.0.self_attn.general.W; its metadata (strings)
hold the sentences, steps, seed, the model weights' SHA-256 and, as JSON, every head's held-out KL (fitted,
random, scaled) and the general W's distance from I/sqrt(d). Loading it (load_fit) reads a regular file of
bounded size and checks every name and shape against the model: a corrupt, oversized or mismatched file is a
ZooFitError with one sentence, and callers fall back to random weights.

Reading needs numpy only; fitting imports torch inside the functions that run the model (collect, fit_group,
fit_model), so a page or lesson that only draws the fitted scores does not load torch for it.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load as safetensors_load
from safetensors.numpy import save as safetensors_save

from model.analysis import zoo
from model.analysis.attention_math import causal_mask
from model.capture import schema
from model.io.files import MiB, read_bytes_limited

FILE = "zoo_fit.safetensors"
FORMAT = "zoo-fit"
VERSION = "1"
FITTED = ("general", "additive")
PARAMS = {"general": ("W",), "additive": ("W1", "W2", "v")}
REPORTED = ("general", "additive", "random_general", "random_additive", "scaled")   # the KL metadata's keys
METADATA_LIMIT = MiB          # bytes of the file beyond its numbers (header, names, the KL JSON): generous
DEFAULT_SENTENCES, DEFAULT_DEV_SENTENCES, DEFAULT_STEPS, DEFAULT_SEED = 300, 100, 1000, 0
DEFAULT_LR, DEFAULT_BATCH = 0.02, 16


class ZooFitError(ValueError):
    """A zoo_fit file that cannot be used, in one sentence (the caller falls back to random weights)."""


# -- the model's shape, from a TransformerConfig or the dict a Trace carries ---------------------------------
@dataclass(frozen=True)
class Dims:
    n_heads: int
    d_head: int
    layers: dict          # kind -> number of layers

    @classmethod
    def of(cls, config) -> "Dims":
        get: Callable[[str], Any] = config.get if isinstance(config, dict) else lambda key: getattr(config, key)
        n_heads, d_model = int(get("n_heads")), int(get("d_model"))
        layers = {"encoder": int(get("n_encoder_layers")), "decoder": int(get("n_decoder_layers"))}
        return cls(n_heads, d_model // n_heads, {kind: layers[schema.stack_of(kind)] for kind in schema.KINDS})

    def sublayers(self) -> list[tuple[str, int]]:
        return [(kind, layer) for kind in schema.KINDS for layer in range(self.layers[kind])]

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Tensor name -> shape, every tensor the file must hold (hidden size h = d_head)."""
        h, d, n = self.d_head, self.d_head, self.n_heads
        one = {"general.W": (n, d, d), "additive.W1": (n, h, d), "additive.W2": (n, h, d), "additive.v": (n, h)}
        return {f"{schema.attn_prefix(kind, layer)}.{name}": shape
                for kind, layer in self.sublayers() for name, shape in one.items()}

    def file_limit(self) -> int:
        """The largest file these shapes explain: every number in fp64 plus METADATA_LIMIT."""
        return 8 * sum(math.prod(s) for s in self.shapes().values()) + METADATA_LIMIT


# -- the fitted weights and what was measured -----------------------------------------------------------------
# The fitted general W "is" I/sqrt(d), the scaled dot product, when it kept under this share of the random W's
# distance from I/sqrt(d): below 1% of it (0.056 for d_head 32) the fit has removed 99% of the start, and en-es's
# encoder layer 0 heads, at 5e-7 to 9e-4, have none left worth a sentence. Above it (0.06 to 0.67 in en-es's
# later layers) the directions the head's keys hardly span are still visibly random.
RANDOM_LEFT = 0.01


@dataclass(frozen=True)
class HeadReport:
    """One head's held-out KL per query row (nats) and the general W's relative distance from I/sqrt(d)."""
    kl: dict                  # REPORTED name -> KL
    w_distance: float         # ||W - I/sqrt(d)||_F / ||I/sqrt(d)||_F of the fitted W
    random_w_distance: float  # the same for the random W the fit started from

    @property
    def scaled_dot(self) -> bool:
        """Whether the fitted general score is, to the eye, the scaled dot product (W = I/sqrt(d))."""
        return self.w_distance < RANDOM_LEFT * self.random_w_distance


@dataclass(frozen=True)
class ZooFit:
    params: dict              # tensor name -> array [H, ...] (float32)
    dims: Dims
    sentences: int            # training sentences
    dev_sentences: int        # held-out sentences the KL is measured on
    steps: int
    seed: int
    kl: dict                  # attn prefix -> REPORTED name -> [per-head KL]
    w_distance: dict          # attn prefix -> [per-head distance]
    weights_sha256: str = ""  # of the model.safetensors the fit was made on ("" when unknown)
    extra: dict = field(default_factory=dict)   # data, fit seconds, threads: for the record

    def head(self, kind: str, layer: int, head: int) -> dict[str, np.ndarray]:
        """One head's W [d,d], W1, W2 [h,d] and v [h], as zoo.random_weights gives them: zoo.scores(weights=...)."""
        prefix = schema.attn_prefix(kind, layer)
        return {p: self.params[f"{prefix}.{score}.{p}"][int(head)] for score in FITTED for p in PARAMS[score]}

    def report(self, kind: str, layer: int, head: int) -> HeadReport:
        prefix = schema.attn_prefix(kind, layer)
        return HeadReport({name: float(self.kl[prefix][name][head]) for name in REPORTED},
                          float(self.w_distance[prefix][head]), random_w_distance(self.dims.d_head))

    def mean_kl(self, kind: str | None = None) -> dict[str, float]:
        """Mean held-out KL over every head (of one kind)."""
        prefixes = [schema.attn_prefix(k, layer) for k, layer in self.dims.sublayers() if kind in (None, k)]
        return {name: float(np.mean([self.kl[p][name] for p in prefixes])) for name in REPORTED}

    def mean_w_distance(self, kind: str | None = None) -> float:
        prefixes = [schema.attn_prefix(k, layer) for k, layer in self.dims.sublayers() if kind in (None, k)]
        return float(np.mean([self.w_distance[p] for p in prefixes]))


def identity_target(d: int) -> np.ndarray:
    """The W that turns the general score into the head's own scaled dot product: I/sqrt(d)."""
    return np.eye(d) / np.sqrt(d)


def w_distance(w: np.ndarray) -> float:
    """||W - I/sqrt(d)||_F / ||I/sqrt(d)||_F (0: exactly the scaled dot product)."""
    target = identity_target(w.shape[-1])
    return float(np.linalg.norm(w - target) / np.linalg.norm(target))


def random_w_distance(d: int) -> float:
    return w_distance(zoo.random_weights(d, zoo.DEFAULT_SEED)["W"])


# -- file ------------------------------------------------------------------------------------------------------
def weights_sha256(folder: str | Path) -> str:
    """SHA-256 of a model folder's model.safetensors ("" when it has none): which weights a fit belongs to.
    Remembered per (file, size, modification time), so a page or lesson that draws the zoo often hashes once."""
    path = Path(folder) / "model.safetensors"
    try:
        if not path.is_file():
            return ""
        info = path.stat()
        return _sha256(str(path.resolve()), info.st_size, info.st_mtime_ns)
    except OSError:                     # unreadable: the shapes are still checked, the weights cannot be
        return ""


@functools.lru_cache(maxsize=16)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MiB), b""):
            digest.update(block)
    return digest.hexdigest()


def to_bytes(fit: ZooFit) -> bytes:
    metadata = {"format": FORMAT, "version": VERSION, "sentences": str(fit.sentences),
                "dev_sentences": str(fit.dev_sentences), "steps": str(fit.steps), "seed": str(fit.seed),
                "weights_sha256": fit.weights_sha256, "kl": json.dumps(fit.kl),
                "w_distance": json.dumps(fit.w_distance),
                "extra": json.dumps(fit.extra)}
    tensors = {name: np.ascontiguousarray(a, dtype=np.float32) for name, a in fit.params.items()}
    return safetensors_save(tensors, metadata=metadata)


def save_fit(fit: ZooFit, folder: str | Path) -> Path:
    path = Path(folder) / FILE
    path.write_bytes(to_bytes(fit))
    return path


def _metadata(data: bytes) -> dict:
    """The safetensors header's __metadata__ (the header is 8 bytes of length, then JSON)."""
    if len(data) < 8:
        raise ZooFitError("too short to be a safetensors file")
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8:
        raise ZooFitError("not a safetensors file (its header runs past the end)")
    try:
        header = json.loads(data[8:8 + n])
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ZooFitError("not a safetensors file (its header is not JSON)") from None
    meta = header.get("__metadata__") if isinstance(header, dict) else None
    if not isinstance(meta, dict):
        raise ZooFitError("its header has no metadata: not written by `fit-zoo`")
    return meta


def _per_head(value, prefixes: list[str], keys: Iterable[str] | None, n_heads: int, what: str) -> dict:
    """JSON metadata checked: prefix -> (key ->) a list of n_heads finite numbers."""
    def numbers(x) -> list[float]:
        if not (isinstance(x, list) and len(x) == n_heads and all(isinstance(v, (int, float)) for v in x)
                and all(math.isfinite(v) for v in x)):
            raise ZooFitError(f"its {what} numbers are not {n_heads} finite numbers per sublayer")
        return [float(v) for v in x]
    if not isinstance(value, dict) or set(value) != set(prefixes):
        raise ZooFitError(f"its {what} numbers do not name this model's attention sublayers")
    if keys is None:
        return {p: numbers(value[p]) for p in prefixes}
    out = {}
    for p in prefixes:
        if not isinstance(value[p], dict) or not set(keys) <= set(value[p]):
            raise ZooFitError(f"its {what} numbers lack {', '.join(keys)}")
        out[p] = {k: numbers(value[p][k]) for k in keys}
    return out


def from_bytes(data: bytes, config, folder_sha256: str | None = None) -> ZooFit:
    """A ZooFit from a file's bytes, every name, shape and number checked against the model's config;
    folder_sha256 (the model's weights now): a fit made on other weights is refused. ZooFitError else."""
    dims = Dims.of(config)
    meta = _metadata(data)
    if meta.get("format") != FORMAT:
        raise ZooFitError("not written by `fit-zoo` (no zoo-fit format in its metadata)")
    if meta.get("version") != VERSION:
        raise ZooFitError(f"format version {meta.get('version')!r}, this app reads {VERSION}")
    try:
        tensors = safetensors_load(data)
    except (SafetensorError, ValueError, TypeError) as e:
        raise ZooFitError(f"not a readable safetensors file ({e})") from None
    shapes = dims.shapes()
    if set(tensors) != set(shapes):
        missing, unknown = sorted(set(shapes) - set(tensors)), sorted(set(tensors) - set(shapes))
        raise ZooFitError("it does not fit this model's attention sublayers"
                          + (f": missing {missing[0]}" if missing else f": unknown {unknown[0]}"))
    params = {}
    for name, shape in shapes.items():
        a = tensors[name]
        if a.shape != shape:
            raise ZooFitError(f"{name} has shape {list(a.shape)}, this model needs {list(shape)} "
                              f"({dims.n_heads} heads of {dims.d_head} dimensions): fitted to another model")
        if a.dtype.kind != "f" or not np.isfinite(a).all():
            raise ZooFitError(f"{name} holds numbers that are not finite floats")
        params[name] = a.astype(np.float32)
    sha = meta.get("weights_sha256", "")
    if folder_sha256 and sha and sha != folder_sha256:
        raise ZooFitError("fitted to other weights than this folder's model.safetensors; run `fit-zoo` again")
    prefixes = [schema.attn_prefix(kind, layer) for kind, layer in dims.sublayers()]
    try:
        counts = {key: int(meta[key]) for key in ("sentences", "dev_sentences", "steps", "seed")}
        kl = _per_head(json.loads(meta["kl"]), prefixes, REPORTED, dims.n_heads, "KL")
        dist = _per_head(json.loads(meta["w_distance"]), prefixes, None, dims.n_heads, "distance")
        extra = json.loads(meta.get("extra", "{}"))
    except (KeyError, ValueError, TypeError, RecursionError) as e:   # ZooFitError is a ValueError: keep its words
        if isinstance(e, ZooFitError):
            raise
        raise ZooFitError(f"its metadata is incomplete or not numbers ({type(e).__name__}: {e})") from None
    return ZooFit(params, dims, counts["sentences"], counts["dev_sentences"], counts["steps"], counts["seed"], kl,
                  dist, sha, extra if isinstance(extra, dict) else {})


def load_fit(folder: str | Path, config, check_weights: bool = True) -> ZooFit | None:
    """The model folder's zoo_fit.safetensors, checked (from_bytes); None when the folder has none (toy models,
    a user's folder). ZooFitError in one sentence, naming the file but not the folder, for anything else: not a
    regular file, bigger than the model's shapes explain, corrupt, fitted to another model."""
    path = Path(folder) / FILE
    if not (path.exists() or path.is_symlink()):
        return None
    dims = Dims.of(config)
    try:
        data = read_bytes_limited(path, dims.file_limit(), "the fitted weights of this model's heads need less",
                                  within=folder)
    except (ValueError, OSError) as e:
        raise ZooFitError(f"{FILE}: {str(e).replace(str(path), '').lstrip(': ') or type(e).__name__}") from None
    try:
        return from_bytes(data, config, weights_sha256(folder) if check_weights else None)
    except ZooFitError as e:
        raise ZooFitError(f"{FILE}: {e}") from None


# -- fitting (torch) -------------------------------------------------------------------------------------------
Sample = tuple  # (q [H,T,d], k [H,S,d], pattern [H,T,S]) float32 arrays of one sentence and sublayer


def collect(bundle, pairs: list[tuple[str, str]], max_tokens: int | None = None) -> dict[str, list[Sample]]:
    """Every head's Q, K and pattern on each (source, reference) pair, teacher-forced as trace_sentence does
    (pipeline.forced_pass, without decoding a translation, which the fit does not need). attn prefix -> one
    Sample per pair."""
    import torch

    from model.inference.pipeline import DEFAULT_MAX_TOKENS, encode_text, forced_pass

    dims = Dims.of(bundle.config)
    names = [schema.attn_name(kind, layer, h) for kind, layer in dims.sublayers() for h in ("q", "k", "pattern")]
    out: dict[str, list[Sample]] = {schema.attn_prefix(kind, layer): [] for kind, layer in dims.sublayers()}
    with torch.no_grad():
        for src, tgt in pairs:
            src_ids = encode_text(bundle, src, max_tokens or DEFAULT_MAX_TOKENS).ids
            y = encode_text(bundle, tgt, max_tokens or DEFAULT_MAX_TOKENS, target=True).ids
            trace, _ = forced_pass(bundle, src_ids, y, names)
            for kind, layer in dims.sublayers():
                q, k, p = (np.asarray(trace[schema.attn_name(kind, layer, h)], dtype=np.float32)
                           for h in ("q", "k", "pattern"))
                out[schema.attn_prefix(kind, layer)].append((q, k, p))
    return out


def _batches(samples: list[Sample], causal: bool, batch: int, rng: random.Random):
    """Length-sorted minibatches, padded: (Q [B,H,T,d], K [B,H,S,d], P [B,H,T,S], allowed [B,1,T,S], rows [B,1,T])."""
    import torch

    order = sorted(range(len(samples)), key=lambda i: (samples[i][0].shape[1], samples[i][1].shape[1], rng.random()))
    out = []
    for start in range(0, len(order), batch):
        chosen = [samples[i] for i in order[start:start + batch]]
        n_heads, d = chosen[0][0].shape[0], chosen[0][0].shape[2]
        t_max, s_max = max(q.shape[1] for q, _, _ in chosen), max(k.shape[1] for _, k, _ in chosen)
        Q = torch.zeros(len(chosen), n_heads, t_max, d)
        K = torch.zeros(len(chosen), n_heads, s_max, d)
        P = torch.zeros(len(chosen), n_heads, t_max, s_max)
        allowed = torch.zeros(len(chosen), 1, t_max, s_max, dtype=torch.bool)
        rows = torch.zeros(len(chosen), 1, t_max)
        for b, (q, k, p) in enumerate(chosen):
            t, s = q.shape[1], k.shape[1]
            Q[b, :, :t], K[b, :, :s], P[b, :, :t, :s] = torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(p)
            allowed[b, 0, :t, :s] = torch.from_numpy(causal_mask(t, s)) if causal else True
            allowed[b, 0, t:, 0] = True         # padded query rows: one key, so no row is all -inf (weight 0)
            rows[b, 0, :t] = 1.0
        out.append((Q, K, P, allowed, rows))
    return out


def _general(Q, K, W):
    import torch
    return torch.einsum("bhtd,hde,bhse->bhts", Q, W, K)


def _additive(Q, K, W1, W2, v):
    import torch
    a = torch.einsum("bhtd,hkd->bhtk", Q, W1)                    # [B,H,T,h]
    b = torch.einsum("bhsd,hkd->bhsk", K, W2)                    # [B,H,S,h]
    return torch.einsum("bhtsk,hk->bhts", torch.tanh(a[:, :, :, None, :] + b[:, :, None, :, :]), v)


def _row_kl(scores, P, allowed):
    """KL(P || softmax(scores masked)) per query row [B,H,T] (nats)."""
    import torch
    logf = torch.log_softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1).masked_fill(~allowed, 0.0)
    logp = torch.log(P.clamp_min(1e-30))
    return torch.where(allowed & (P > 0), P * (logp - logf), torch.zeros(())).sum(-1)


def _mean_kl(rows_kl, rows):
    """Per-head mean over real query rows: [H]."""
    return (rows_kl * rows).sum(dim=(0, 2)) / rows.sum(dim=(0, 2))


def _init(n_heads: int, d: int):
    import torch
    p = zoo.random_weights(d, zoo.DEFAULT_SEED)
    return {name: torch.tensor(np.repeat(p[name][None], n_heads, axis=0), dtype=torch.float32, requires_grad=True)
            for name in ("W", "W1", "W2", "v")}


def fit_group(samples: list[Sample], causal: bool, steps: int, seed: int, lr: float = DEFAULT_LR,
              batch: int = DEFAULT_BATCH) -> dict[str, np.ndarray]:
    """One sublayer's heads at once: general W [H,d,d] and additive W1, W2 [H,h,d], v [H,h] fitted by Adam
    (lr cosine-decayed to 0) on minibatches of sentences, each head's loss its mean KL per query row."""
    import torch

    rng = random.Random(seed)
    batches = _batches(samples, causal, batch, rng)
    n_heads, d = samples[0][0].shape[0], samples[0][0].shape[2]
    params = _init(n_heads, d)
    opt = torch.optim.Adam(params.values(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 0.5 * (1 + math.cos(math.pi * min(i, steps) / steps)))
    order: list[int] = []
    for _ in range(steps):
        if not order:
            order = list(range(len(batches)))
            rng.shuffle(order)
        Q, K, P, allowed, rows = batches[order.pop()]
        general = _mean_kl(_row_kl(_general(Q, K, params["W"]), P, allowed), rows).sum()
        additive = _mean_kl(_row_kl(_additive(Q, K, params["W1"], params["W2"], params["v"]), P, allowed), rows).sum()
        opt.zero_grad()
        (general + additive).backward()
        opt.step()
        sched.step()
    return {name: p.detach().numpy().copy() for name, p in params.items()}


def held_out(samples: list[Sample], causal: bool, fitted: dict[str, np.ndarray]) -> dict[str, list[float]]:
    """Per-head mean KL per query row on held-out sentences, for the fitted, random and scaled scores."""
    import torch

    n_heads, d = samples[0][0].shape[0], samples[0][0].shape[2]
    rand = {k: torch.tensor(v.detach().numpy()) for k, v in _init(n_heads, d).items()}
    fit = {k: torch.tensor(v) for k, v in fitted.items()}
    total = {name: torch.zeros(n_heads, dtype=torch.float64) for name in REPORTED}
    n_rows = 0.0
    with torch.no_grad():
        for Q, K, P, allowed, rows in _batches(samples, causal, DEFAULT_BATCH, random.Random(0)):
            scores = {"general": _general(Q, K, fit["W"]),
                      "additive": _additive(Q, K, fit["W1"], fit["W2"], fit["v"]),
                      "random_general": _general(Q, K, rand["W"]),
                      "random_additive": _additive(Q, K, rand["W1"], rand["W2"], rand["v"]),
                      "scaled": torch.einsum("bhtd,bhsd->bhts", Q, K) / math.sqrt(d)}
            for name, s in scores.items():
                total[name] += (_row_kl(s, P, allowed) * rows).sum(dim=(0, 2)).double()
            n_rows += float(rows.sum())
    return {name: [max(0.0, float(x) / n_rows) for x in total[name]] for name in REPORTED}


def fit_model(bundle, train: list[tuple[str, str]], dev: list[tuple[str, str]], steps: int = DEFAULT_STEPS,
              seed: int = DEFAULT_SEED, lr: float = DEFAULT_LR, batch: int = DEFAULT_BATCH,
              progress: Callable[[str], None] | None = None) -> ZooFit:
    """Fit every head of a loaded model (bundle.model, .config, .path) on `train` pairs; measure on `dev` pairs."""
    start = time.perf_counter()
    say = progress or (lambda _text: None)
    dims = Dims.of(bundle.config)
    say(f"tracing {len(train)} training and {len(dev)} held-out sentences")
    train_samples, dev_samples = collect(bundle, train), collect(bundle, dev)
    params, kl, dist = {}, {}, {}
    for kind, layer in dims.sublayers():
        prefix = schema.attn_prefix(kind, layer)
        fitted = fit_group(train_samples[prefix], kind == "decoder", steps, seed, lr, batch)
        params[f"{prefix}.general.W"] = fitted["W"]
        for name in PARAMS["additive"]:
            params[f"{prefix}.additive.{name}"] = fitted[name]
        kl[prefix] = held_out(dev_samples[prefix], kind == "decoder", fitted)
        dist[prefix] = [w_distance(w) for w in fitted["W"]]
        say(f"{prefix}: held-out KL general {np.mean(kl[prefix]['general']):.4f} (random "
            f"{np.mean(kl[prefix]['random_general']):.3f}), additive {np.mean(kl[prefix]['additive']):.4f} (random "
            f"{np.mean(kl[prefix]['random_additive']):.3f}), |W - I/sqrt(d)| {np.mean(dist[prefix]):.3f}")
    extra = {"lr": lr, "batch": batch, "seconds": round(time.perf_counter() - start, 1)}
    path = getattr(bundle, "path", None)
    return ZooFit(params, dims, len(train), len(dev), steps, seed, kl, dist,
                  weights_sha256(path) if path else "", extra)


def sample_pairs(pairs: list[tuple[str, str]], n: int, seed: int, styles: tuple[str, ...] = ("<modern>", "<bible>")
                 ) -> list[tuple[str, str]]:
    """A fixed-seed sample of n pairs, split evenly between the sources' leading style tokens when they have
    them (a one-style corpus: a plain sample)."""
    rng = random.Random(seed)
    groups = [[p for p in pairs if p[0].startswith(style)] for style in styles]
    groups = [g for g in groups if g]
    if not groups or sum(map(len, groups)) < len(pairs) // 2:
        return rng.sample(pairs, min(n, len(pairs)))
    chosen = []
    for i, group in enumerate(groups):
        share = n // len(groups) + (1 if i < n % len(groups) else 0)
        chosen += rng.sample(group, min(share, len(group)))
    rng.shuffle(chosen)
    return chosen
