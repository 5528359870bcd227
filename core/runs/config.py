"""A training run's settings, each declared once, and the presets.

Every field of TrainConfig is a `setting(...)`: its type (a `Literal` for a choice), default, range, label and
help live on that one line. SETTINGS reads them back; the checks below, the Training page's form, the URL and
the command line's `--set NAME=VALUE` are all derived from it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Literal, Sequence

import torch

from core.nn.cells import CELL_NAMES, CELLS
from core.text.corpus import CLEANINGS
from core.nn.device import DEVICES
from core.nn.models import ModelSpec, RNNLM
from core.i18n import N_
from core.settings import Setting, as_text, declared, setting, short

DATA, MODEL, OPTIMISATION = N_("Data"), N_("Model"), N_("Optimisation")   # the form's sections, in order
FORM_GROUPS = (DATA, MODEL, OPTIMISATION)


@dataclass(frozen=True)
class TrainConfig:
    """Every setting of a run. Construct it with keywords; invalid values raise ValueError."""

    tokenizer: Literal["char", "bpe"] = setting(
        "char", N_("Tokens"), N_("Single characters, or subwords learnt by byte-level BPE."), group=DATA,
        words={"char": N_("characters"), "bpe": N_("BPE")})
    bpe_vocab: int = setting(1024, N_("BPE vocabulary"), N_("How many token types byte-level BPE learns (256 bytes, then "
                             "one per merge)."), lo=256, hi=4096, step=256, group=DATA,
                             only_when=("tokenizer", ("bpe",)))
    split: Literal["book", "whole"] = setting(
        "book", N_("Split"), N_("book: the first training windows, then the validation windows; whole: 90% / 10%."),
        group=DATA, words={"book": N_("book windows"), "whole": N_("whole corpus 90/10")})
    cleaning: Literal[CLEANINGS] = setting(
        "letters", N_("Cleaning"), N_("letters: lower-case letters and spaces, as the book; punctuation: keep it."),
        group=DATA, words={"letters": N_("letters"), "punctuation": N_("punctuation")})
    num_train: int = setting(10_000, N_("Training windows"), N_("Windows of tokens (stride one) to train on."), lo=1,
                             hi=1_000_000, group=DATA, only_when=("split", ("book",)))
    num_val: int = setting(5_000, N_("Validation windows"), N_("The windows after them, held out."), lo=1, hi=1_000_000,
                           group=DATA, only_when=("split", ("book",)))
    truncation: Literal["fresh", "detach"] = setting(
        "fresh", N_("Between windows"),
        N_("fresh: zero state per window; detach: carry the state, cut the gradient."),
        group=DATA, words={"fresh": N_("fresh zero state"), "detach": N_("carry state (detach)")},
        only_when=("split", ("whole",)))
    cell: Literal[CELL_NAMES] = setting(
        "rnn", N_("Cell"), N_("The recurrent cell (core.nn.cells)."), group=MODEL, widget="select",
        words={name: c.label for name, c in CELLS.items()})
    hidden_size: int = setting(32, N_("Hidden units"), N_("Size of the hidden state."), lo=1, hi=2048, group=MODEL)
    embed_dim: int = setting(0, N_("Embedding (0 = one-hot)"), lo=0, hi=1024, group=MODEL)
    num_layers: int = setting(1, N_("Layers"), lo=1, hi=4, group=MODEL)
    dropout: float = setting(0.0, N_("Dropout"), lo=0.0, hi=0.9, group=MODEL, step=0.05)
    optimizer: Literal["sgd", "adam"] = setting(
        "sgd", N_("Optimizer"), group=OPTIMISATION, widget="select", words={"sgd": N_("SGD"), "adam": N_("Adam (AdamW)")})
    lr: float = setting(1.0, N_("Learning rate"), lo=1e-5, hi=100.0, group=OPTIMISATION)
    clip: float = setting(1.0, N_("Clip norm (0 = off)"), N_("Global gradient-norm threshold θ."), lo=0.0, hi=1000.0,
                          group=OPTIMISATION)
    epochs: int = setting(100, N_("Epochs"), lo=1, hi=10_000, group=OPTIMISATION)
    batch_size: int = setting(1024, N_("Batch size"), lo=1, hi=8192, group=OPTIMISATION)
    num_steps: int = setting(32, N_("Time steps per window"), N_("How many tokens one window holds, and how far back "
                             "the gradient flows."), lo=1, hi=512, group=OPTIMISATION)
    seed: int = setting(0, N_("Seed"), lo=0, hi=2**31 - 1, group=OPTIMISATION)
    device: Literal[DEVICES] = setting("auto", N_("Device"), N_("auto: a CUDA GPU when there is one."), group=OPTIMISATION,
                                       words={"auto": N_("auto")})
    lr_decay: Literal["none", "cosine"] = setting("none", N_("Learning-rate schedule"), group=OPTIMISATION,
                                                  words={"none": N_("none"), "cosine": N_("cosine")})
    # Not on the form (the command line and presets set them):
    weight_decay: float = setting(0.0, N_("Weight decay"), lo=0.0, hi=1.0)
    sample_prefix: str = setting("time traveller", N_("Sample prefix"), lo=0, hi=200)
    sample_length: int = setting(80, N_("Sample length"), lo=1, hi=2000)
    sample_temperature: float = setting(0.8, N_("Sample temperature (0 = greedy)"), N_("The temperature of the sample "
                                        "written after each epoch; 0 always takes the likeliest character."),
                                        lo=0.0, hi=10.0)
    max_seconds: float = setting(0.0, N_("Time limit in seconds (0 = none)"), lo=0.0, hi=1e7)
    threads: int = setting(0, N_("CPU threads (0 = the process's)"), N_("Threads a run on the CPU uses. A fixed count "
                           "repeats a run to the last digit on one machine whatever its cores: a matrix product "
                           "splits its sums by thread."), lo=0, hi=256)
    blocks: int = setting(1, N_("Batch blocks"), N_("A batch's rows cut into this many blocks, each computed on one CPU "
                          "thread and, where the run has the threads, in a process of its own (one tanh layer over "
                          "one-hot tokens on the book split, on the CPU; other runs ignore it). The numbers depend on "
                          "the blocks, not on the threads."), lo=1, hi=16)
    init: Literal["default", "book"] = setting(
        "default", N_("Initialisation"), N_("default: PyTorch's; book: the book's scratch RNN (weights N(0, 0.01²), "
        "biases 0, one hidden bias)."))

    def __post_init__(self):
        for s in SETTINGS.values():
            s.check(getattr(self, s.name))
        self.spec(2)  # the model's own rules (a scratch RNN has one layer)
        if self.split == "book" and self.truncation == "detach":
            raise ValueError("With the book's split the training windows are shuffled, so each starts from a "
                             "zero state: use truncation 'fresh', or the whole-corpus split to carry the state.")

    def spec(self, vocab_size: int) -> ModelSpec:
        return ModelSpec(vocab_size, self.hidden_size, self.cell, self.embed_dim, self.num_layers, self.dropout)

    def model(self, vocab_size: int, device: torch.device | str = "cpu") -> RNNLM:
        """The run's model before its first step: built from the seed and initialised on the CPU, then moved, so a
        run starts from the same weights on every device."""
        spec = self.spec(vocab_size)
        torch.manual_seed(self.seed)
        net = RNNLM(spec)
        if self.init == "book":
            net.init_book()
        return net.to(device)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        """The settings a stored run was trained with. A setting the run does not name is one added after it was
        stored, and gets its default (what every run had before the setting existed); one it names by an older
        name (RENAMED) is read by its name now."""
        d = {RENAMED.get(k, k): v for k, v in d.items()}
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"Unknown training settings: {', '.join(sorted(map(short, unknown)))}.")
        return cls(**d)

    def same_run(self, stored: dict) -> bool:
        """Whether a stored run's settings (a run file's config) are these, the settings it does not name at their
        defaults (a run stored before they existed); False for settings that are not a run's."""
        try:
            return TrainConfig.from_dict(stored) == self
        except (TypeError, ValueError):
            return False


