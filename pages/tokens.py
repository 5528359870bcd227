"""Lab 2, Text to tokens: draws what core.labs.tokens computes (settings, figures, tables, readings all there), for
The Time Machine or an upload (ui.texts caches the text and its tokenizers)."""
from __future__ import annotations

import threading

import pandas as pd
import streamlit as st

from core.i18n import _, current
from core.labs import controls_of, tokens as lab
from ui import exercises, shading, texts, url_state
from ui.notebook import download_button
from ui.common import cite, controls_beside_view, header, learner_errors, plain, show_source
from ui.lab import metric_row
from ui.plots import frozen_chart, show_chart

SIZES = list(lab.BPE_SIZES)
# Two fills far apart in lightness (distinct under every colour-vision deficiency), and a bar between tokens, so
# a boundary never depends on colour alone.
CONTROLS = controls_of(lab.KEY)


def controls() -> lab.Settings:
    source = url_state.draw(CONTROLS["source"])
    texts.upload_widget("tokens_upload")
    cleaning = url_state.draw(CONTROLS["cleaning"])
    kind = url_state.draw(CONTROLS["tokenizer"], horizontal=True)
    size = url_state.draw(CONTROLS["bpe_size"], disabled=kind != "bpe")
    return lab.Settings(source=source, cleaning=cleaning, tokenizer=kind, bpe_size=size)


def source_text(s: lab.Settings, view) -> tuple[str, str] | None:
    """The raw text and its name, or None after saying how to get one."""
    if s.source == "upload":
        up = texts.uploaded()
        if up is None:
            view.info(_("Upload a .txt file on the left to see it tokenized."), icon=":material/upload:")
            return None
        return up["text"], up["name"]
    raw = texts.time_machine_or_none()
    if raw is None:
        with view:
            texts.missing_corpus_message()
            texts.download_button()
            st.caption(_("Or switch the text to *My upload* and upload any .txt file."))
        return None
    return raw, _("The Time Machine")


@st.fragment
def passage_view(s: lab.Settings, raw: str, label: str, vocab) -> None:
    """One passage, raw, cleaned and tokenized, and the slider that picks it: a fragment, so moving the slider
    reruns this part only (nothing else on the page depends on where the passage starts)."""
    with learner_errors():   # a fragment's own reruns do not pass through the page's
        passage_at(s, raw, label, vocab)


def passage_at(s: lab.Settings, raw: str, label: str, vocab) -> None:
    st.subheader(_("One passage of {text}").format(text=plain(label)))
    max_start = max(0, len(raw) - lab.PASSAGE)
    start = url_state.draw(CONTROLS["start"], default=lab.word_start(raw, min(CONTROLS["start"].default, max_start)),
                           hi=max(1, max_start))
    passage = raw[start:start + lab.PASSAGE]
    passage_clean = texts.cleaned(passage, s.cleaning)
    passage_ids = vocab.encode(passage_clean)
    c1, c2, c3 = st.columns(3)
    c1.markdown(_("**Raw**"))
    c1.text(passage)
    c2.markdown(_("**Cleaned**"))
    c2.text(passage_clean)
    title = {"char": _("**{n} tokens** (characters)"), "word": _("**{n} tokens** (words)")}.get(
        s.tokenizer, _("**{n} tokens** (BPE, {size} types)"))
    c3.markdown(title.format(n=len(passage_ids), size=s.bpe_size))
    c3.markdown(f'<div style="font-family:monospace;line-height:1.9">{shading.token_spans(vocab, passage_ids)}</div>',
                unsafe_allow_html=True)
    c3.caption(_("A thin bar and alternating light and dark fills mark the token boundaries; hover a token for its "
                 "id."))
    st.code(" ".join(str(int(i)) for i in passage_ids[:120]) + (" ..." if len(passage_ids) > 120 else ""),
            language=None, wrap_lines=True)   # ids wrap on a phone rather than run off its right edge


def tables(s: lab.Settings, text: str, vocab, ids) -> None:
    metric_row(lab.text_metrics(text, vocab, ids))
    left, right = st.columns(2)
    with left:
        st.markdown(_("**Vocabulary** (token, id, count in the text)"))
        st.dataframe(pd.DataFrame(lab.vocabulary_rows(vocab, ids)), hide_index=True, height=300, width="stretch")
    with right:
        n_top = url_state.draw(CONTROLS["top_n"], horizontal=True)
        top = [(lab.visible(gram), count) for gram, count in texts.top_ngrams(text, s.tokenizer, s.bpe_size, n_top,
                                                                              lab.TOP)]
        st.dataframe(pd.DataFrame(top, columns=[_("n-gram"), _("count")]), hide_index=True, height=300,
                     width="stretch")


# The figures below depend on the text and the tokenizer only (not on the passage slider above them): built once
# per text and setting for every learner, then shared, so nothing changes them after.
@st.cache_resource(show_spinner=False, max_entries=32)
def statistics_views(text: str, kind: str, size: int, lang: str) -> tuple:   # lang: the charts' words
    curves, cov = texts.ngram_statistics(text, kind, size)
    stats = lab.Statistics(curves, cov)
    return stats, [frozen_chart(c) for c in lab.statistics_charts(stats, kind)]


@st.cache_resource(show_spinner=False, max_entries=32)
def ngram_model_view(raw: str, alpha: float, lang: str) -> tuple:
    c = texts.ngram_vs_rnn(raw, alpha)
    return c, frozen_chart(lab.ngram_model_chart(c, alpha))


