"""Should a retrained model replace the shipped one? The retrain rule (the default), both models measured the same way:

- dev and test both improve: BLEU higher and chrF no lower (sacrebleu, beam 4, every pair);
- it repeats itself less: outputs with a word three times in a row ("ley ley ley"), test and everyday
  sentences together (none in either also passes);
- it is no worse on everyday modern sentences outside the Bible (docs/examples/everyday.tsv, with our
  own references): chrF no lower;
- it fits: at most 12M parameters and a 25 MB weights file (fp16, as `export` writes it).

    python -m model.cli judge --candidate runs/en-es-gpu/shipped --baseline pretrained/en-es --data data/en-es

The everyday rule (`--rule everyday`) is for a model that learned everyday Spanish beside the Bible's:
- everyday sentences: chrF at least 10 points higher on docs/examples/everyday.tsv and on the everyday
  corpus's held-out test split (WordNet examples, Apertium references);
- it repeats itself less (as above);
- the Bible holds: test BLEU and chrF at most half a point below the shipped model's;
- it fits (as above).
A model with style tokens reads the Bible sets as <bible> and the everyday sets as <modern>.

The learner rule (`--rule learner`) is for a model taught a class's first inputs (single words, greetings,
long inputs) on top of the shipped two-style model:
- the short-utterance test (--short): chrF higher;
- the everyday sets hold: the corpus test's BLEU and chrF and the everyday sentences' chrF no lower;
- the Bible holds: test BLEU at least 32 and at most half a point below, chrF at most half a point below;
- long inputs (--bands): no more outputs repeating a word three times in a row over all bands;
- it fits (as above).

Other sets no rule reads (`extra`: the short-utterance test, the joined test pairs by length band) are measured
alike, each with its count of outputs repeating a word three times in a row; a set named "bible_..." is
read as <bible>, any other as <modern>.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from model.inference.batch_translate import translate_many
from model.io.checkpoint import WEIGHTS, Bundle
from model.training.evaluate import score
from model.training.examples import repeats_a_word

MAX_PARAMETERS, MAX_BYTES = 12_000_000, 25_000_000
EVERYDAY_GAIN, BIBLE_SLACK = 10.0, 0.5
STYLE_OF_SET = {"dev": "bible", "test": "bible", "everyday": "modern", "modern": "modern"}
Pairs = list[tuple[str, str]]


@dataclass
class Measurement:
    dev: dict | None         # bleu, chrf (None: not measured, no rule of the judge's read it)
    test: dict
    everyday: dict
    repeats: int             # test and everyday outputs with a word three times in a row
    parameters: int
    weights_bytes: int
    modern: dict | None = None   # the everyday corpus's test split, when measured
    extra: dict | None = None    # name -> bleu, chrf, repeats, pairs of the sets no rule reads

    def to_json(self) -> dict:
        return asdict(self)


def style_of_set(name: str) -> str:
    return STYLE_OF_SET.get(name, "bible" if name.startswith("bible") else "modern")


def measure(bundle: Bundle, folder: Path, sets: dict[str, Pairs], beam: int = 4, no_repeat_ngram: int = 0,
            extra: dict[str, Pairs] | None = None, on_batch: Callable[[int], object] | None = None) -> Measurement:
    """Scores of one model on the dev, test and everyday sets, and on `extra` (each decoded in batches;
    on_batch(n): n sentences done)."""
    extra = extra or {}
    scores, outputs = {}, {}
    for name, pairs in (sets | extra).items():
        outputs[name] = translate_many(bundle, [s for s, _ in pairs], beam=beam, style=style_of_set(name),
                                       on_batch=on_batch, no_repeat_ngram=no_repeat_ngram)
        full = score(outputs[name], [t for _, t in pairs])
        scores[name] = {"bleu": full["bleu"], "chrf": full["chrf"]}
    repeats = sum(repeats_a_word(o) for name in ("test", "everyday") for o in outputs[name])
    more = {name: scores[name] | {"repeats": sum(map(repeats_a_word, outputs[name])), "pairs": len(extra[name])}
            for name in extra}
    return Measurement(scores.get("dev"), scores["test"], scores["everyday"], repeats,
                       bundle.model.num_parameters(), (folder / WEIGHTS).stat().st_size, scores.get("modern"),
                       more or None)


def rules(candidate: Measurement, baseline: Measurement) -> dict[str, bool]:
    """Each condition for shipping the candidate, and whether it holds."""
    def improves(split: str) -> bool:
        new, old = getattr(candidate, split), getattr(baseline, split)
        return new is not None and old is not None and new["bleu"] > old["bleu"] and new["chrf"] >= old["chrf"]

    return {
        "dev improves (BLEU higher, chrF no lower)": improves("dev"),
        "test improves (BLEU higher, chrF no lower)": improves("test"),
        "repeats itself less": candidate.repeats < baseline.repeats or candidate.repeats == 0,
        "no worse on everyday sentences (chrF)": candidate.everyday["chrf"] >= baseline.everyday["chrf"],
        f"at most {MAX_PARAMETERS / 1e6:.0f}M parameters": candidate.parameters <= MAX_PARAMETERS,
        f"weights at most {MAX_BYTES / 1e6:.0f} MB": candidate.weights_bytes <= MAX_BYTES,
    }


def everyday_rules(candidate: Measurement, baseline: Measurement) -> dict[str, bool]:
    """The everyday rule's conditions: far better on everyday sentences, the Bible kept, fewer repeats, fits."""
    def gained(split: str) -> bool:
        new, old = getattr(candidate, split), getattr(baseline, split)
        return new is not None and old is not None and new["chrf"] >= old["chrf"] + EVERYDAY_GAIN

    fits = rules(candidate, baseline)
    return {
        f"everyday sentences: chrF {EVERYDAY_GAIN:.0f}+ points higher": gained("everyday"),
        f"everyday corpus test split: chrF {EVERYDAY_GAIN:.0f}+ points higher": gained("modern"),
        "repeats itself less": fits["repeats itself less"],
        f"Bible test: BLEU and chrF at most {BIBLE_SLACK} below": (
            candidate.test["bleu"] >= baseline.test["bleu"] - BIBLE_SLACK
            and candidate.test["chrf"] >= baseline.test["chrf"] - BIBLE_SLACK),
        **{rule: holds for rule, holds in fits.items() if rule.startswith(("at most", "weights"))},
    }


