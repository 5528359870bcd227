"""core.text.bpe_merges: the merges BPE learns, in order and with their counts, checked by hand and by brute force."""
from collections import Counter

import pytest

from core.text import bpe_merges
from core.text.tokens import CharVocab, train_bpe


def test_a_hand_worked_list():
    # "aaaa": the pair (a, a) occurs 3 times (overlapping, as BPE counts), is merged into "aa aa", then
    # (aa, aa) occurs once.
    vocab = train_bpe("aaaa", 258, use_disk_cache=False)
    assert [(m.left, m.right, m.count) for m in bpe_merges.merge_history(vocab, "aaaa", 2)] == \
        [("a", "a", 3), ("aa", "aa", 1)]
    # "abab abab": words abab and ␣abab; (a, b) occurs 4 times and goes first
    vocab = train_bpe("abab abab", 257, use_disk_cache=False)
    assert [(m.left, m.right, m.count) for m in bpe_merges.merge_history(vocab, "abab abab", 1)] == [("a", "b", 4)]


def test_each_merge_is_the_most_frequent_pair_at_its_turn():
    text = ("the cat sat on the mat with the hat, then the rat ate the oats " * 20)
    vocab = train_bpe(text, 300, use_disk_cache=False)
    history = bpe_merges.merge_history(vocab, text, 15)
    words = {tuple(w): n for w, n in bpe_merges._words(vocab, text).items()}
    for m, (a, b) in zip(history, bpe_merges.merges(vocab)):
        pairs = Counter()
        for symbols, n in words.items():
            for x, y in zip(symbols, symbols[1:]):
                pairs[(x, y)] += n
        assert m.count == pairs[(a, b)] == max(pairs.values())   # the BPE rule, counted independently
        words = bpe_merges._apply(words, a, b)


def test_256_tokens_is_bytes_only_and_segments_rebuild_the_text():
    text = "the time traveller " * 30
    assert bpe_merges.merges(train_bpe(text, 256, use_disk_cache=False)) == []
    for size in (256, 300):
        pieces = bpe_merges.segment(train_bpe(text, size, use_disk_cache=False), "the traveller, é")
        assert "".join(pieces).replace("␣", " ") == "the traveller, ��"   # é is two bytes: two byte tokens
        assert pieces[-2:] == ["�", "�"]
    assert len(bpe_merges.segment(train_bpe(text, 300, use_disk_cache=False), "the traveller")) < 13


def test_bad_input():
    with pytest.raises(ValueError, match="BPE"):
        bpe_merges.merges(CharVocab.build("abc"))
    vocab = train_bpe("abab abab", 257, use_disk_cache=False)
    with pytest.raises(ValueError):
        bpe_merges.merge_history(vocab, "abab", 0)
    with pytest.raises(ValueError):
        bpe_merges.segment(vocab, None)
