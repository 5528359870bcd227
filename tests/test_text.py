"""Corpus layer, cleaning, tokenizers, n-grams and the parameter calculator."""
import collections
import hashlib
import http.server
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core.text import corpus, ngrams, tokens
from core.nn import param_counts
from apptest_util import metric, page

SMALL = ("The Time Traveller (for so it will be convenient to speak of him) was expounding...\n" * 3 +
         "It's a 4th-dimension talk: 'Clearly', said he, \"any real body must have extension!\"\n") * 5


class _Server:
    def __init__(self, body: bytes | None):
        body_ = body

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if body_ is None:
                    self.send_response(500)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body_)))
                self.end_headers()
                self.wfile.write(body_)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/timemachine.txt"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


@pytest.fixture
def no_env_corpus(monkeypatch, tmp_path):
    monkeypatch.delenv("RNNLAB_CORPUS", raising=False)
    monkeypatch.setenv("RNNLAB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_download_good_file_is_checked_and_cached(no_env_corpus, monkeypatch):
    body = SMALL.encode()
    monkeypatch.setattr(corpus, "CORPUS_SHA1", hashlib.sha1(body).hexdigest())
    server = _Server(body)
    try:
        text = corpus.load_corpus(url=server.url, timeout=5)
    finally:
        server.close()
    assert text == SMALL
    cached = no_env_corpus / "cache" / "timemachine.txt"
    assert cached.read_bytes() == body
    assert corpus.load_corpus(url="http://127.0.0.1:9/unused") == SMALL  # from the cache now, no server
    assert not list(cached.parent.glob("*.part"))


def test_download_bad_checksum_is_refused_and_not_cached(no_env_corpus):
    server = _Server(b"not the time machine")
    try:
        with pytest.raises(corpus.CorpusError, match="SHA-1"):
            corpus.load_corpus(url=server.url, timeout=5)
    finally:
        server.close()
    assert not (no_env_corpus / "cache" / "timemachine.txt").exists()


def test_download_server_error_and_server_down(no_env_corpus):
    server = _Server(None)
    try:
        with pytest.raises(corpus.CorpusError, match="RNNLAB_CORPUS"):
            corpus.load_corpus(url=server.url, timeout=5)
    finally:
        server.close()
    with pytest.raises(corpus.CorpusError, match="Could not download"):
        corpus.load_corpus(url="http://127.0.0.1:9/timemachine.txt", timeout=2)
    with pytest.raises(corpus.CorpusError, match="not cached"):
        corpus.load_corpus(download=False)


def test_explicit_path_and_env_var(tmp_path, monkeypatch):
    f = tmp_path / "mine.txt"
    f.write_text(SMALL)
    assert corpus.load_corpus(f) == SMALL
    monkeypatch.setenv("RNNLAB_CORPUS", str(f))
    assert corpus.load_corpus() == SMALL
    monkeypatch.setenv("RNNLAB_CORPUS", str(tmp_path / "missing.txt"))
    with pytest.raises(corpus.CorpusError, match="not a file"):
        corpus.load_corpus()


def test_env_var_naming_a_folder_uses_its_copy_or_looks_further(no_env_corpus, monkeypatch):
    """How a container gets the corpus: RNNLAB_CORPUS=/data with the file mounted there, or nothing mounted."""
    body = SMALL.encode()
    monkeypatch.setattr(corpus, "CORPUS_SHA1", hashlib.sha1(body).hexdigest())
    folder = no_env_corpus / "data"
    folder.mkdir()
    monkeypatch.setenv("RNNLAB_CORPUS", str(folder))
    with pytest.raises(corpus.CorpusError, match="not cached"):   # an empty folder: on to the cache
        corpus.load_corpus(download=False)
    (folder / "timemachine.txt").write_bytes(body)
    assert corpus.load_corpus(download=False) == SMALL
    (folder / "timemachine.txt").write_text("another text entirely, not the one the folder should hold")
    with pytest.raises(corpus.CorpusError, match="SHA-1"):          # a folder's copy is checked like the cache
        corpus.load_corpus(download=False)


def test_shared_corpus_has_the_known_checksum(corpus_file):
    assert corpus.sha1_of(corpus_file.read_bytes()) == corpus.CORPUS_SHA1


@pytest.mark.parametrize("data, message", [
    (b"", "empty"), (b"\x00\x01binary" * 50, "binary"), (b"\xff\xfe\xfa" * 100, "UTF-8"),
    ("a UTF-16 file with its byte-order mark ".encode("utf-16") * 20, "UTF-16"),
    ("a UTF-16 file without a byte-order mark ".encode("utf-16-le") * 20, "UTF-16"),
    ("café, naïve, façade ".encode("latin-1") * 20, "Latin-1"),
    (b"short text", "too short"), (b"ab " * 200, "distinct"), (b"x" * 6_000_001, "limit"),
])
def test_upload_checks(data, message):
    with pytest.raises(corpus.CorpusError, match=message):
        corpus.validate_upload(data)


def test_upload_accepts_plain_text():
    assert corpus.validate_upload(SMALL.encode()) == SMALL


def test_cleaning_variants():
    assert corpus.clean_letters("It's 4 O'Clock!\n  Now.") == "it s o clock now "
    kept = corpus.clean_keep_punctuation("It's  4 O\u2019Clock!\n\n\n\nNow\u2014go.")
    assert kept == "it's 4 o'clock!\n\nnow-go."
    with pytest.raises(ValueError):
        corpus.clean("x", "nonsense")


texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=300)