BIBLE_FLOOR = 32.0


def learner_rules(candidate: Measurement, baseline: Measurement) -> dict[str, bool]:
    """The learner rule's conditions: the short test learned, everyday and Bible kept, long inputs loop no more, fits."""
    def extra(m: Measurement, name: str) -> dict:
        return (m.extra or {}).get(name) or {"bleu": float("-inf"), "chrf": float("-inf"), "repeats": 0}

    def band_repeats(m: Measurement) -> int:
        return sum(v["repeats"] for name, v in (m.extra or {}).items() if name != "short")

    modern_new, modern_old = candidate.modern or {}, baseline.modern or {}
    fits = rules(candidate, baseline)
    return {
        "short-utterance test: chrF higher": extra(candidate, "short")["chrf"] > extra(baseline, "short")["chrf"],
        "everyday corpus test: BLEU and chrF no lower": bool(modern_new) and all(
            modern_new[k] >= modern_old[k] for k in ("bleu", "chrf")),
        "everyday sentences: chrF no lower": fits["no worse on everyday sentences (chrF)"],
        f"Bible test: BLEU at least {BIBLE_FLOOR:.0f}, BLEU and chrF at most {BIBLE_SLACK} below": (
            candidate.test["bleu"] >= max(BIBLE_FLOOR, baseline.test["bleu"] - BIBLE_SLACK)
            and candidate.test["chrf"] >= baseline.test["chrf"] - BIBLE_SLACK),
        "long inputs: no more outputs repeating a word": band_repeats(candidate) <= band_repeats(baseline),
        **{rule: holds for rule, holds in fits.items() if rule.startswith(("at most", "weights"))},
    }


RULES = {"retrain": rules, "everyday": everyday_rules, "learner": learner_rules}


def table(candidate: Measurement, baseline: Measurement) -> str:
    """The two models side by side, one row per number the rules read."""
    def pair(d: dict) -> str:
        return f"{d['bleu']:.2f} / {d['chrf']:.2f}"

    theirs = candidate.extra or {}

    rows = [*([("dev BLEU / chrF", pair(baseline.dev), pair(candidate.dev))] if baseline.dev and candidate.dev else []),
            ("test BLEU / chrF", pair(baseline.test), pair(candidate.test)),
            ("everyday BLEU / chrF", pair(baseline.everyday), pair(candidate.everyday)),
            *([("everyday corpus test BLEU / chrF", pair(baseline.modern), pair(candidate.modern))]
              if baseline.modern and candidate.modern else []),
            ("outputs repeating a word 3×", str(baseline.repeats), str(candidate.repeats)),
            *[(f"{name} ({m['pairs']}) BLEU / chrF / repeats", f"{pair(m)} / {m['repeats']}",
               f"{pair(theirs[name])} / {theirs[name]['repeats']}")
              for name, m in (baseline.extra or {}).items() if name in theirs],
            ("parameters", f"{baseline.parameters:,}", f"{candidate.parameters:,}"),
            ("weights", f"{baseline.weights_bytes / 1e6:.1f} MB", f"{candidate.weights_bytes / 1e6:.1f} MB")]
    width = max(len(r[0]) for r in rows)
    lines = [f"{'':<{width}}  {'baseline':>16}  {'candidate':>16}"]
    lines += [f"{name:<{width}}  {old:>16}  {new:>16}" for name, old, new in rows]
    return "\n".join(lines)
