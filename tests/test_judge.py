"""The ship-or-keep rule for a retrained model (model/training/judge.py) and the judge command."""
import csv
import json
from dataclasses import replace

import pytest

from conftest import ROOT
from model.cli.judge import main as judge_main
from model.cli.train import main as train_main
from model.cli.export import main as export_main
from model.training.judge import Measurement, rules
from test_train_translation import args, tiny_corpus

BASELINE = Measurement(dev={"bleu": 30.0, "chrf": 52.0}, test={"bleu": 30.8, "chrf": 52.2},
                       everyday={"bleu": 3.0, "chrf": 25.0}, repeats=4, parameters=9_600_000,
                       weights_bytes=15_200_000)
BETTER = replace(BASELINE, dev={"bleu": 33.0, "chrf": 54.0}, test={"bleu": 33.5, "chrf": 54.5},
                 everyday={"bleu": 4.0, "chrf": 27.0}, repeats=1)


def test_a_model_better_by_every_rule_ships():
    assert all(rules(BETTER, BASELINE).values())


@pytest.mark.parametrize("change, broken", [
    (dict(dev={"bleu": 29.9, "chrf": 54.0}), "dev improves"),
    (dict(test={"bleu": 33.5, "chrf": 52.1}), "test improves"),                 # BLEU up, chrF down
    (dict(repeats=4), "repeats itself less"),
    (dict(everyday={"bleu": 9.0, "chrf": 24.9}), "no worse on everyday"),
    (dict(parameters=12_000_001), "at most 12M parameters"),
    (dict(weights_bytes=25_000_001), "weights at most 25 MB"),
])
def test_each_rule_alone_keeps_the_shipped_model(change, broken):
    verdict = rules(replace(BETTER, **change), BASELINE)
    assert [rule for rule, holds in verdict.items() if not holds] == [r for r in verdict if r.startswith(broken)]


def test_no_repeats_in_either_passes_the_repeat_rule():
    assert rules(replace(BETTER, repeats=0), replace(BASELINE, repeats=0))["repeats itself less"]


def test_judge_measures_two_trained_models_and_says_which_ships(tmp_path, capsys):
    """Two tiny runs, one trained longer, exported as shipped; the judge runs the whole path."""
    data = tiny_corpus(tmp_path / "data")
    (data / "test.tsv").write_bytes((data / "dev.tsv").read_bytes())
    for name, epochs in (("short", 1), ("long", 6)):
        train_main(args(data, tmp_path / name, epochs))
        export_main(["--run", str(tmp_path / name), "--out", str(tmp_path / f"{name}-shipped")])
    (tmp_path / "bands").mkdir()
    (tmp_path / "bands" / "bible_le30.tsv").write_bytes((data / "dev.tsv").read_bytes())
    code = judge_main(["--candidate", str(tmp_path / "long-shipped"), "--baseline", str(tmp_path / "short-shipped"),
                       "--data", str(data), "--beam", "2", "--threads", "1", "--out", str(tmp_path / "judge.json"),
                       "--short", str(data / "dev.tsv"), "--bands", str(tmp_path / "bands"), "--no-repeat-ngram", "2"])
    said = capsys.readouterr().out
    report = json.loads((tmp_path / "judge.json").read_text())
    assert code == (0 if report["ship"] else 1)
    assert report["candidate"]["dev"]["chrf"] > report["baseline"]["dev"]["chrf"]    # it learned more
    assert report["candidate"]["parameters"] == report["baseline"]["parameters"] < 100_000
    assert "dev BLEU / chrF" in said and ("ship the candidate" in said or "keep the shipped model" in said)
    assert all(f"{'✓' if holds else '✗'} {rule}" in said for rule, holds in report["rules"].items())
    assert report["baseline"]["everyday"] and ROOT.joinpath("docs/examples/everyday.tsv").is_file()
    # the sets no rule reads: measured with their repeats and shown
    for role in ("baseline", "candidate"):
        assert set(report[role]["extra"]) == {"short", "bible_le30"}
        assert report[role]["extra"]["short"]["pairs"] == 24
        assert report[role]["extra"]["bible_le30"]["chrf"] == report[role]["dev"]["chrf"]     # the same pairs
    # the numbers again from the file, nothing decoded: the same verdict
    again = judge_main(["--candidate", "unused", "--baseline", "unused", "--data", str(data),
                        "--baseline-measured", str(tmp_path / "judge.json"),
                        "--candidate-measured", str(tmp_path / "judge.json")])
    assert again == code and "numbers read from files" in capsys.readouterr().out
    with pytest.raises(ValueError, match="not a judge --out file"):
        judge_main(["--candidate", "unused", "--data", str(data), "--baseline-measured", str(data / "dev.tsv")])
    assert "bible_le30 (24) BLEU / chrF / repeats" in said and "no repeated 2-grams" in said


