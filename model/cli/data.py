"""Build a training corpus: python -m model.cli data --out data/en-es [--source bible|everyday|mix].

- bible (default): the en-es Bible corpus from the SWORD modules (model/training/corpus.py), with a BPE
  tokenizer trained on its train split;
- everyday: WordNet's example sentences translated by Apertium (model/training/everyday.py);
- learner: what a class types first (model/training/learner.py): WordNet's lemmas and glosses through
  Apertium, Apertium's known errors fixed, a first lesson's greetings, and long pairs joined from the
  `--bible` and `--everyday` corpora's consecutive pairs; the short test split and the joined test pairs
  by length band (bands/) for measuring;
- mix: both, each source tagged with its style token, for one model that writes either kind of Spanish
  (`--bible DIR --everyday DIR --tokenizer FILE`: the tokenizer, e.g. the shipped one, gains the style
  tokens; `train --init-from` then grows the model's vocabulary to match). With `--learner DIR` the
  learner's pairs join it (`<modern>`, joined Bible verses `<bible>`), and `--bible-sample`,
  `--everyday-sample` replay a seeded sample of the old training pairs instead of all of them.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

from model.cli import progress
from model.cli.arguments import positive_int
from model.io.files import describe_kind
from model.training.corpus import SEED, build_corpus, read_tsv, split_pairs, token_stats, write_tsv

SPLITS = ("train", "dev", "test")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder, e.g. data/en-es")
    ap.add_argument("--source", choices=("bible", "everyday", "learner", "mix"), default="bible",
                    help="which corpus (default bible; README: Command line)")
    ap.add_argument("--test-copy", help="also copy test.tsv here (e.g. pretrained/en-es/test.tsv)")
    ap.add_argument("--vocab-size", type=positive_int, default=8000, help="BPE vocabulary size (default 8000)")
    ap.add_argument("--seed", type=int, default=SEED, help=f"random seed of the splits (default {SEED})")
    ap.add_argument("--limit", type=positive_int, default=None, help="everyday: only the first N examples")
    ap.add_argument("--bible", default="data/en-es", help="mix: the Bible corpus folder")
    ap.add_argument("--everyday", default="data/everyday", help="mix: the everyday corpus folder")
    ap.add_argument("--tokenizer", default="pretrained/en-es/tokenizer.json", help="mix: the vocabulary to extend")
    ap.add_argument("--repeat-everyday", type=positive_int, default=2, help="mix: everyday training pairs repeated")
    ap.add_argument("--learner", default=None, help="mix: the learner corpus folder (--source learner) to add")
    ap.add_argument("--bible-sample", type=positive_int, default=None, help="mix: a seeded sample of N Bible training pairs")
    ap.add_argument("--everyday-sample", type=positive_int, default=None,
                    help="mix: a seeded sample of N everyday training pairs (before --repeat-everyday)")
    ap.add_argument("--repeat-short", type=positive_int, default=1, help="mix: learner short pairs repeated")
    ap.add_argument("--repeat-class", type=positive_int, default=None,
                    help="mix: the class's phrases and the first lesson's lemmas repeated (default: CLASS_REPEAT, 20)")
    ap.add_argument("--short-sample", type=positive_int, default=None, help="mix: a seeded sample of N short pairs")
    ap.add_argument("--gloss-sample", type=positive_int, default=None, help="mix: a seeded sample of N glosses")
    ap.add_argument("--joined-sample", type=positive_int, default=None,
                    help="mix: a seeded sample of N joined pairs of each source")
    args = ap.parse_args(argv)
    out = Path(args.out)                   # /dev/full or a file: said now, not after the corpus is built
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {args.out}: {describe_kind(os.stat(out).st_mode)}, not a folder")
    progress.step(f"building the {args.source} corpus in {out} (minutes)")
    stats = {"bible": build_bible, "everyday": build_everyday_corpus, "learner": build_learner_corpus,
             "mix": build_mix}[args.source](args, out)
    (out / "stats.json").write_text(json.dumps(stats, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.test_copy:
        Path(args.test_copy).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out / "test.tsv", args.test_copy)
    print(f"pairs kept: {stats['pairs']}  dropped: {stats.get('dropped', {})}")
    print(f"split sizes: {stats['split']}  -> {out}")
    return stats


def write_splits(out: Path, splits: dict) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    for name, split in splits.items():
        write_tsv(out / f"{name}.tsv", split)
    return {s: len(p) for s, p in splits.items()}


def build_bible(args, out: Path) -> dict:
    from model.io.tokenizer import Tokenizer
    pairs, stats = build_corpus()
    splits = split_pairs(pairs, args.seed)
    stats["split"] = write_splits(out, splits)
    # train-only tokenizer: dev/test text must not shape the vocabulary
    tok = Tokenizer.train_bpe([t for p in splits["train"] for t in p], args.vocab_size)
    tok.save(out / "tokenizer.json")
    stats |= {"seed": args.seed, "tokenizer": {"vocab_size": tok.vocab_size, "mean_tokens": token_stats(tok, splits)}}
    return stats


def build_everyday_corpus(args, out: Path) -> dict:
    from model.training.everyday import build_everyday, split_everyday
    pairs, stats = build_everyday(limit=args.limit)
    stats["split"] = write_splits(out, split_everyday(pairs))
    return stats


def build_learner_corpus(args, out: Path) -> dict:
    from model.training.learner import build_learner
    corpora = {name: {s: read_tsv(Path(folder) / f"{s}.tsv") for s in SPLITS}
               for name, folder in (("bible", args.bible), ("everyday", args.everyday))}
    files, stats = build_learner(corpora["bible"], corpora["everyday"], seed=args.seed, limit=args.limit)
    out.mkdir(parents=True, exist_ok=True)
    for name, pairs in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        write_tsv(out / name, pairs)
    stats["split"] = {name: len(pairs) for name, pairs in files.items()}
    stats["pairs"] = sum(stats["split"].values())
    return stats


def build_mix(args, out: Path) -> dict:
    from model.io.tokenizer import Tokenizer
    from model.training.everyday import mix_corpora
    from model.training.learner import add_learner, sample
    tok = Tokenizer.load(args.tokenizer).with_styles()
    corpora = {name: {s: read_tsv(Path(folder) / f"{s}.tsv") for s in SPLITS}
               for name, folder in (("bible", args.bible), ("everyday", args.everyday))}
    if args.learner:        # Apertium's known errors fixed in the everyday training pairs too
        corpora["everyday"]["train"] = read_tsv(Path(args.learner) / "everyday_train.tsv")
    corpora["bible"]["train"] = sample(corpora["bible"]["train"], args.bible_sample, args.seed)
    corpora["everyday"]["train"] = sample(corpora["everyday"]["train"], args.everyday_sample, args.seed)
    splits = mix_corpora(corpora["bible"], corpora["everyday"], tok, args.repeat_everyday)
    learner = {}
    if args.learner:
        learner = add_learner(splits, Path(args.learner), tok, args.repeat_short, args.gloss_sample,
                              args.joined_sample, args.seed, args.short_sample, args.repeat_class)
    out.mkdir(parents=True, exist_ok=True)
    tok.save(out / "tokenizer.json")
    return {"pairs": sum(len(p) for p in splits.values()), "split": write_splits(out, splits),
            "sources": {"bible": args.bible, "everyday": args.everyday, "tokenizer": args.tokenizer,
                        "learner": args.learner},
            "repeat_everyday": args.repeat_everyday, "samples": {"bible": args.bible_sample,
                                                                 "everyday": args.everyday_sample},
            "learner": learner, "styles": tok.styles,
            "tokenizer": {"vocab_size": tok.vocab_size, "mean_tokens": token_stats(tok, splits)}}


if __name__ == "__main__":
    main()
