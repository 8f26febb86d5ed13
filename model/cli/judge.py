"""Judge a retrained model against the shipped one by one of the rules of model/training/judge.py:

    python -m model.cli judge --candidate runs/en-es-gpu/shipped --baseline pretrained/en-es --data data/en-es

Prints both models' numbers and each rule; exit 0 when the candidate should ship, 1 when not.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from tqdm import tqdm

from model.cli.arguments import (add_model_argument, add_no_repeat_argument, beam_size, output_file, positive_int,
                                 resolve_models, thread_count)
from model.io.checkpoint import load_checkpoint
from model.io.device import add_device_argument, describe_device
from model.io.files import write_replacing
from model.training.corpus import read_tsv
from model.training.judge import RULES, Measurement, measure, table

EVERYDAY = Path(__file__).resolve().parents[2] / "docs" / "examples" / "everyday.tsv"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Should a retrained model replace the shipped one?")
    add_model_argument(parser, "--candidate", default=None, what="the retrained model (a folder as `export` writes it)")
    add_model_argument(parser, "--baseline", with_models=False, what="the shipped model")
    parser.add_argument("--data", default="data/en-es", help="corpus folder with dev.tsv and test.tsv")
    parser.add_argument("--everyday", default=str(EVERYDAY), help="everyday sentences with references (en/es TSV)")
    parser.add_argument("--modern", default=None,
                        help="the everyday corpus's test split (e.g. data/everyday/test.tsv), measured too")
    parser.add_argument("--rule", choices=list(RULES), default="retrain",
                        help="retrain: a better Bible model; everyday: everyday Spanish learned, the Bible kept; "
                             "learner: a class's first inputs learned, everyday and Bible kept (needs --short and "
                             "--modern)")
    parser.add_argument("--short", default=None, help="a short-utterance test set (e.g. data/learner/short_test.tsv), "
                        "measured; read by --rule learner")
    parser.add_argument("--bands", default=None, help="a folder of joined test pairs by length band (e.g. "
                        "data/learner/bands: bible_*.tsv read as <bible>, others <modern>), measured; their repeats read by --rule learner")
    for role in ("baseline", "candidate"):
        parser.add_argument(f"--{role}-measured", default=None, metavar="JSON",
                            help=f"take the {role}'s numbers from an earlier judge --out file (measured on the "
                                 "same sets, beam and options) instead of measuring it again")
    parser.add_argument("--beam", type=beam_size, default=4, help="beam size (default 4; 1 = greedy)")
    add_no_repeat_argument(parser)
    parser.add_argument("--limit", type=positive_int, default=None, help="only the first N dev and test pairs (a quick look)")
    parser.add_argument("--out", default=None, help="also write the numbers and rules to this JSON file")
    parser.add_argument("--threads", type=thread_count, default=2, help="CPU threads (default 2)")
    add_device_argument(parser)
    args = parser.parse_args(argv)
    # every argument checked before the minutes of decoding: the models, the sets, --out, then both models loaded
    measured = {role: read_measurement(getattr(args, f"{role}_measured"), role)
                for role in ("baseline", "candidate") if getattr(args, f"{role}_measured")}
    for role in ("candidate", "baseline"):
        if role not in measured:
            resolve_models(args, role)
    sets = {"test": read_tsv(Path(args.data) / "test.tsv")[:args.limit], "everyday": read_tsv(args.everyday)}
    if args.rule == "retrain":            # the only rule that reads dev: the others skip its minutes of decoding
        sets["dev"] = read_tsv(Path(args.data) / "dev.tsv")[:args.limit]
    if args.modern:
        sets["modern"] = read_tsv(args.modern)[:args.limit]
    extra = {"short": read_tsv(args.short)[:args.limit]} if args.short else {}
    if args.bands:
        extra |= {f.stem: read_tsv(f)[:args.limit] for f in sorted(Path(args.bands).glob("*.tsv"))}
    if args.out is not None:
        output_file(args.out)
    torch.set_num_threads(args.threads)
    one_model = Path(args.candidate).resolve() == Path(args.baseline).resolve() and not args.baseline_measured
    bundles = {role: load_checkpoint(getattr(args, role), device=args.device) for role in ("baseline", "candidate")
               if role not in measured and not (role == "candidate" and one_model)}
    device = "numbers read from files"
    for role, bundle in bundles.items():
        device = describe_device(bundle.model.device)
        with tqdm(total=sum(map(len, (sets | extra).values())), desc=f"{role} {bundle.path}", unit="sentence") as bar:
            measured[role] = measure(bundle, bundle.path, sets, args.beam, args.no_repeat_ngram, extra,
                                     on_batch=bar.update)
    if one_model:
        measured.setdefault("candidate", measured["baseline"])      # one model: its numbers, measured once
    print(f"device: {device}; beam {args.beam}"
          f"{''.join(f'; {r} from {f}' for r in ('baseline', 'candidate') if (f := getattr(args, f'{r}_measured')))}"
          f"{'; no repeated %d-grams' % args.no_repeat_ngram if args.no_repeat_ngram else ''}; "
          f"{len(sets.get('dev', []))} dev, {len(sets['test'])} test, {len(sets['everyday'])} everyday"
          f"{', %d everyday corpus test' % len(sets['modern']) if 'modern' in sets else ''} pairs\n")
    print(table(measured["candidate"], measured["baseline"]), "\n")
    verdict = RULES[args.rule](measured["candidate"], measured["baseline"])
    for rule, holds in verdict.items():
        print(f"{'✓' if holds else '✗'} {rule}")
    ship = all(verdict.values())
    print("\nship the candidate" if ship else "\nkeep the shipped model")
    if args.out:
        write_replacing(args.out, json.dumps({role: m.to_json() for role, m in measured.items()} |
                                             {"rules": verdict, "ship": ship}, indent=2) + "\n")
    return 0 if ship else 1


def read_measurement(path: str, role: str) -> Measurement:
    """The baseline's or candidate's numbers in an earlier `judge --out` file; ValueError when it is not one."""
    try:
        return Measurement(**json.loads(Path(path).read_text(encoding="utf-8"))[role])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"--{role}-measured {path}: not a judge --out file with a {role} ({e})") from None


if __name__ == "__main__":
    raise SystemExit(main())
