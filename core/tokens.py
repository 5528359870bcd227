"""From text to token ids: a character vocabulary, byte-level BPE (the `tokenizers` library), n-gram
statistics, and the parameter count of an n-gram table against an RNN."""
from __future__ import annotations

import collections
import hashlib
import json
import threading
from dataclasses import dataclass

import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from core.checks import check_int
from core.corpus import atomic_write, cache_dir

UNK = "<unk>"
UNK_CHAR = "\ufffd"  # how an unknown id prints when decoding characters
BPE_MIN, BPE_MAX = 256, 4096


def _checked_ids(ids, vocab_size: int) -> np.ndarray:
    """ids as a flat int64 array, or ValueError when one lies outside the vocabulary."""
    ids = np.asarray(ids, dtype=np.int64).ravel()
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(f"ids must lie in 0..{vocab_size - 1}.")
    return ids


class CharVocab:
    """Characters to ids. Id 0 is <unk>; the others follow by falling frequency, ties alphabetical."""

    def __init__(self, tokens: list[str]):
        if not tokens or tokens[0] != UNK or len(set(tokens)) != len(tokens):
            raise ValueError("A vocabulary is a list of distinct tokens starting with '<unk>'.")
        if any(len(t) != 1 for t in tokens[1:]):
            raise ValueError("A character vocabulary holds single characters only.")
        self.idx_to_token = list(tokens)
        self.token_to_idx = {t: i for i, t in enumerate(tokens)}
        self._lookup = None

    @classmethod
    def build(cls, text: str, min_freq: int = 1) -> "CharVocab":
        if not isinstance(text, str) or not text:
            raise ValueError("Build a vocabulary from a non-empty text.")
        min_freq = check_int("min_freq", min_freq, 1)
        counts = collections.Counter(text)
        kept = sorted((c for c, n in counts.items() if n >= min_freq), key=lambda c: (-counts[c], c))
        return cls([UNK, *kept])

    def __len__(self) -> int:
        return len(self.idx_to_token)

    @property
    def kind(self) -> str:
        return "char"

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
        ids = _checked_ids(ids, len(self))
        return "".join(UNK_CHAR if i == 0 else self.idx_to_token[i] for i in ids)

    def unknown(self, text: str) -> list[str]:
        """The distinct characters of text that the vocabulary does not know."""
        return sorted({c for c in text if c not in self.token_to_idx})

    def token_text(self, i: int) -> str:
        return self.idx_to_token[i]

    def to_dict(self) -> dict:
        return {"kind": "char", "tokens": self.idx_to_token}


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
        ids = _checked_ids(ids, len(self))
        return self.tokenizer.decode(ids.tolist(), skip_special_tokens=False)

    def token_bytes(self, i: int) -> bytes:
        return bytes(self._unicode_to_byte[c] for c in self.tokenizer.id_to_token(int(i)))

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
    if not isinstance(d, dict) or d.get("kind") not in ("char", "bpe"):
        raise ValueError("A saved vocabulary must be a dict with kind 'char' or 'bpe'.")
    if d["kind"] == "char":
        return CharVocab(list(d["tokens"]))
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


# ---------------------------------------------------------------------------------------------- n-grams

def ngram_counts(ids, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct n-grams of the id sequence (rows, in descending count order) and their counts."""
    ids = np.asarray(ids, dtype=np.int64).ravel()
    n = check_int("n", n, 1, 10)
    if len(ids) < n:
        return np.zeros((0, n), dtype=np.int64), np.zeros(0, dtype=np.int64)
    windows = np.lib.stride_tricks.sliding_window_view(ids, n)
    base = int(ids.max()) + 1
    if base ** n < 2 ** 62:  # pack each n-gram into one integer: a 1-D unique is much faster
        weights = base ** np.arange(n - 1, -1, -1, dtype=np.int64)
        keys, counts = np.unique(windows @ weights, return_counts=True)
        grams = (keys[:, None] // weights) % base
    else:
        grams, counts = np.unique(windows, axis=0, return_counts=True)
    order = np.lexsort((*grams.T[::-1], -counts))
    return grams[order], counts[order]


def token_counts(ids, vocab_size: int) -> np.ndarray:
    """How often each token id occurs (an entry for every id, zero for those that never do)."""
    return np.bincount(_checked_ids(ids, check_int("vocab_size", vocab_size, 1)), minlength=vocab_size)


def top_ngrams(vocab, ids, n: int, k: int = 10) -> list[tuple[str, int]]:
    """The k most frequent n-grams, shown as text."""
    k = check_int("k", k, 1, 10_000)
    grams, counts = ngram_counts(ids, n)
    return [("".join(vocab.token_text(int(i)) for i in g), int(c)) for g, c in zip(grams[:k], counts[:k])]


def zipf_curve(ids, n: int) -> np.ndarray:
    """Counts of the distinct n-grams sorted from most to least frequent (plot against rank 1..)."""
    return ngram_counts(ids, n)[1]


@dataclass(frozen=True)
class Coverage:
    n: int
    distinct: int   # distinct n-grams in the text
    symbols: int    # token types that occur in the text (S): <unk> and unused BPE tokens are not counted
    total: int      # n-gram positions in the text

    @property
    def possible(self) -> int:
        """S^n n-grams could be formed from the token types that occur (a Python int: it can be huge)."""
        return self.symbols ** self.n

    @property
    def share(self) -> float:
        return self.distinct / self.possible


def ngram_coverage(ids, max_n: int = 5) -> list[Coverage]:
    """For n = 1..max_n: distinct n-grams seen against the S^n that the S token types occurring could form."""
    max_n = check_int("max_n", max_n, 1, 10)
    ids = np.asarray(ids, dtype=np.int64).ravel()
    symbols = int(np.unique(ids).size)
    return [Coverage(n, len(ngram_counts(ids, n)[1]), symbols, max(0, len(ids) - n + 1))
            for n in range(1, max_n + 1)]


# ------------------------------------------------------------------------------------ parameter counts

def ngram_table_size(vocab_size: int, k: int) -> int:
    """Entries of a (k+1)-gram table: a probability for each next token after each k-token context, |V|^(k+1)."""
    return check_int("vocab_size", vocab_size, 1) ** (check_int("k", k, 0, 1000) + 1)


def rnn_parameter_terms(vocab_size: int, embed_dim: int, hidden: int) -> dict[str, int]:
    """Parameters of a one-layer RNN language model, term by term (embedding, recurrent, output).
    embed_dim 0: one-hot inputs, so no embedding and W_xh is |V| x h."""
    V = check_int("vocab_size", vocab_size, 1)
    d = check_int("embed_dim", embed_dim, 0)
    h = check_int("hidden", hidden, 1)
    inputs = {"embedding E (|V| x d)": V * d, "input weights W_xh (d x h)": d * h} if d else \
        {"input weights W_xh (|V| x h)": V * h}
    return {
        **inputs,
        "recurrent weights W_hh (h x h)": h * h,
        "hidden bias b_h (h)": h,
        "output weights W_hq (h x |V|)": h * V,
        "output bias b_q (|V|)": V,
    }


def window_model_parameters(vocab_size: int, window: int, hidden: int) -> int:
    """Parameters of a fixed-window neural language model (the step from n-grams to RNNs): the last `window`
    tokens one-hot and side by side (window x |V| inputs), one hidden layer of h units, scores over |V|.
    Its input weights grow with the window; an RNN's do not, because it reads one token at a time."""
    V = check_int("vocab_size", vocab_size, 1)
    n = check_int("window", window, 1, 10_000)
    h = check_int("hidden", hidden, 1)
    return n * V * h + h + h * V + V
