"""The translation trainer on a tiny corpus: logs, checkpoints, and resumes where it stopped."""
import csv
import json

import torch

from model.io.checkpoint import load_checkpoint
from model.io.tokenizer import Tokenizer
from model.cli.train import main as train_main
from model.training.runtime import lr_at


def tiny_corpus(folder):
    pairs = [("the man went to the house", "el hombre fue a la casa"),
             ("the woman saw the dog", "la mujer vio el perro"),
             ("god made the light", "dios hizo la luz"),
             ("the king spoke", "el rey habló")] * 6
    folder.mkdir()
    for split in ("train", "dev"):
        with open(folder / f"{split}.tsv", "w", encoding="utf-8") as f:
            f.write("en\tes\n" + "".join(f"{a}\t{b}\n" for a, b in pairs))
    Tokenizer.train_bpe([t for p in pairs for t in p], vocab_size=300).save(folder / "tokenizer.json")
    return folder


def args(data, out, epochs):
    return ["--task", "translate", "--data", str(data), "--out", str(out), "--epochs", str(epochs),
            "--d-model", "32", "--heads", "2", "--layers", "1", "--d-ff", "64", "--max-tokens", "200",
            "--warmup", "5", "--log-every", "2", "--eval-every", "4", "--threads", "1"]


def test_train_then_resume(tmp_path):
    data = tiny_corpus(tmp_path / "data")
    out = tmp_path / "run"
    train_main(args(data, out, 1))
    state = json.loads((out / "last" / "state.json").read_text())
    assert state["epoch"] == 1 and state["step"] > 0
    first = load_checkpoint(out / "last").model.state_dict()
    train_main(args(data, out, 2) + ["--resume"])
    resumed = json.loads((out / "last" / "state.json").read_text())
    assert resumed["epoch"] == 2 and resumed["step"] == 2 * state["step"]
    second = load_checkpoint(out / "last").model.state_dict()
    assert any(not torch.equal(first[k], second[k]) for k in first)       # it kept learning
    rows = list(csv.DictReader(open(out / "train_log.csv")))
    assert rows[0].keys() >= {"step", "train_loss", "dev_loss", "lr", "tokens_per_s"}
    assert [int(r["step"]) for r in rows] == sorted(int(r["step"]) for r in rows)   # one log, appended
    assert any(r["dev_loss"] for r in rows)
    assert (out / "epoch002" / "model.safetensors").is_file()


def test_learning_rate_warms_up_then_decays():
    assert lr_at(1, 1e-3, 100) < lr_at(50, 1e-3, 100) < lr_at(100, 1e-3, 100) == 1e-3
    assert lr_at(400, 1e-3, 100) == 1e-3 / 2


def test_init_from_starts_with_a_models_weights_and_a_fresh_optimizer(tmp_path):
    """How the shipped en-es model trains further without its optimizer state (not kept in the repo)."""
    data = tiny_corpus(tmp_path / "data")
    train_main(args(data, tmp_path / "first", 2))
    start = load_checkpoint(tmp_path / "first" / "last")
    train_main(args(data, tmp_path / "fresh", 1))
    train_main(args(data, tmp_path / "second", 1) + ["--init-from", str(tmp_path / "first" / "last")])
    first_loss = lambda run: float(next(csv.DictReader(open(tmp_path / run / "train_log.csv")))["train_loss"])  # noqa: E731
    assert first_loss("second") < first_loss("fresh")                   # it began where the first run ended
    assert json.loads((tmp_path / "second" / "last" / "state.json").read_text())["epoch"] == 1   # fresh count
    assert load_checkpoint(tmp_path / "second" / "last").config == start.config


def test_a_time_budget_stops_at_a_log_step_and_resume_finishes_the_run(tmp_path):
    """--max-minutes: a GPU lease or a CI job ends mid-epoch; the run goes on where it stopped."""
    data = tiny_corpus(tmp_path / "data")
    out = tmp_path / "run"
    train_main(args(data, out, 2) + ["--max-minutes", "0"])
    stopped = json.loads((out / "last" / "state.json").read_text())
    assert stopped["step"] == 2 and stopped["epoch"] == 0                  # the first log step (--log-every 2)
    assert not (out / "epoch001").exists()
    train_main(args(data, out, 2) + ["--resume"])
    finished = json.loads((out / "last" / "state.json").read_text())
    train_main(args(data, tmp_path / "whole", 2))
    assert finished == json.loads((tmp_path / "whole" / "last" / "state.json").read_text()) | {
        "seconds": finished["seconds"]}                                   # same steps, epochs, tokens
