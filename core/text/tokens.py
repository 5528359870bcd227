"""From text to token ids: a character vocabulary, byte-level BPE (the `tokenizers` library), n-gram
statistics, and the parameter count of an n-gram table against an RNN."""
from __future__ import annotations

import collections
import hashlib
import json
import threading

import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from core.checks import check_int
from core.text.corpus import atomic_write, cache_dir

UNK = "<unk>"
UNK_CHAR = "\ufffd"  # how an unknown id prints when decoding characters
BPE_MIN, BPE_MAX = 256, 4096


def checked_ids(ids, vocab_size: int) -> np.ndarray:
    """ids as a flat int64 array, or ValueError when one lies outside the vocabulary."""
    ids = np.asarray(ids, dtype=np.int64).ravel()
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(f"ids must lie in 0..{vocab_size - 1}.")
    return ids


class _CountedVocab:
    """Tokens to ids, from a list that starts with <unk>, the others by falling frequency, ties alphabetical.
    A subclass names its kind and which tokens it holds (ok), and how a text splits into them (pieces)."""

    kind = ""
    holds = ""        # what its tokens are, in words, for the error message

    @staticmethod
    def ok(token: str) -> bool:
        raise NotImplementedError

    @staticmethod
    def pieces(text: str) -> list[str]:
        raise NotImplementedError

    def __init__(self, tokens: list[str]):
        if not tokens or tokens[0] != UNK or len(set(tokens)) != len(tokens):
            raise ValueError("A vocabulary is a list of distinct tokens starting with '<unk>'.")
        if not all(self.ok(t) for t in tokens[1:]):
            raise ValueError(f"This vocabulary holds {self.holds} only.")
        self.idx_to_token = list(tokens)
        self.token_to_idx = {t: i for i, t in enumerate(tokens)}

    @classmethod
    def build(cls, text: str, min_freq: int = 1):
        if not isinstance(text, str) or not cls.pieces(text):
            raise ValueError(f"Build a vocabulary from a text with at least one of its {cls.holds}.")
        min_freq = check_int("min_freq", min_freq, 1)
        counts = collections.Counter(cls.pieces(text))
        return cls([UNK, *sorted((t for t, n in counts.items() if n >= min_freq), key=lambda t: (-counts[t], t))])

    def __len__(self) -> int:
        return len(self.idx_to_token)

    def unknown(self, text: str) -> list[str]:
        """The distinct tokens of text that the vocabulary does not know."""
        return sorted({t for t in self.pieces(text) if t not in self.token_to_idx})

    def to_dict(self) -> dict:
        return {"kind": self.kind, "tokens": self.idx_to_token}


class CharVocab(_CountedVocab):
    """Characters to ids. Id 0 is <unk>; the others follow by falling frequency, ties alphabetical."""

    kind, holds = "char", "single characters"
    ok = staticmethod(lambda t: len(t) == 1)
    pieces = staticmethod(list)

    def __init__(self, tokens: list[str]):
        super().__init__(tokens)
        self._lookup = None

    def encode(self, text: str) -> np.ndarray:
        """Ids of the characters of text (unknown characters -> 0, never an error)."""
        if not isinstance(text, str):
            raise ValueError("encode takes a string.")
        if self._lookup is None:
            table = np.zeros(0x110000 if max(map(ord, self.idx_to_token[1:]), default=0) > 0xFFFF else 0x10000,
                             dtype=np.int64)
            for i, t in enumerate(self.idx_to_token[1:], start=1):
                table[ord(t)] = i
            self._lookup = table
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
        out = np.zeros(len(codes), dtype=np.int64)
        inside = codes < len(self._lookup)
        out[inside] = self._lookup[codes[inside]]
        return out

    def decode(self, ids) -> str:
        ids = checked_ids(ids, len(self))
        return "".join(UNK_CHAR if i == 0 else self.idx_to_token[i] for i in ids)

    def token_text(self, i: int) -> str:
        return self.idx_to_token[i]


class WordVocab(_CountedVocab):
    """Words (runs of non-space characters of the cleaned text) to ids, as the book counts them for Zipf's law and
    its n-gram statistics. Id 0 is <unk>; the others follow by falling frequency, ties alphabetical. A token's
    text carries the space after it, so n-grams joined read as text."""

    kind, holds = "word", "words without spaces"
    ok = staticmethod(lambda t: bool(t) and not any(c.isspace() for c in t))
    pieces = staticmethod(str.split)

    def encode(self, text: str) -> np.ndarray:
        """Ids of the words of text (unknown words -> 0, never an error)."""
        if not isinstance(text, str):
            raise ValueError("encode takes a string.")
        return np.array([self.token_to_idx.get(w, 0) for w in text.split()], dtype=np.int64)

    def decode(self, ids) -> str:
        ids = checked_ids(ids, len(self))
        return " ".join(UNK_CHAR if i == 0 else self.idx_to_token[i] for i in ids)

    def token_text(self, i: int) -> str:
        return (UNK if i == 0 else self.idx_to_token[i]) + " "


