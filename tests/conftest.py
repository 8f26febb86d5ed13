import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model.nn.config import TransformerConfig  # noqa: E402
from model.training.tasks import toy_tokenizer  # noqa: E402
from model.nn.transformer import Transformer  # noqa: E402

torch.set_num_threads(2)


def tiny_config(**overrides) -> TransformerConfig:
    base = dict(vocab_size=len(toy_tokenizer().backend.get_vocab()), d_model=32, n_heads=2,
                n_encoder_layers=2, n_decoder_layers=2, d_ff=64, dropout=0.0, max_len=64)
    base.update(overrides)
    return TransformerConfig(**base)


@pytest.fixture
def tiny_model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config()).eval()


@pytest.fixture
def batch():
    """Two source sentences (the second padded) and teacher-forcing targets."""
    src = torch.tensor([[3, 4, 5, 6, 2], [7, 8, 2, 0, 0]])
    tgt = torch.tensor([[1, 6, 5, 4], [1, 8, 7, 0]])
    return src, tgt


# -- a real browser: one app server and one Chromium per test module that asks for them -------------------
@pytest.fixture(scope="module")
def app_url():
    from browser_utils import streamlit_server
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="module")
def chromium():
    import shutil
    from browser_utils import CHROMIUM, browser
    if not shutil.which(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium", pytrace=False)
    with browser() as b:
        yield b


# The fast tier (README): `python -m pytest -m "not browser and not slow"`, a few minutes without root. "slow": the
# files that build a virtual environment, run nginx, Redis or Debian's corpora (installed by tests/run_all.sh as
# root), start more Pythons (the commands, two DDP ranks), or run for long; a few tests elsewhere carry
# @pytest.mark.slow themselves (a command run, a measurement over 200 sentences). The README's full command runs them all.
SLOW_FILES = {"test_install.py", "test_deploy.py", "test_class_store.py", "test_page_class_redis.py",
              "test_class_random.py", "test_data.py", "test_everyday.py", "test_cli.py", "test_toy_training.py",
              "test_judge.py", "test_ddp.py"}


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
        if item.path.name.startswith("test_browser"):       # a Chromium test, marked or not
            item.add_marker(pytest.mark.browser)