def test_a_sweep_trains_each_setting_and_ranks_them_on_dev(tmp_path, capsys):
    from model.cli.sweep import main as sweep_main

    data = tiny_corpus(tmp_path / "data")
    common = " ".join(args(data, tmp_path, 1)[8:])                  # the tiny shape and logging flags
    grid = {"lr-low": {"--lr": "1e-4"}, "lr-high": {"--lr": "3e-3"}}
    argv = ["--data", str(data), "--out", str(tmp_path / "sweep"), "--minutes", "0", "--parallel", "2",
            "--grid", json.dumps(grid), "--common", common, "--device", "cpu"]
    assert sweep_main(argv) == 0
    rows = list(csv.DictReader(open(tmp_path / "sweep" / "sweep.csv")))
    assert {r["name"] for r in rows} == set(grid)
    assert [float(r["dev_bleu"]) for r in rows] == sorted((float(r["dev_bleu"]) for r in rows), reverse=True)
    assert all(r["step"] == "2" for r in rows)                       # --minutes 0: stopped at the first log step
    assert sweep_main(argv) == 0                                     # again: each run goes on from where it stopped
    assert all(r["step"] == "4" for r in csv.DictReader(open(tmp_path / "sweep" / "sweep.csv")))
    assert f"best: {rows[0]['name']}" in capsys.readouterr().out


@pytest.mark.parametrize("case", ["missing candidate", "missing data", "unwritable out", "broken candidate"])
def test_judge_checks_every_argument_before_measuring_anything(tmp_path, monkeypatch, case):
    """A missing candidate folder printed nothing for minutes: the shipped model was measured first."""
    from model.cli import judge
    from model.io.checkpoint import CheckpointError
    measured = []
    monkeypatch.setattr(judge, "measure", lambda *a, **k: measured.append(a) or pytest.fail("measured"))
    data = tmp_path / "data"
    data.mkdir()
    for split in ("dev", "test"):
        (data / f"{split}.tsv").write_text("en\tes\na b\tb a\n", encoding="utf-8")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{}")
    argv = {"candidate": str(tmp_path / "no-such-model"), "data": str(data), "out": str(tmp_path / "j.json")}
    argv |= {"missing candidate": {}, "missing data": {"candidate": "toy-reverse", "data": str(tmp_path / "none")},
             "unwritable out": {"candidate": "toy-reverse", "out": str(tmp_path / "none" / "j.json")},
             "broken candidate": {"candidate": str(tmp_path / "broken")}}[case]
    with pytest.raises((CheckpointError, ValueError, OSError)):
        judge.main([f"--{k}={v}" for k, v in argv.items()] + ["--baseline", "toy-reverse"])
    assert measured == []


LEARNER_BASE = replace(BASELINE, dev=None, test={"bleu": 32.3, "chrf": 53.2}, modern={"bleu": 44.1, "chrf": 64.7},
                       extra={"short": {"bleu": 5.4, "chrf": 36.6, "repeats": 0, "pairs": 800},
                              "bible_61-90": {"bleu": 18.3, "chrf": 40.6, "repeats": 2, "pairs": 146}})
LEARNED = replace(LEARNER_BASE, test={"bleu": 32.1, "chrf": 53.0}, modern={"bleu": 44.5, "chrf": 64.9},
                  everyday={"bleu": 4.0, "chrf": 26.0},
                  extra={"short": {"bleu": 20.0, "chrf": 50.0, "repeats": 0, "pairs": 800},
                         "bible_61-90": {"bleu": 25.0, "chrf": 45.0, "repeats": 1, "pairs": 146}})


@pytest.mark.parametrize("change, broken", [
    (dict(extra={**LEARNED.extra, "short": {"bleu": 6, "chrf": 36.6, "repeats": 0, "pairs": 800}}), "short-utterance"),
    (dict(modern={"bleu": 44.0, "chrf": 65.0}), "everyday corpus test"),
    (dict(everyday={"bleu": 9.0, "chrf": 24.9}), "everyday sentences"),
    (dict(test={"bleu": 31.9, "chrf": 53.2}), "Bible test"),                      # under 32
    (dict(extra={**LEARNED.extra, "bible_61-90": {"bleu": 25, "chrf": 45, "repeats": 3, "pairs": 146}}), "long inputs"),
    (dict(weights_bytes=25_000_001), "weights at most 25 MB"),
])
def test_each_learner_rule_alone_keeps_the_shipped_model(change, broken):
    from model.training.judge import everyday_rules, learner_rules
    assert all(learner_rules(LEARNED, LEARNER_BASE).values())          # dev not measured: no rule of it reads it
    assert everyday_rules(LEARNED, LEARNER_BASE)
    verdict = learner_rules(replace(LEARNED, **change), LEARNER_BASE)
    assert [rule for rule, holds in verdict.items() if not holds] == [r for r in verdict if r.startswith(broken)]