class BPEVocab:
    """A byte-level BPE tokenizer from the `tokenizers` library, with the same interface as CharVocab."""

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        byte_map = _bytes_to_unicode()
        self._unicode_to_byte = {v: k for k, v in byte_map.items()}

    def __len__(self) -> int:
        return self.tokenizer.get_vocab_size()

    @property
    def kind(self) -> str:
        return "bpe"

    def encode(self, text: str) -> np.ndarray:
        if not isinstance(text, str):
            raise ValueError("encode takes a string.")
        return np.asarray(self.tokenizer.encode(text).ids, dtype=np.int64)

    def decode(self, ids) -> str:
        ids = checked_ids(ids, len(self))
        return self.tokenizer.decode(ids.tolist(), skip_special_tokens=False)

    def symbol_bytes(self, symbol: str) -> bytes:
        """The bytes a byte-level symbol (GPT-2's printable stand-ins for bytes, as in merges) stands for."""
        return bytes(self._unicode_to_byte[c] for c in symbol)

    def token_bytes(self, i: int) -> bytes:
        return self.symbol_bytes(self.tokenizer.id_to_token(int(i)))

    def token_text(self, i: int) -> str:
        """A token as readable text (partial UTF-8 sequences shown with the replacement character)."""
        return self.token_bytes(i).decode("utf-8", errors="replace")

    def unknown(self, text: str) -> list[str]:
        return []  # byte-level: every text is representable

    def to_dict(self) -> dict:
        return {"kind": "bpe", "tokenizer": json.loads(self.tokenizer.to_str())}


def _bytes_to_unicode() -> dict[int, str]:
    """The printable stand-ins byte-level BPE uses for the 256 byte values (GPT-2's convention)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    mapping, extra = {}, 0
    for b in range(256):
        if b in keep:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def vocab_from_dict(d: dict):
    if not isinstance(d, dict) or d.get("kind") not in ("char", "word", "bpe"):
        raise ValueError("A saved vocabulary must be a dict with kind 'char', 'word' or 'bpe'.")
    if d["kind"] in ("char", "word"):
        return (CharVocab if d["kind"] == "char" else WordVocab)(list(d["tokens"]))
    return BPEVocab(Tokenizer.from_str(json.dumps(d["tokenizer"])))


_BPE_CACHE: dict[tuple[str, int], BPEVocab] = {}
_BPE_LOCK = threading.Lock()


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def train_bpe(text: str, vocab_size: int = 1024, use_disk_cache: bool = True) -> BPEVocab:
    """Byte-level BPE with vocab_size tokens (256..4096) trained on text; cached by (text hash, size)
    in memory and on disk, so the same request never trains twice."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("Train BPE on a non-empty text.")
    vocab_size = check_int("BPE vocabulary size", vocab_size, BPE_MIN, BPE_MAX)
    key = (text_hash(text), vocab_size)
    with _BPE_LOCK:
        if key in _BPE_CACHE:
            return _BPE_CACHE[key]
    path = cache_dir() / "bpe" / f"{key[0]}-{vocab_size}.json"
    tok = None
    if use_disk_cache and path.is_file():
        try:
            tok = Tokenizer.from_file(str(path))
        except Exception:  # a damaged cache file: retrain
            tok = None
    if tok is None:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
        lines = text.splitlines(keepends=True)
        tok.train_from_iterator((("".join(lines[i:i + 200])) for i in range(0, len(lines), 200)), trainer=trainer)
        if use_disk_cache:
            try:
                atomic_write(path, tok.to_str().encode("utf-8"))
            except OSError:
                pass  # a read-only cache is not an error
    vocab = BPEVocab(tok)
    with _BPE_LOCK:
        _BPE_CACHE[key] = vocab
    return vocab


def bytes_per_token(vocab, text: str, ids: np.ndarray | None = None) -> float:
    """Mean UTF-8 bytes per token of text under vocab (1.0 for ASCII characters)."""
    if not text:
        raise ValueError("bytes_per_token needs a non-empty text.")
    ids = vocab.encode(text) if ids is None else ids
    return len(text.encode("utf-8")) / max(1, len(ids))


TOKENIZERS = ("char", "word", "bpe")


def build_vocab(text: str, kind: str, bpe_size: int = 1024):
    """The vocabulary of one tokenizer for text: its characters, its words, or a BPE of bpe_size tokens."""
    if kind not in TOKENIZERS:
        raise ValueError(f"The tokenizer is one of {', '.join(TOKENIZERS)}, got {str(kind)[:20]!r}.")
    return CharVocab.build(text) if kind == "char" else WordVocab.build(text) if kind == "word" else \
        train_bpe(text, bpe_size)

