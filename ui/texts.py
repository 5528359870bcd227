"""Cached access to the corpus, uploads and tokenizers, shared by the text, training and sampling pages."""
from __future__ import annotations

import streamlit as st

from core.i18n import N_, _
from core.text import corpus, ngrams, tokens
from ui.common import busy, plain

UPLOAD_KEY = "_rnnlab_upload"


@st.cache_data(show_spinner=False, max_entries=2)
def _time_machine() -> str:
    return corpus.load_corpus(download=False)


def time_machine() -> str:
    return busy(N_("Loading The Time Machine ..."), _time_machine)


def time_machine_or_none() -> str | None:
    """The corpus if it is on disk (env var or cache); None otherwise (no download on a plain page view)."""
    if not corpus.corpus_available():
        return None
    try:
        return time_machine()
    except corpus.CorpusError:
        return None


def download_button() -> None:
    """Offer the download; on success the page reruns with the corpus."""
    if st.button(_("Download The Time Machine now"), icon=":material/download:"):
        with st.spinner(_("Downloading and checking the SHA-1 ...")):
            try:
                corpus.download_corpus(timeout=20)
            except corpus.CorpusError as exc:
                st.error(plain(exc, 400))
                return
        _time_machine.clear()
        st.rerun()


def _forget_removed_upload(key: str) -> None:
    """The uploader's on_change: when the learner removes the file, no lab may use it any more."""
    if st.session_state.get(key) is None:
        st.session_state.pop(UPLOAD_KEY, None)


def upload_widget(key: str) -> None:
    """A .txt upload kept in the session (shared by the labs); bad files get a clear message (and are not used,
    nor is the file they replaced); removing the file in the uploader removes it from every lab."""
    up = st.file_uploader(_("Upload your own text (.txt, UTF-8, up to 5 MB)"), type=["txt"], key=key,
                          on_change=_forget_removed_upload, args=(key,))
    if up is not None:
        try:
            text = corpus.validate_upload(up.getvalue())
        except corpus.CorpusError as exc:
            st.session_state.pop(UPLOAD_KEY, None)
            st.error(plain(exc, 400), icon=":material/error:")
            return
        st.session_state[UPLOAD_KEY] = {"name": up.name, "text": text}


def uploaded() -> dict | None:
    return st.session_state.get(UPLOAD_KEY)


def missing_corpus_message() -> None:
    st.warning(_("The Time Machine is not available on this machine. {how}").format(how=corpus.how_to_get()),
               icon=":material/description:")


@st.cache_data(show_spinner=False, max_entries=16)
def cleaned(text: str, how: str) -> str:
    return corpus.clean(text, how)


@st.cache_resource(show_spinner=False, max_entries=32)
def _bpe(text: str, size: int):
    return tokens.train_bpe(text, size)


def bpe(text: str, size: int):
    return busy(N_("Training a BPE tokenizer (once per text and size) ..."), _bpe, text, size)


@st.cache_resource(show_spinner=False, max_entries=16)
def char_vocab(text: str):
    return tokens.CharVocab.build(text)


@st.cache_resource(show_spinner=False, max_entries=16)
def word_vocab(text: str):
    return tokens.WordVocab.build(text)


def vocab(text: str, kind: str, size: int):
    """The character or word vocabulary, or the BPE tokenizer of `size` tokens, for text: core.text.tokens.build_vocab
    with each kind cached on its own (BPE with its spinner)."""
    return char_vocab(text) if kind == "char" else word_vocab(text) if kind == "word" else bpe(text, size)


@st.cache_data(show_spinner=False, max_entries=32)
def encoded(text: str, kind: str, size: int):
    return vocab(text, kind, size).encode(text)


@st.cache_data(show_spinner=False, max_entries=32)
def ngram_statistics(text: str, kind: str, size: int):
    """Zipf curves for 1-, 2-, 3-grams and the coverage for n = 1..5: once per text and tokenizer."""
    ids = encoded(text, kind, size)
    return [ngrams.zipf_curve(ids, n) for n in (1, 2, 3)], ngrams.ngram_coverage(ids, 5)


@st.cache_data(show_spinner=False, max_entries=64)
def top_ngrams(text: str, kind: str, size: int, n: int, k: int) -> list[tuple[str, int]]:
    """The k most frequent n-grams of the text under the tokenizer: once per text, tokenizer and n."""
    return ngrams.top_ngrams(vocab(text, kind, size), encoded(text, kind, size), n, k)


def bytes_per_token_sweep(text: str, sizes: tuple[int, ...]) -> list[dict]:
    """Bytes per token for characters and for BPE at each size."""
    return busy(N_("Training BPE tokenizers of several sizes (cached) ..."), _bytes_per_token_sweep, text, sizes)


@st.cache_data(show_spinner=False, max_entries=8)
def _bytes_per_token_sweep(text: str, sizes: tuple[int, ...]) -> list[dict]:
    rows = []   # each tokenizer's name is data; core.labs.tokens.sweep_chart translates "characters" where it shows
    for label, v in [(N_("characters"), char_vocab(text)), *((f"BPE {s}", _bpe(text, s)) for s in sizes)]:
        rows.append({"tokenizer": label, "vocabulary": len(v), "bytes per token": tokens.bytes_per_token(v, text)})
    return rows


@st.cache_data(show_spinner=False, max_entries=16)
def _rnn_held_out_perplexity(raw: str, _lm) -> float:
    """core.nn.probe.model_perplexity of the shipped character RNN (_lm): once per text, whatever alpha."""
    from core.nn import probe
    return probe.model_perplexity(_lm, raw)


def ngram_vs_rnn(raw: str, alpha: float):
    """core.nn.probe.compare_with_model against the shipped character RNN: once per text and alpha (the RNN's
    own score once per text)."""
    from ui.model_choice import pretrained
    return busy(N_("Counting n-grams on the first 90% and scoring them on the last 10% (and the RNN on the last 10%, "
                   "once per text) ..."), _ngram_vs_rnn, raw, alpha, pretrained())


@st.cache_data(show_spinner=False, max_entries=16)
def _ngram_vs_rnn(raw: str, alpha: float, _lm):
    from core.nn import probe
    return probe.compare_with_model(_lm, raw, alpha, model_ppl=_rnn_held_out_perplexity(raw, _lm))


@st.cache_data(show_spinner=False, max_entries=16)
def bpe_merge_history(text: str, first: int):
    """The first merges of a 1,024-token BPE vocabulary trained on text, with their counts (once per text)."""
    from core.text import bpe_merges
    return bpe_merges.merge_history(_bpe(text, 1024), text, first)