RENAMED = {"shards": "blocks"}   # a setting's older name, as runs stored before the rename have it -> its name now
SETTINGS: dict[str, Setting] = declared(TrainConfig)
FORM_SETTINGS: tuple[str, ...] = tuple(n for n, s in SETTINGS.items() if s.group)


@dataclass(frozen=True)
class Preset:
    name: str
    label: str
    note: str
    config: TrainConfig


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("book", N_("Book"), N_("The book's run: characters, 10,000 training windows of 32, 32 hidden units, SGD at "
           "lr 1, 100 epochs."), TrainConfig(init="book", blocks=2)),   # two blocks: both cores of a small machine
    Preset("bpe", N_("BPE"), N_("RNN Lab's own subword setup (the chapter trains on characters only): byte-level BPE "
           "with 1,024 tokens, embedding 64, 128 hidden units, 10 epochs."),
           TrainConfig(tokenizer="bpe", bpe_vocab=1024, embed_dim=64, hidden_size=128, lr=4.0, epochs=10,
                       num_train=50_000, num_val=3_000)),
    Preset("whole", N_("Whole"), N_("The whole corpus (90% / 10%), state carried across windows, 256 units, Adam: about "
           "a minute of CPU."), TrainConfig(split="whole", truncation="detach", hidden_size=256, optimizer="adam",
                                            lr=5e-3, lr_decay="cosine", clip=5.0, epochs=30, batch_size=32,
                                            num_steps=64)),
    Preset("passage", N_("Passage"), N_("The chapter's Act 4: the book's algorithm (tanh cell, one-hot input, BPTT, "
           "clipping, minibatch SGD) memorising one passage, the first 432 cleaned characters of the corpus. "
           "Perplexity falls from the vocabulary size to about 1.1 in a few seconds; the 200 windows after the "
           "passage are held out, and their perplexity rises: it learns the passage, not English."),
           TrainConfig(init="book", num_train=400, num_val=200, num_steps=32, hidden_size=128, lr=2.0,
                       epochs=60, batch_size=32, sample_prefix="the time traveller", sample_length=60,
                       sample_temperature=0.0, threads=1)),   # one thread: the same run wherever it is retrained
    Preset("tiny", N_("Tiny"), N_("Three quick epochs of a small model: seconds, for trying the controls."),
           TrainConfig(split="whole", truncation="detach", hidden_size=64, optimizer="adam", lr=1e-2, epochs=3,
                       batch_size=64, num_steps=32)),
)}