def ngram_statistics(s: lab.Settings, text: str) -> None:
    stats, (zipf, coverage) = statistics_views(text, s.tokenizer, s.bpe_size, current())
    z1, z2 = st.columns(2)
    show_chart(zipf, z1)
    show_chart(coverage, z2)
    st.markdown(lab.coverage_reading(stats).text)
    with st.expander(_("Bytes per token as the BPE vocabulary grows")):
        if st.toggle(_("Compute the sweep (trains one tokenizer per size, then cached)"), key="tokens.sweep"):
            show_chart(lab.sweep_chart(texts.bytes_per_token_sweep(text, tuple(SIZES))))
            st.caption(_(lab.SWEEP_NOTE))


def how_bpe_learns(text: str) -> None:
    st.subheader(_("How BPE learns"))
    st.markdown(_(lab.BPE_INTRO))
    typed = url_state.draw(CONTROLS["bpe_text"])
    with learner_errors():
        st.table(pd.DataFrame(lab.segmentation_rows({size: texts.bpe(text, size) for size in SIZES}, typed))
                 .set_index(_("vocabulary")))
        history = texts.bpe_merge_history(text, lab.MERGES_SHOWN)
    st.markdown(_("**The first {n} merges** learnt on this text, in order (␣ is a space; each count is how often the "
                  "pair occurred just before it was merged):").format(n=len(history)))
    st.dataframe(pd.DataFrame(lab.merge_rows(history)).set_index(_("merge")), width="stretch", height=300)
    if history:
        first, last = history[0], history[-1]
        st.caption(_("The first merge joins “{left}” and “{right}” ({count:,} times); by merge {last} the most "
                     "frequent pair left occurs {last_count:,} times. Frequent pairs go first, so common words and "
                     "word starts become single tokens early.").format(
            left=plain(first.left), right=plain(first.right), count=first.count, last=last.rank,
            last_count=last.count))


def ngram_language_model(raw: str) -> None:
    st.subheader(_("A counting language model against an RNN"))
    st.markdown(_(lab.COUNTING_INTRO))
    alpha = url_state.draw(CONTROLS["alpha"])
    with learner_errors():
        c, chart = ngram_model_view(raw, alpha, current())
    show_chart(chart)
    if c.used_chars < c.total_chars:
        st.caption(_("Your text has {total:,} characters once cleaned; this comparison uses its first {used:,} (90% "
                     "to fit, 10% held out), which keeps it to seconds.").format(total=c.total_chars, used=c.used_chars))
    st.caption(_("The RNN is the shipped model, trained on the same first 90% of The Time Machine; on another text it "
                 "is scored on text it has never seen."))


def parameter_calculator() -> None:
    st.subheader(_("How many parameters? An n-gram table against an RNN"))
    k1, k2, k3, k4 = st.columns(4)
    with k1:
        V = url_state.draw(CONTROLS["V"])
    with k2:
        k = url_state.draw(CONTROLS["k"])
    with k3:
        h = url_state.draw(CONTROLS["h"])
    with k4:
        d = url_state.draw(CONTROLS["d"])
    with learner_errors():
        c = lab.calculator(V, k, h, d)
        metric_row(lab.calculator_metrics(c))
        st.dataframe(pd.DataFrame({_("term"): [_(t) for t in c.terms], _("parameters"): list(c.terms.values())}),
                     hide_index=True)
        st.markdown(lab.calculator_words(c))


def warm(stop: threading.Event | None = None) -> None:
    """What the lab's first open computes at its defaults, done ahead: app.py runs this once per server in the
    background, so the first learner to open the lab finds it cached (it took seconds otherwise). Once `stop` is
    set (the server is stopping), no further piece starts."""
    raw = texts.time_machine_or_none()
    if raw is None:
        return
    text = texts.cleaned(raw, CONTROLS["cleaning"].default)
    kind, size = CONTROLS["tokenizer"].default, CONTROLS["bpe_size"].default
    for piece in (lambda: texts.encoded(text, kind, size),
                  lambda: texts.ngram_statistics(text, kind, size),
                  lambda: texts.top_ngrams(text, kind, size, CONTROLS["top_n"].default, lab.TOP),
                  lambda: texts.bytes_per_token_sweep(text, tuple(SIZES)),
                  lambda: texts.bpe_merge_history(text, lab.MERGES_SHOWN),
                  lambda: texts.ngram_vs_rnn(raw, CONTROLS["alpha"].default)):
        if stop is not None and stop.is_set():
            return
        piece()


def main() -> None:
    url_state.page("tokens")
    header(lab.KEY)
    download_button(lab.KEY)
    st.markdown(_(lab.INTRO))
    cite(lab.SECTION)
    exercises.assignment(lab.KEY)
    s, view = controls_beside_view(controls)
    exercises.hold_figures(lab.KEY)
    # The lab's two topics, one tab each (a long page otherwise): tokens, then what counting them can do.
    to_tokens, counting = view.tabs([_("From text to tokens"), _("Counting n-grams")])
    found = source_text(s, to_tokens)
    if found is not None:
        raw, label = found
        with to_tokens, learner_errors():
            text = lab.check_cleaned(texts.cleaned(raw, s.cleaning))
            vocab = texts.vocab(text, s.tokenizer, s.bpe_size)
            ids = texts.encoded(text, s.tokenizer, s.bpe_size)
            passage_view(s, raw, label, vocab)
            tables(s, text, vocab, ids)
            how_bpe_learns(text)
        with counting, learner_errors():
            ngram_statistics(s, text)
            ngram_language_model(raw)
    with counting:
        parameter_calculator()  # needs no text
    show_source(*lab.SOURCE)
    exercises.section(lab.KEY)


if __name__ == "__main__":
    main()
