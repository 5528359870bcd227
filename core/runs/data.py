"""A run's data: the text cleaned, tokenized and cut into training and validation pieces, and the minibatches.

Two ways to cut (the config's `split`): the book's, a fixed number of overlapping windows (stride one) for
training and then for validation, each window starting from a zero state; and the whole corpus, the first
90% read as `batch_size` parallel streams in order (so the state can be carried), the last 10% held out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import torch

from core.checks import check_int
from core.runs.config import TrainConfig
from core.text.corpus import clean
from core.text.tokens import build_vocab, bytes_per_token


@dataclass
class Data:
    vocab: object
    cleaning: str
    train_x: torch.Tensor | None = None   # book split: windows (n, num_steps)
    train_y: torch.Tensor | None = None
    val_x: torch.Tensor | None = None
    val_y: torch.Tensor | None = None
    train_ids: torch.Tensor | None = None  # whole split: token streams
    val_ids: torch.Tensor | None = None
    bytes_per_token: float = 1.0
    train_stream: torch.Tensor | None = None  # book split: the tokens the windows are cut from:
    val_stream: torch.Tensor | None = None    # train_x[w, t] = train_stream[w + t], val_x[w, t] = val_stream[w + t]


def _book_windows(config: TrainConfig, ids: torch.Tensor, vocab, cleaning: str) -> tuple[Data, torch.Tensor]:
    need = config.num_train + config.num_val + config.num_steps
    if len(ids) < need:
        raise ValueError(f"The text has {len(ids):,} tokens; {config.num_train:,} training and {config.num_val:,} "
                         f"validation windows of {config.num_steps} need {need:,}. Lower num_train/num_val "
                         "or use the whole-corpus split.")
    windows = ids.unfold(0, config.num_steps + 1, 1)[: config.num_train + config.num_val]
    X, Y = windows[:, :-1].contiguous(), windows[:, 1:].contiguous()
    val = slice(config.num_train, config.num_train + config.num_val)
    val_stream = ids[config.num_train: config.num_train + config.num_val + config.num_steps]
    data = Data(vocab, cleaning, X[: config.num_train], Y[: config.num_train], X[val], Y[val],
                train_stream=ids[: config.num_train + config.num_steps], val_stream=val_stream)
    return data, val_stream


def _whole_split(config: TrainConfig, ids: torch.Tensor, vocab, cleaning: str) -> tuple[Data, torch.Tensor]:
    n = len(ids)
    cut = int(n * 0.9)
    if cut < config.batch_size * (config.num_steps + 1) or n - cut < config.num_steps + 1:
        raise ValueError(f"The text has {n:,} tokens: too few for batch size {config.batch_size} with windows of "
                         f"{config.num_steps}. Lower the batch size or num_steps.")
    return Data(vocab, cleaning, train_ids=ids[:cut], val_ids=ids[cut:]), ids[cut:]


def prepare_data(config: TrainConfig, raw_text: str) -> Data:
    """Clean, tokenize and cut the text as the config says."""
    if not isinstance(raw_text, str) or not raw_text.strip():
        raise ValueError("The training text is empty.")
    text = clean(raw_text, config.cleaning)
    vocab = build_vocab(text, config.tokenizer, config.bpe_vocab)
    ids = torch.as_tensor(vocab.encode(text), dtype=torch.long)
    cut = _book_windows if config.split == "book" else _whole_split
    data, val_ids = cut(config, ids, vocab, config.cleaning)
    val_text = vocab.decode(val_ids.numpy())
    data.bytes_per_token = bytes_per_token(vocab, val_text, val_ids.numpy()) if val_text else 1.0
    return data


Batch = tuple[torch.Tensor, torch.Tensor, bool]   # inputs, targets, start from a zero state?


def book_windows(data: Data, part: str, index: torch.Tensor | slice) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets (batch, time) of the book split's training or validation windows at index (a tensor of
    window numbers or a slice). They are gathered time-major from the tokens the windows are cut from (step t of
    window w is token w + t), inputs and targets at once (the targets are the inputs one step on), and handed over
    as (batch, time) views: the fused RNN reads its tokens time-major, and so needs no copy of them."""
    xs, ys, stream = (data.train_x, data.train_y, data.train_stream) if part == "train" else \
        (data.val_x, data.val_y, data.val_stream)
    if stream is None:   # a Data made by hand, without the tokens
        return xs[index], ys[index]
    starts = torch.arange(len(xs))[index] if isinstance(index, slice) else index
    tokens = stream.take(torch.arange(xs.shape[1] + 1).unsqueeze(1) + starts)   # (time + 1, batch)
    return tokens[:-1].t(), tokens[1:].t()


