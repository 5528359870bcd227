"""The book's own concise RNN run (d2l 1.0.3's RNN, RNNLM, TimeMachine and Trainer: the chapter's 'concise
implementation' section), timed as a whole process. Only the d2l package is used; nothing of it is copied here.

    python bench/d2l_concise.py [--epochs 100] [--gpu]

Needs the d2l package (pip install d2l==1.0.3 --no-deps, plus matplotlib, matplotlib-inline, pandas and
requests); torchvision, which d2l imports but an RNN never uses, is stood in for when it is missing. The corpus
is RNNLAB_CORPUS's file (d2l finds it by its sha1 and downloads nothing). Its progress plot is turned off (no
notebook to draw in). --gpu trains on the first GPU, as d2l's Trainer(num_gpus=1) does. Prints one line:
seconds in the process, validation perplexity.
bench/train_speed.py --d2l runs this beside RNN Lab's run, interleaved.
"""

HELPER_OF = 'train_speed.py'   # runs inside that bench, not on its own (tests/test_benches.py)

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
import types
from pathlib import Path

START = time.perf_counter()


def import_d2l():
    try:
        import torchvision  # noqa: F401
    except ImportError:
        stand_in = types.ModuleType("torchvision")
        stand_in.transforms = types.ModuleType("torchvision.transforms")
        sys.modules.update({"torchvision": stand_in, "torchvision.transforms": stand_in.transforms})
    try:
        import d2l.torch as d2l
    except ImportError as exc:
        raise SystemExit(f"This bench needs the d2l package ({exc}): pip install d2l==1.0.3 --no-deps matplotlib "
                         "matplotlib-inline pandas requests, in a virtual environment of its own.") from None
    return d2l


def main(epochs: int, gpus: int = 0) -> tuple[float, float]:
    import torch
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from core.text.corpus import find_corpus
    d2l = import_d2l()
    with tempfile.TemporaryDirectory() as tmp:   # d2l reads ../data/timemachine.txt, from a folder beside it
        (Path(tmp) / "data").mkdir()
        (Path(tmp) / "work").mkdir()
        shutil.copy(find_corpus(download=False), Path(tmp) / "data" / "timemachine.txt")
        here = os.getcwd()
        os.chdir(Path(tmp) / "work")
        try:
            data = d2l.TimeMachine(batch_size=1024, num_steps=32)
        finally:
            os.chdir(here)
    rnn = d2l.RNN(num_inputs=len(data.vocab), num_hiddens=32)
    model = d2l.RNNLM(rnn, vocab_size=len(data.vocab), lr=1)
    model.board.display = False
    trainer = d2l.Trainer(max_epochs=epochs, gradient_clip_val=1, num_gpus=gpus)
    trainer.fit(model, data)
    total, count = 0.0, 0
    with torch.no_grad():
        for X, Y in data.val_dataloader():
            X, Y = trainer.prepare_batch((X, Y))   # onto the GPU when it trained there
            total += float(model.loss(model(X), Y)) * Y.numel()
            count += Y.numel()
    return time.perf_counter() - START, math.exp(total / count)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--gpu", action="store_true", help="train on the first GPU")
    args = ap.parse_args()
    seconds, ppl = main(args.epochs, 1 if args.gpu else 0)
    print(f"d2l concise: {seconds:.2f} s, validation perplexity {ppl:.3f}")
