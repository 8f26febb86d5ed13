"""Training past one process with torch's own engine: two gloo ranks on this CPU (127.0.0.1 only) take
the steps one process takes on the same global batches, and end with identical weights."""
import socket

import pytest
import torch
import torch.multiprocessing as mp

from model.training.runtime import Runtime
from model.training.toy import train_toy

STEPS, BATCH = 4, 12
SETTINGS = dict(steps=STEPS, size="tiny", batch_size=BATCH, warmup=2, seed=0, eval_every=STEPS)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank: int, world: int, port: int, folder: str) -> None:
    """What torchrun would start: the environment it sets, then the trainer."""
    import os

    from model.training.runtime import start_runtime, stop_runtime

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank),
                      WORLD_SIZE=str(world))
    torch.set_num_threads(1)
    rt = start_runtime("cpu")
    try:
        result = train_toy("reverse", rt=rt, **SETTINGS)
        torch.save(result.model.state_dict(), f"{folder}/rank{rank}.pt")   # test scratch only
    finally:
        stop_runtime(rt)


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ddp")
    mp.spawn(rank_main, args=(2, free_port(), str(folder)), nprocs=2, join=True)
    return [torch.load(folder / f"rank{r}.pt") for r in range(2)]


def test_both_ranks_hold_identical_weights(ranks):
    first, second = ranks
    assert all(torch.equal(first[k], second[k]) for k in first)


def test_two_ranks_match_one_process_on_the_same_global_batches(ranks):
    """Within float tolerance, except the key biases: adding b_k to every key adds the same number to a
    query's every score, which softmax ignores, so their gradient is 0 up to rounding, and Adam turns
    rounding noise of either sign into steps of about the learning rate."""
    torch.set_num_threads(1)
    alone = train_toy("reverse", rt=Runtime(torch.device("cpu")), **SETTINGS).model.state_dict()
    start = train_toy("reverse", rt=Runtime(torch.device("cpu")), **{**SETTINGS, "steps": 0}).model.state_dict()
    for name, value in ranks[0].items():
        if name.endswith("w_k.bias"):
            assert (value - alone[name]).abs().max() <= 2 * STEPS * 2e-3      # peak_lr of train_toy
        else:
            torch.testing.assert_close(value, alone[name], atol=1e-6, rtol=1e-5, msg=name)
    assert any(not torch.equal(ranks[0][k], start[k]) for k in start)   # they did train