def _batches_book(data: Data, config: TrainConfig, gen: torch.Generator) -> Iterator[Batch]:
    """The training windows in a random order, each from a zero state."""
    order = torch.randperm(len(data.train_x), generator=gen)
    for i in range(0, len(order), config.batch_size):
        yield *book_windows(data, "train", order[i: i + config.batch_size]), True


def _batches_whole(data: Data, config: TrainConfig, gen: torch.Generator) -> Iterator[Batch]:
    """Sequential partitioning: batch_size parallel streams from a random offset, windows in order."""
    ids = data.train_ids
    offset = int(torch.randint(0, config.num_steps, (1,), generator=gen))
    length = (len(ids) - offset - 1) // config.batch_size
    length -= length % config.num_steps
    xs = ids[offset: offset + config.batch_size * length].view(config.batch_size, length)
    ys = ids[offset + 1: offset + 1 + config.batch_size * length].view(config.batch_size, length)
    for i in range(0, length, config.num_steps):
        yield xs[:, i: i + config.num_steps], ys[:, i: i + config.num_steps], i == 0 or config.truncation == "fresh"


def batches(data: Data, config: TrainConfig, gen: torch.Generator) -> Iterator[Batch]:
    """One epoch of minibatches, in the order the config's split reads them."""
    return (_batches_book if config.split == "book" else _batches_whole)(data, config, gen)


def steps_per_epoch(data: Data, config: TrainConfig) -> int:
    if config.split == "book":
        return math.ceil(len(data.train_x) / config.batch_size)
    length = (len(data.train_ids) - config.num_steps) // config.batch_size
    return max(1, length // config.num_steps)


def partition_demo(n_tokens: int = 40, batch_size: int = 2, num_steps: int = 5, seed: int = 0,
                   shown: int = 3) -> dict[str, list[list[list[int]]]]:
    """The first `shown` minibatches of token positions 0..n_tokens-1 as training reads them, both ways (the book's
    9.3): random windows (split 'book': every window, in a random order, each from a zero state) and sequential
    partitioning (split 'whole': batch_size streams read in order, the state carried across). Made by the same
    functions training uses; each minibatch is a list of windows, each window its input positions."""
    n_tokens = check_int("tokens", n_tokens, 4, 1000)
    batch_size, num_steps = check_int("batch size", batch_size, 1, 16), check_int("time steps", num_steps, 1, 50)
    shown = check_int("minibatches shown", shown, 1, 20)
    if n_tokens < batch_size * num_steps + num_steps + 1:
        raise ValueError("Too few tokens for one minibatch of each kind: add tokens or shorten the windows.")
    stream = torch.arange(n_tokens)
    windows = n_tokens - num_steps
    book = Data(vocab=None, cleaning="", train_x=torch.zeros(windows, num_steps, dtype=torch.long),
                train_y=torch.zeros(windows, num_steps, dtype=torch.long), train_stream=stream)
    whole = Data(vocab=None, cleaning="", train_ids=stream)
    out = {}
    for split, data in (("random", book), ("sequential", whole)):
        config = TrainConfig(split="book" if split == "random" else "whole",
                             truncation="fresh" if split == "random" else "detach", batch_size=batch_size,
                             num_steps=num_steps)
        gen = torch.Generator().manual_seed(seed)
        out[split] = [x.tolist() for x, _, _ in list(batches(data, config, gen))[:shown]]
    return out
