"""How byte-level BPE learns: its merges in order, each with the number of times the pair occurred when it was
merged, and how a text is cut at a given vocabulary size.

Byte-level BPE starts from the 256 byte values, so a vocabulary of 256 holds no merge at all; every token
above 256 is one merge of two existing tokens, the most frequent adjacent pair in the training text at that
moment. The tokenizers library does not keep the counts, so merge_history() replays the merges on the
training text's words and counts each pair just before it is merged.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from core.checks import check_int
from core.text.tokens import BPEVocab

MAX_SHOWN = 200


@dataclass(frozen=True)
class Merge:
    rank: int      # 1 = the first merge (token id 256)
    left: str      # readable text of the two tokens merged (a space shows as ␣)
    right: str
    count: int     # adjacent occurrences of the pair in the training text just before this merge (as the trainer
                   # counts them: in 'aaa' the pair (a, a) occurs twice)

    @property
    def merged(self) -> str:
        return self.left + self.right


def readable(vocab: BPEVocab, symbol: str) -> str:
    """A byte-level symbol (GPT-2's printable stand-ins for bytes) as the text it stands for, spaces as ␣."""
    raw = vocab.symbol_bytes(symbol)
    return raw.decode("utf-8", errors="replace").replace(" ", "␣").replace("\n", "⏎")


def merges(vocab: BPEVocab) -> list[tuple[str, str]]:
    """The learnt merges in order, as pairs of byte-level symbols."""
    if not isinstance(vocab, BPEVocab):
        raise ValueError("Merges exist only for a BPE vocabulary.")
    pairs = json.loads(vocab.tokenizer.to_str())["model"]["merges"]
    return [tuple(p.split(" ", 1)) if isinstance(p, str) else (p[0], p[1]) for p in pairs]


def _words(vocab: BPEVocab, text: str) -> Counter:
    """The training text cut into words exactly as BPE training saw them (its pre-tokenizer), counted."""
    lines = text.splitlines(keepends=True)
    words: Counter = Counter()
    for i in range(0, len(lines), 200):  # the same chunks core.text.tokens.train_bpe trains on
        chunk = "".join(lines[i:i + 200])
        words.update(w for w, _ in vocab.tokenizer.pre_tokenizer.pre_tokenize_str(chunk))
    return words


def merge_history(vocab: BPEVocab, text: str, first: int = 20) -> list[Merge]:
    """The first `first` merges of a BPE vocabulary trained on text, each with its pair count at merge time."""
    first = check_int("number of merges", first, 1, MAX_SHOWN)
    todo = merges(vocab)[:first]
    words = {tuple(w): n for w, n in _words(vocab, text).items()}
    out = []
    for rank, (a, b) in enumerate(todo, 1):
        count = sum(n for symbols, n in words.items() for x, y in zip(symbols, symbols[1:]) if x == a and y == b)
        words = _apply(words, a, b)
        out.append(Merge(rank, readable(vocab, a), readable(vocab, b), count))
    return out


def _apply(words: dict, a: str, b: str) -> dict:
    """Every word with each adjacent (a, b), read left to right, replaced by the one symbol a + b."""
    merged: dict = {}
    for symbols, n in words.items():
        i, new = 0, []
        while i < len(symbols):
            if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
                new.append(a + b)
                i += 2
            else:
                new.append(symbols[i])
                i += 1
        merged[tuple(new)] = merged.get(tuple(new), 0) + n
    return merged


def segment(vocab: BPEVocab, text: str) -> list[str]:
    """text cut into the vocabulary's tokens, each as readable text."""
    if not isinstance(text, str):
        raise ValueError("Type some text to cut into tokens.")
    return [readable(vocab, vocab.tokenizer.id_to_token(int(i))) for i in vocab.encode(text)]