def with_overrides(base: TrainConfig, items: Sequence[str], **fixed) -> TrainConfig:
    """base with NAME=VALUE strings applied, each parsed by its setting's declaration."""
    overrides = dict(fixed)
    for item in items:
        name, sep, value = item.partition("=")
        name = RENAMED.get(name, name)
        if name not in SETTINGS:
            raise ValueError(f"unknown setting {short(name)} (use NAME=VALUE with one of: {', '.join(SETTINGS)})")
        if not sep:
            raise ValueError(f"--set {name} needs a value: --set {name}=VALUE")
        overrides[name] = SETTINGS[name].parse(value)
    return replace(base, **overrides)


def config_overrides(base: TrainConfig, config: TrainConfig, names: Sequence[str] = FORM_SETTINGS) -> dict[str, str]:
    """The settings among names where config differs from base, as NAME -> text (what a URL carries)."""
    return {n: as_text(getattr(config, n)) for n in names if getattr(config, n) != getattr(base, n)}


def parse_overrides(base: TrainConfig, raw: dict[str, str]) -> tuple[TrainConfig, list[str]]:
    """base with the valid NAME -> text settings of raw applied, and a message for each one left out."""
    good: dict[str, object] = {}
    problems: list[str] = []
    for name, value in raw.items():
        if name not in SETTINGS:
            problems.append(f"unknown setting {short(name)}")
            continue
        try:
            value = SETTINGS[name].parse(value)
            replace(base, **{name: value})  # fine with the rest of base (e.g. no carried state with book windows)
            good[name] = value
        except ValueError as exc:
            problems.append(str(exc))
    try:
        return replace(base, **good), problems
    except ValueError as exc:  # each setting fine alone, not together (e.g. book windows with a carried state)
        return base, problems + [f"{exc} (kept the preset's settings)"]