@settings(max_examples=80, deadline=None)
@given(texts, st.sampled_from(["letters", "punctuation"]))
def test_char_round_trip_on_cleaned_text(text, how):
    cleaned = corpus.clean(text, how)
    if not cleaned:
        return
    vocab = tokens.CharVocab.build(cleaned)
    assert vocab.decode(vocab.encode(cleaned)) == cleaned


def test_char_vocab_unknowns_never_crash():
    vocab = tokens.CharVocab.build("abc abc")
    ids = vocab.encode("abz\u4e2d")
    assert list(ids[-2:]) == [0, 0]
    assert vocab.decode(ids) == "ab" + tokens.UNK_CHAR * 2
    assert vocab.unknown("abz") == ["z"]
    assert vocab.idx_to_token[0] == "<unk>"
    restored = tokens.vocab_from_dict(vocab.to_dict())
    assert restored.idx_to_token == vocab.idx_to_token


@settings(max_examples=30, deadline=None)
@given(texts)
def test_bpe_round_trip_exact(text):
    vocab = tokens.train_bpe(SMALL, 300, use_disk_cache=False)
    assert vocab.decode(vocab.encode(text)) == text


def test_bpe_cached_and_sized(tmp_path):
    a = tokens.train_bpe(SMALL, 280)
    assert tokens.train_bpe(SMALL, 280) is a
    assert len(a) <= 280
    tokens._BPE_CACHE.clear()
    b = tokens.train_bpe(SMALL, 280)  # now from the disk cache
    assert b.encode(SMALL).tolist() == a.encode(SMALL).tolist()
    assert tokens.bytes_per_token(a, SMALL) > 1.2
    with pytest.raises(ValueError, match="BPE vocabulary size"):
        tokens.train_bpe(SMALL, 100)
    restored = tokens.vocab_from_dict(a.to_dict())
    assert restored.encode(SMALL).tolist() == a.encode(SMALL).tolist()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=0, max_size=200), st.integers(1, 5))
def test_ngram_counts_match_brute_force(ids, n):
    grams, counts = ngrams.ngram_counts(ids, n)
    brute = collections.Counter(tuple(ids[i:i + n]) for i in range(len(ids) - n + 1))
    assert {tuple(int(x) for x in g): int(c) for g, c in zip(grams, counts)} == dict(brute)
    assert list(counts) == sorted(counts, reverse=True)


def test_coverage_counts():
    ids = np.array([0, 1, 0, 1, 2])
    cov = ngrams.ngram_coverage(ids, 3)
    assert [(c.n, c.distinct, c.possible) for c in cov] == [(1, 3, 3), (2, 3, 9), (3, 3, 27)]


def test_coverage_counts_only_the_symbols_that_occur():
    vocab = tokens.CharVocab.build("abcabc")          # four ids: <unk>, a, b, c; <unk> never occurs
    cov = ngrams.ngram_coverage(vocab.encode("abcabc"), 2)
    assert len(vocab) == 4 and cov[0].symbols == 3 and cov[1].possible == 9 and cov[1].distinct == 3


def test_parameter_calculator_by_hand():
    terms = param_counts.rnn_parameter_terms(10_000, 256, 256)
    assert terms["embedding E (|V| x d)"] == 2_560_000
    assert terms["recurrent weights W_hh (h x h)"] == 65_536
    assert sum(terms.values()) == 2_560_000 + 65_536 + 65_536 + 256 + 2_560_000 + 10_000
    assert param_counts.ngram_table_size(10_000, 20) == 10_000 ** 21
    assert param_counts.ngram_table_size(3, 0) == 3


def test_parameter_calculator_one_hot_inputs():
    terms = param_counts.rnn_parameter_terms(28, 0, 256)  # no embedding: W_xh is |V| x h
    assert "embedding E (|V| x d)" not in terms
    assert sum(terms.values()) == 28 * 256 + 256 * 256 + 256 + 256 * 28 + 28


def test_page_defaults_and_bpe(corpus_file):
    at = page("tokens").run()
    assert not at.exception and not at.error
    assert metric(at, "Vocabulary size") == "28"
    at.radio(key="tokens.tok").set_value("bpe").run()
    assert not at.exception
    assert metric(at, "Vocabulary size") == "1,024"
    assert float(metric(at, "Bytes per token")) > 2


def test_page_bad_query_params(corpus_file):
    at = page("tokens", tokenizer="words", bpe_size="17", cleaning="none").run()
    assert not at.exception
    assert len(at.warning) >= 3


def test_page_without_corpus_offers_download_and_upload(monkeypatch, tmp_path):
    monkeypatch.delenv("RNNLAB_CORPUS", raising=False)
    monkeypatch.setenv("RNNLAB_CACHE_DIR", str(tmp_path / "empty"))
    at = page("tokens").run()
    assert not at.exception
    assert any("not available" in w.value for w in at.warning)
    assert any("Download" in b.label for b in at.button)
