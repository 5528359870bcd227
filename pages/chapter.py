"""The chapter as a story: four acts from a noisy sine to a network with memory, then what to poke at next.

Each act is a function that draws a live figure from core/ (most reuse a lab's figure functions), says what
it shows in a few sentences with the figure's own numbers, and links into the lab that goes deeper.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.text import readings as text_readings
from core.lesson import passage, readings as lesson_readings, store as passage_store
from core.i18n import N_, _, current, is_chinese, sentences
from core.labs import BOOK_ZH, CHAPTERS_ZH, chapter, controls_of, forecasting, rnn_cell, tokens
from core.nn import said
from core.runs.record import HistoryRow, Status
from ui import exercises, passage_run, shading, texts, url_state
from ui.notebook import download_button
from ui.common import BOOK, BOOK_URL, cite, deeper, learner_errors, plain
from ui.chapter_after import after_the_acts
from ui.run_notice import queued_notice, status_word
from ui.plots import frozen, show

ACTS = {1: N_("Predicting the next step"), 2: N_("Language into numbers"), 3: N_("A network with memory"),
        4: N_("Training through time"), 5: N_("After the acts")}
ACT_KEY = "chapter.act"
CONTROLS = controls_of("chapter")   # declared in core.labs


# --- moving between acts ---------------------------------------------------------------------------------

def _go(act: int) -> None:  # a button callback: runs before the act selector is drawn again
    st.session_state[ACT_KEY] = act


def choose_act() -> int:
    return url_state.draw(CONTROLS["act"], horizontal=True, label_visibility="collapsed",
                          format_func=lambda n: f"{n} · {_(ACTS[n])}" if n < 5 else _(ACTS[n]))


def step_buttons(act: int, where: str) -> None:
    back, gap, forward = st.columns([1, 2, 1])
    if act > 1:
        back.button(f"← {_(ACTS[act - 1])}", key=f"chapter.back.{where}", on_click=_go, args=(act - 1,))
    if act < len(ACTS):
        forward.button(f"{_(ACTS[act + 1])} →", key=f"chapter.next.{where}", on_click=_go, args=(act + 1,),
                       type="primary")


# --- Act 1 -----------------------------------------------------------------------------------------------

@st.cache_resource(show_spinner=False, max_entries=32)
def act1_computed(s: forecasting.Settings, lang: str) -> tuple:
    """Act 1's result and figures for a window, built once for every learner who sets it (a class moves τ together)
    and shared, as the Forecasting lab does: nothing changes them after. Every horizon's forecast is drawn here.
    lang: the language of the figures' words (the Forecasting lab's, translated)."""
    r = forecasting.compute(s)
    a = r.analysis
    horizon = frozen(forecasting.horizon_figure(s, a)) if a.horizon is not None else None
    return r, frozen(forecasting.forecasts_figure(s, r.x, a, every_horizon=True)), horizon


def act_predicting() -> None:
    st.markdown(_(
        "A sequence model guesses what comes next from what came before. Start with numbers: a sine wave with "
        "noise, and the plainest model there is, a weighted sum of the last τ values, fitted by least squares."))
    tau = url_state.draw(CONTROLS["tau"])
    s = forecasting.Settings(T=1000, n_train=600, tau=tau, k=16, sigma=0.2, seed=0)
    with learner_errors():
        r, forecasts, horizon = act1_computed(s, current())
    a = r.analysis
    m1, m2, m3 = st.columns(3)
    m1.metric(_("One step ahead, training range"), f"{a.train_mse:.3f}")
    m2.metric(_("One step ahead, test range"), f"{a.test_mse:.3f}")
    m3.metric(_("16 steps ahead, test range"), f"{a.k_mse:.3f}")
    show(forecasts, forecasting.forecasts_summary(r), "act1.forecasts")
    if horizon is not None:
        show(horizon, forecasting.horizon_summary(a), "act1.horizon")
    st.markdown(chapter.act1_reading(s, a))
    deeper("forecasting", N_("Every horizon and window"), tau=tau)


# --- Act 2 -----------------------------------------------------------------------------------------------

def act_language() -> None:
    st.markdown(_("To model text, first turn it into numbers: clean it, cut it into tokens (here single characters), "
                  "and give each token an id."))
    raw = texts.time_machine_or_none()
    if raw is None:
        texts.missing_corpus_message()
        return
    text = texts.cleaned(raw, "letters")
    vocab = texts.char_vocab(text)
    c_raw, c_clean = st.columns(2)
    c_raw.markdown(_("**The book as stored**"))
    c_raw.code(raw[:220], language=None, wrap_lines=True)
    c_clean.markdown(_("**Cleaned: lower-case letters and spaces**"))
    c_clean.code(text[:180], language=None, wrap_lines=True)
    shown = " ".join("␣" if t == " " else t for t in vocab.idx_to_token[1:])
    st.markdown(_("That leaves **{n} tokens**: {shown}, and one id for anything unknown. The whole book is {total:,} "
                  "of them. Each token becomes its id, its row in the vocabulary (this is what the model reads):").format(
        n=len(vocab), shown=shown, total=len(text)))
    show_ids(text[:16], vocab)
    edition_note_tokens()
    st.markdown(_("A language model gives a whole text a probability by predicting it one token at a time, each "
                  "prediction given every token before it, and multiplying:"))
    st.latex(r"P(x_1, \dots, x_T) = \prod_{t=1}^{T} P(x_t \mid x_1, \dots, x_{t-1})")
    cov = texts.ngram_statistics(text, "char", 0)[1]
    st.markdown(_(
        "The simplest such model **counts**. An *n-gram* is n tokens in a row; to predict the next character from "
        "the n − 1 before it, count how often each n-gram occurs in the book and divide by how often its first "
        "n − 1 characters occur. The table needs a row for every context, and contexts multiply: the chart counts, "
        "for each n, the distinct n-grams the book contains against all the possible ones."))
    coverage = tokens.coverage_chart(cov)
    show(coverage.figure, coverage.summary, "act2.coverage")
    st.markdown(sentences(text_readings.coverage(cov), _(
        "**Next:** instead of a table over every possible past, keep a running summary of the past, a "
        "*hidden state*, and update it one token at a time:")))
    st.latex(r"\begin{gathered}P(x_t \mid x_{t-1}, \dots, x_1) \approx P(x_t \mid h_{t-1}) \\"
             r"h_t = f(x_t, h_{t-1})\end{gathered}")
    deeper("tokens", N_("BPE subwords, Zipf's law and the parameter calculator"))


def show_ids(piece: str, vocab) -> None:
    """A piece of the cleaned text as the ids the model reads, one column per character."""
    ids = vocab.encode(piece)
    st.dataframe(pd.DataFrame([[int(i) for i in ids]], columns=[f"{k}: {'␣' if c == ' ' else c}"
                                                                 for k, c in enumerate(piece, 1)],
                              index=["id"]), width="content")


EDITION = N_("The book's published edition (d2l.ai, version 1.0, the chapter numbered 9) cuts text into single "
           "characters and feeds each to the network as a one-hot vector, and so does this chapter. A newer draft "
           "of the chapter, numbered 8, starts from subword tokens (byte-pair encoding, BPE) and learned embeddings "
           "instead, and calls one-hot characters the older treatment.")


def edition_note_tokens() -> None:
    st.caption(_(EDITION))
    deeper("tokens", N_("Cut the same text into BPE subwords"), tokenizer="bpe")


# --- Act 3 -----------------------------------------------------------------------------------------------

def act_memory() -> None:
    st.markdown(_("Two different things share a word here. A hidden **layer** is part of a network's shape: it "
                "computes features of the current input, and nothing of them survives to the next input. A hidden "
                "**state** is a value, not a part: the vector H_t that an RNN computes at step t and reads again at "
                "step t + 1, so it summarises everything read so far. In an RNN the hidden layer computes the "
                "hidden state, and the whole difference from an ordinary hidden layer is one term:"))
    st.latex(r"\begin{gathered}\text{hidden layer: } H = \phi(X W_{xh} + b_h) \\"
             r"\text{hidden state: } H_t = \phi(X_t W_{xh} + \textcolor{#d62728}{H_{t-1} W_{hh}} + b_h) \\"
             r"\text{output: } O_t = H_t W_{hq} + b_q"
             r"\end{gathered}")
    st.markdown(_("The output layer W_hq turns each state into a score for every possible next token. The same "
                "W_xh, W_hh and W_hq are used at every step, so the network can read a text of any length without "
                "growing, and it keeps a memory of constant size: the state is h numbers whether it has read ten "
                "characters or a whole book. (Attention, in later chapters, instead looks back over every earlier "
                "token, so its memory grows with the text.) Rows are examples here, as in the book: X is batch × "
                "inputs."))
    st.caption(_("Here X_t is the one-hot vector of the t-th character, as in the book's published edition. In the "
               "newer draft X_t is a learned embedding, a row of numbers looked up by the token's id and trained "
               "with the rest; the state's equation is the same."))
    deeper("training", N_("Train the book's run with a 32-number embedding instead of one-hot"), preset="book",
           embed_dim=32)
    h = url_state.draw(CONTROLS["h"])
    window = chapter.window_chart(h)
    show(window.figure, window.summary, window.key)
    st.markdown(_("The step before the RNN, a *fixed-window* neural language model, puts the last n tokens side by "
                "side and feeds them to a hidden layer: its input weights grow with the window, and it still sees "
                "nothing older. The RNN reads one token at a time and folds it into its state. Unrolled through "
                "time it looks like a very deep network whose layers all share the same weights:"))
    unrolled = rnn_cell.unrolled_chart("time", 4, 4)
    show(unrolled.figure, unrolled.summary, "act3.unrolled")
    st.markdown(_("**Next:** training it means backpropagating through all those shared steps."))
    deeper("rnn_cell", N_("Step the recurrence and check its gradients"))


# --- Act 4 -----------------------------------------------------------------------------------------------

def retrain_controls(raw: str | None) -> None:
    job = passage_run.current()
    c_seed, c_go = st.columns([1, 2], vertical_alignment="bottom")
    with c_seed:
        seed = url_state.draw(CONTROLS["seed"])
    busy = job is not None and job.active
    if c_go.button(_("Retrain live"), icon=":material/play_arrow:", disabled=raw is None or busy, type="primary",
                   key="chapter.retrain"):
        try:
            passage_run.start(seed, raw)
            st.rerun()
        except ValueError as exc:  # e.g. the server's training slots are all taken: say so, keep the act
            st.warning(plain(exc, 400), icon=":material/hourglass_top:")
    if raw is None:
        st.caption(_("Retraining needs the corpus (see below). The stored run shown here was made by "
                     "`{command}`.").format(command=passage_store.COMMAND))


def run_view(baked: passage_store.Baked) -> None:
    """The live run while it trains (refreshing twice a second), its result after, else the stored run."""
    job = passage_run.current()
    if job is None:
        draw_run(baked.history, baked.samples, baked.training_seconds, _("The stored run (seed 0)"),
                 baked.vocab_size, where=_("timed on the {device} of the machine that stored it").format(
                     device=baked.meta.device.split(" ")[0].upper()))
        repeats = lesson_readings.what_repeats(baked.history)
        if repeats:
            st.caption(repeats.text)
    elif job.active:
        st.fragment(run_every=0.5)(live_run)(baked)
    else:
        live_run(baked)


def live_run(baked: passage_store.Baked) -> None:
    vocab_size = baked.vocab_size
    job = passage_run.current()
    if job is None:
        return
    rows = passage_run.history(job)
    if job.status == Status.QUEUED:
        queued_notice(job)   # its place in the queue and about when it starts, as in the Training lab
    elif job.status == Status.ERROR:
        st.error(plain(said.words(job.message), 600), icon=":material/error:")
    elif rows:
        seconds = job.result.elapsed if job.result is not None else None
        state = _("training") if job.active else status_word(job.status)
        draw_run(rows, passage.samples_to_show(rows), seconds,
                 _("Your run, seed {seed} ({state}: epoch {epoch} of {epochs})").format(
                     seed=job.config.seed, state=state, epoch=rows[-1].epoch, epochs=job.config.epochs),
                 vocab_size)
    else:
        st.info(_("Starting the run ..."))
    if job.status == Status.FINISHED and rows and job.config.seed == baked.meta.config["seed"]:
        st.caption(lesson_readings.against_stored(rows, baked.history).text)
    if not job.active and st.session_state.get("chapter.was_active"):
        st.session_state["chapter.was_active"] = False
        st.rerun()  # the whole page once more, without the refresh
    st.session_state["chapter.was_active"] = job.active


def draw_run(history: list[HistoryRow], samples: dict[int, str], seconds: float | None, title: str,
             vocab_size: int, where: str = N_("on this server")) -> None:
    run = chapter.passage_chart(history, vocab_size, seconds, title, where)
    show(run.figure, run.summary, run.key)
    prefix = passage.config().sample_prefix
    st.caption(_("Greedy continuation: starting from the prefix, the network writes on by always taking the "
                 "character it finds likeliest."))
    epoch = _("epoch")
    st.table(pd.DataFrame({epoch: list(samples), _("greedy continuation of “{prefix}”").format(prefix=prefix):
                           list(samples.values())}).set_index(epoch))


def teacher_forcing_view(tf: passage.TeacherForcing, label: str, width: int = 90) -> None:
    truth = tf.text[tf.prefix: tf.prefix + width]
    first = tf.first_free_miss
    text = (_("**{label}.** Teacher forcing: **{forced:.0f}%** of the next characters right. Free running: "
              "**{free:.0f}%**, wrong from the first character.") if first == 0 else
            _("**{label}.** Teacher forcing: **{forced:.0f}%** of the next characters right. Free running: "
              "**{free:.0f}%**, first mistake after {first} characters.") if first is not None else
            _("**{label}.** Teacher forcing: **{forced:.0f}%** of the next characters right. Free running: "
              "**{free:.0f}%**, no mistake."))
    st.markdown(text.format(label=label, forced=100 * tf.forced_accuracy, free=100 * tf.free_accuracy, first=first))
    st.markdown(shading.strips(truth, tf.forced, tf.free), unsafe_allow_html=True)


def gradient_section(baked: passage_store.Baked, raw: str | None) -> None:
    st.subheader(_("Backpropagation through time, on this network"))
    st.markdown(_(
        "Act 3 promised it: training sends each step's loss back through every earlier step. Here is that "
        "gradient for one loss, the network's guess at the last character of the passage's first window, sent "
        "back state by state through W_hq, tanh's slope and the one shared W_hh (the backward pass written out in "
        "`core/lesson/passage.py`, checked against torch's autograd in the tests):"))
    if raw is None:
        texts.missing_corpus_message()
        return
    with learner_errors():
        reach = chapter.reaches(baked.models, raw)
        chart = chapter.reach_chart(reach)
        show(chart.figure, chart.summary, chart.key)
        st.markdown(chapter.reach_reading(reach).text)


def teacher_forcing_section(baked: passage_store.Baked, raw: str | None) -> None:
    st.subheader(_("Teacher forcing: why generating is harder than training"))
    st.markdown(_(
        "In training, every step reads the **true** previous character, whatever the network guessed: this is "
        "called *teacher forcing*. When it generates, nobody supplies the truth: it reads its **own** previous "
        "guess, and one wrong guess changes everything after it. Both ways, on the stored run's weights, under "
        "the **text**: the **forced** guesses (reading the truth) and the **free** ones (reading its own), wrong "
        "characters marked:"))
    if raw is None:
        texts.missing_corpus_message()
        return
    text = passage.passage(raw)
    epochs = sorted(baked.models)
    views = {epoch: passage_run.teacher_forcing(epoch, text) for epoch in epochs}
    for epoch, tf in views.items():
        teacher_forcing_view(tf, _("After {epoch} epochs").format(epoch=epoch))
    after = passage_run.teacher_forcing(epochs[-1], text[-18:] + passage.continuation(raw, 200))
    teacher_forcing_view(after, _("After {epoch} epochs, on the text after the passage").format(epoch=epochs[-1]))
    half = views[epochs[0]]
    st.markdown(_("It is Act 1 again: a forecast built on its own guesses drifts. After {epoch} epochs the network "
                  "gets {forced:.0f}% of single characters right when it is given the truth, yet its own text {free}. "
                  "On text it has never seen, it gets {after:.0f}% right given the truth and its own text "
                  "{after_free}.").format(epoch=epochs[0], forced=100 * half.forced_accuracy, free=half.free_words(),
                                          after=100 * after.forced_accuracy, after_free=after.free_words()))


def act_training() -> None:
    try:
        baked = passage_run.baked()
    except ValueError as exc:
        st.error(plain(exc, 400), icon=":material/error:")
        return
    st.markdown(_(
        "Now train one, the chapter's way. Each character enters as a *one-hot* vector: zeros, with a single 1 at "
        "the character's id. At every step the tanh RNN scores every possible next character, and the loss "
        "compares those scores with the character that really came next. *Backpropagation through time* then "
        "sends the loss's gradient back through every step, each step adding its share to the one shared W_hh; "
        "*clipping* shrinks that gradient when it is too large; and *minibatch SGD* moves the weights a little "
        "against it, a small batch of text windows at a time. Here the network learns a single passage, the first "
        "{length} characters of the cleaned book, and nothing else. "
        "*Perplexity* is the number of characters it is effectively choosing between: {V} (every "
        "character it knows) for a blind guess, 1 for certainty. It is the exponential of the mean loss, the "
        "cross-entropy, over the n characters predicted:").format(length=passage.passage_length(passage.config()),
                                                                   V=baked.vocab_size))
    st.latex(r"\text{perplexity} = \exp\Big(-\frac{1}{n} \sum_{t=1}^{n} "
             r"\log P(x_t \mid x_{t-1}, \dots, x_1)\Big)")
    st.caption(_("The clipping rule, with g every parameter's gradient stacked into one vector and θ the threshold "
                 "(1 here): g ← min(1, θ / ‖g‖) · g. It shortens g when it is too long and never turns it."))
    raw = texts.time_machine_or_none()
    retrain_controls(raw)
    run_view(baked)
    st.markdown(_(
        "Be clear about what this shows: the network **memorises** one passage, so it shows how training "
        "works, not how well a model generalises. The held-out curve above is the test of that, and its caption "
        "says where it turned."))
    gradient_section(baked, raw)
    teacher_forcing_section(baked, raw)
    deeper("training", N_("Train on the whole book, with GRU and LSTM too"), preset="passage")


# --- the page --------------------------------------------------------------------------------------------

def act_after() -> None:
    after_the_acts()


ACT_BODIES = {1: act_predicting, 2: act_language, 3: act_memory, 4: act_training, 5: act_after}
def main() -> None:
    url_state.page("chapter")
    st.title(_("RNN Lab: the chapter in four acts"))
    book, url = (BOOK_ZH.split("》")[0] + "》", CHAPTERS_ZH[8][1].split("chapter_")[0]) if is_chinese() else \
        (BOOK.split(" (")[0], BOOK_URL)
    st.markdown(_("From a noisy sine to a network with memory, following the RNN chapter of [{book}]({url}). Every "
                  "figure is computed by the labs' own code, live where it can be (Act 4 starts from a stored run of "
                  "that code, which you can retrain); each act ends with a door into the lab that goes deeper.")
                .format(book=book, url=url))
    act = choose_act()
    download_button("chapter")
    st.header(_("Act {act} · {title}").format(act=act, title=_(ACTS[act])) if act < 5 else _(ACTS[act]))
    exercises.assignment("chapter")
    exercises.hold_figures("chapter")
    ACT_BODIES[act]()
    exercises.section("chapter", act)
    cite(chapter.SECTIONS[act])
    st.divider()
    step_buttons(act, "bottom")


if __name__ == "__main__":
    main()
