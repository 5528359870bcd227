"""What each lab and act of RNN Lab computes, draws and says, as notebook cells: code that calls core with the
settings cell's S, plotly figures like the page's, and the page's readings from the same core functions. The last
code cell prints the page's numbers as JSON (the tests compare them with the page's)."""
from __future__ import annotations

from core.notebooks.cells import CODE, numbers_cell

FORECASTING = [
    (CODE, """from core.sequences import forecast, readings

x = forecast.make_series(S["T"], S["sigma"], S["seed"])
a = forecast.analyse(x, S["tau"], S["n_train"], S["k"])
t = np.arange(1, len(x) + 1)
fig = go.Figure(go.Scatter(x=t, y=x, name="data", line=dict(color="#9aa5b1", width=1)))
for k, pred in a.forecasts.items():
    fig.add_trace(go.Scatter(x=t, y=pred, name=f"{k}-step", visible=True if k in (1, S["k"]) else "legendonly"))
fig.add_trace(go.Scatter(x=t, y=a.from_end, name="from the end of training (own guesses only)",
                         line=dict(dash="dash", color="#222222")))
fig.add_vrect(x0=1, x1=S["n_train"], fillcolor="#e8eef7", opacity=0.5, line_width=0, annotation_text="training range")
fig.update_layout(title="Data and forecasts", xaxis_title="time t", yaxis_title="x")
fig.show()"""),
    (CODE, """if a.horizon is not None:
    fig = go.Figure(go.Scatter(x=np.arange(1, len(a.horizon) + 1), y=a.horizon, mode="lines+markers", name="test MSE"))
    fig.add_hline(y=a.test_variance, line_dash="dot", annotation_text="variance of the test data (a constant guess)")
    fig.update_layout(title="Test MSE against the horizon k", xaxis_title="k", yaxis_title="MSE",
                      yaxis_type="log" if np.max(a.horizon) >= readings.EXACT else "linear")
    fig.show()
noises = forecast.noise_power(x, S["tau"], S["n_train"]), forecast.noise_power(x, S["n_train"], len(x))
heading, gap = readings.train_test(a, *noises)
say(readings.one_step(a, S["sigma"]), readings.k_vs_one(a, S["k"]), readings.horizon_trend(a),
    readings.far_horizon(a), readings.rest(a, S["n_train"], len(x)))
say(f"**{heading}.**", gap)"""),
    (CODE, numbers_cell(["train_mse=a.train_mse", "test_mse=a.test_mse", "k_mse=a.k_mse"])),
]

GRADIENT_FLOW = [
    (CODE, """from core.nn import gradflow, gradflow_readings as readings

a = gradflow.analyse(S["n"], S["scale"], S["T"], S["kind"], S["input_scale"], S["seed"], S["use_tanh"], S["theta"])
k = np.arange(len(a.linear))
fig = go.Figure(go.Scatter(x=k, y=a.linear, name="linear: (W_hhᵀ)ᵏ g", mode="lines+markers"))
if a.tanh is not None:
    fig.add_trace(go.Scatter(x=k, y=a.tanh, name="through tanh", mode="lines+markers"))
fig.add_trace(go.Scatter(x=k, y=a.guide, name="slope of ρ per step", line=dict(dash="dash", color="gray")))
fig.update_layout(title="Gradient norm against steps back", xaxis_title="steps back k", yaxis_title="gradient norm",
                  yaxis_type="log")
fig.show()
say(readings.regime(a), readings.damping(a))"""),
    (CODE, """circle = np.linspace(0, 2 * np.pi, 200)
fig = go.Figure(go.Scatter(x=np.cos(circle), y=np.sin(circle), name="unit circle", line=dict(dash="dot", color="gray")))
fig.add_trace(go.Scatter(x=a.eigenvalues.real, y=a.eigenvalues.imag, mode="markers", name="eigenvalues"))
fig.update_layout(title="Eigenvalues of W_hh", xaxis_title="real", yaxis_title="imaginary", yaxis_scaleanchor="x")
fig.show()
fig = go.Figure([go.Scatter(y=a.shown, name="unclipped"),
                 go.Scatter(y=a.clipped, name=f"clipped at θ = {S['theta']:g} (× {a.clip_factor:.3g})")])
fig.update_layout(title="Clipping: one factor for every step", xaxis_title="steps back k", yaxis_type="log")
fig.show()
say(readings.outside(a), readings.clip_action(a, S["theta"]), readings.clip_share(a))"""),
    (CODE, numbers_cell(["rho=a.rho", "growth=a.growth", "regime=a.regime", "clip_factor=a.clip_factor"])),
]

RNN_CELL = [
    (CODE, """from core.nn import cell_demo, param_counts

run = cell_demo.read_word(S["word"], S["h"], S["seed"])
step = run.step(S["t"])
letters = run.vocab.idx_to_token
fig = go.Figure(go.Bar(x=[repr(c) for c in letters], y=step.P,
                       marker_color=["#e45756" if i == step.target_id else "#4c78a8" for i in range(len(letters))]))
fig.update_layout(title=f"Step t = {S['t']}: it reads {step.read!r}, the next letter is {step.target!r} (red)",
                  xaxis_title="next letter", yaxis_title="probability")
fig.show()
print(f"P(next letter) = {step.P[step.target_id]:.3f}, loss {step.loss:.3f}; mean over all {run.steps} steps: "
      f"{run.cache.loss:.3f}. The weights are random: nothing is learnt yet.")"""),
    (CODE, """cases = [(28, 256, 64), (S["V"], S["h2"], 64), (10_000, 256, 256)]
say(param_counts.input_choice(cases))"""),
    (CODE, numbers_cell(["p_next=float(step.P[step.target_id])", "loss=step.loss", "mean_loss=float(run.cache.loss)"])),
]

SAMPLING = [
    (CODE, """from core.assets import HELD_OUT_BPC
from core.nn import probe, sample_readings, sampling
from core.runs.saved import load_pretrained

lm = load_pretrained()     # the pretrained character RNN shipped with RNN Lab
top_k, top_p = S["top_k"] or None, S["top_p"] if S["top_p"] < 1 else None   # 0 and 1: off
out = sampling.sample(lm, S["prefix"], S["length"], S["temperature"], top_k, top_p, S["seed"])
print(out.prefix + out.text)
logits = probe.next_logits(lm, S["prefix"])
p_t, p_1 = sampling.distribution(logits, S["temperature"]), sampling.distribution(logits, 1.0)
top = np.argsort(p_1)[::-1][:15]
labels = [repr(lm.vocab.token_text(int(i))) for i in top]
fig = go.Figure([go.Bar(x=labels, y=p_1[top], name="T = 1 (the model)"),
                 go.Bar(x=labels, y=p_t[top], name=f"T = {S['temperature']:g} (sampled from)")])
fig.update_layout(title=f"Entropy {sampling.entropy_bits(p_1):.2f} bits at T = 1, "
                        f"{sampling.entropy_bits(p_t):.2f} bits at T = {S['temperature']:g}",
                  xaxis_title="next character", yaxis_title="probability")
fig.show()"""),
    (CODE, """shown = (out.prefix + out.text)[:192]
H = probe.hidden_states(lm, shown)
start = S["hidden_from"] - 1
window = H[start:start + 32]
units = probe.order_by_first_flip(window, probe.most_variable_units(window, min(24, H.shape[1])))
chars = ["␣" if c == " " else c for c in shown[start:start + 32]]
fig = go.Figure(go.Heatmap(z=window[:, units].T, y=[str(u) for u in units], colorscale="RdBu", zmid=0, zmin=-1,
                           zmax=1))
fig.update_layout(title="The top layer's hidden state", xaxis=dict(tickmode="array", tickvals=list(range(len(chars))),
                  ticktext=chars), yaxis=dict(title="unit", autorange="reversed", type="category"))
fig.show()
greedy = sampling.sample(lm, S["prefix"], min(S["length"], 300), 0.0).text
odd = sampling.odd_choices(float(out.surprisal_bits.mean()), float(lm.meta[HELD_OUT_BPC]), len(lm.vocab))
say(sample_readings.saturation(window[:, units]), sample_readings.greedy(greedy, lm.vocab.decode(out.token_ids[:300])),
    odd)"""),
    (CODE, numbers_cell(["mean_bits=float(out.surprisal_bits.mean())", "text=out.text"])),
]

TOKENS = [
    (CODE, """from core.nn import param_counts
from core.text import corpus, ngrams, readings, tokens

raw = corpus.load_corpus()       # RNNLAB_CORPUS, the cache, or a download (sha1 checked)
text = corpus.clean(raw, S["cleaning"])
vocab = tokens.build_vocab(text, S["tokenizer"], S["bpe_size"])
ids = vocab.encode(text)
print(f"{len(text):,} characters, {len(ids):,} tokens, {len(vocab):,} token types")
curves = [ngrams.zipf_curve(ids, n) for n in (1, 2, 3)]
fig = go.Figure([go.Scatter(x=np.arange(1, len(c) + 1), y=c, name=f"{n}-grams") for n, c in zip((1, 2, 3), curves)])
fig.update_layout(title="Frequency against rank", xaxis_type="log", yaxis_type="log", xaxis_title="rank",
                  yaxis_title="count")
fig.show()
cov = ngrams.ngram_coverage(ids, 5)
fig = go.Figure([go.Scatter(x=[c.n for c in cov], y=[c.distinct for c in cov], name="distinct n-grams seen"),
                 go.Scatter(x=[c.n for c in cov], y=[float(c.possible) for c in cov], name="possible")])
fig.update_layout(title="n-grams seen against possible", xaxis_title="n", yaxis_type="log")
fig.show()
say(ngrams.zipf_reading(curves, vocab.kind), readings.coverage(cov))"""),
    (CODE, """terms = param_counts.rnn_parameter_terms(S["V"], S["d"], S["h"])
print(f"({S['k']}+1)-gram table entries: 10^{np.log10(float(S['V'])) * (S['k'] + 1):.1f}; RNN parameters: "
      f"{sum(terms.values()):,}")
say(param_counts.largest_terms(terms))"""),
    (CODE, numbers_cell(["tokens=len(ids)", "types=len(vocab)", "distinct_5grams=cov[-1].distinct"])),
]

TRAINING = [
    (CODE, """from dataclasses import replace
from core.runs.config import PRESETS
from core.runs.loop import train
from core.runs import readings
from core.text.corpus import load_corpus

# the preset, with any other setting in S put over it (as the lab's form does)
config = replace(PRESETS[S["preset"]].config, **{k: v for k, v in S.items() if k != "preset"})
print(PRESETS[S["preset"]].note)
result = train(config, text=load_corpus())    # seconds to minutes on a CPU, by preset
h = result.history
fig = go.Figure([go.Scatter(x=[r.epoch for r in h], y=[r.train_ppl for r in h], name="train"),
                 go.Scatter(x=[r.epoch for r in h], y=[r.val_ppl for r in h], name="validation")])
fig.update_layout(title="Perplexity per epoch", xaxis_title="epoch", yaxis_title="perplexity", yaxis_type="log")
fig.show()
say(f"Validation perplexity {h[-1].val_ppl:.2f} after epoch {h[-1].epoch}.", readings.train_above_val(h))"""),
    (CODE, numbers_cell(["val_ppl=h[-1].val_ppl", "train_ppl=h[-1].train_ppl", "epochs=h[-1].epoch"])),
]

ACTS = {
    1: [(CODE, 'S_lab = dict(T=1000, n_train=600, tau=S["tau"], k=16, sigma=0.2, seed=0)\nS = {**S, **S_lab}')]
    + FORECASTING,
    2: [(CODE, """from core.text import corpus, ngrams, readings, tokens

text = corpus.clean(corpus.load_corpus(), "letters")
vocab = tokens.CharVocab.build(text)
print(f"{len(vocab)} tokens; the book is {len(text):,} of them. The first 16 as ids: {vocab.encode(text[:16])}")
cov = ngrams.ngram_coverage(vocab.encode(text), 5)
fig = go.Figure([go.Scatter(x=[c.n for c in cov], y=[c.distinct for c in cov], name="distinct n-grams seen"),
                 go.Scatter(x=[c.n for c in cov], y=[float(c.possible) for c in cov], name="possible")])
fig.update_layout(title="n-grams seen against possible", xaxis_title="n", yaxis_type="log")
fig.show()
say(readings.coverage(cov))"""), (CODE, numbers_cell(["distinct_5grams=cov[-1].distinct"]))],
    3: [(CODE, """from core.nn import param_counts

V, n = 28, np.arange(1, 21)
rnn = sum(param_counts.rnn_parameter_terms(V, 0, S["h"]).values())
window = [param_counts.window_model_parameters(V, int(k), S["h"]) for k in n]
fig = go.Figure([go.Scatter(x=n, y=window, name="fixed-window network", mode="lines+markers"),
                 go.Scatter(x=n, y=[rnn] * len(n), name="RNN (any context)")])
fig.update_layout(title="Parameters against context length", xaxis_title="tokens of context n",
                  yaxis_title="parameters")
fig.show()"""), (CODE, numbers_cell(["rnn=rnn", "window_5=window[4]", "window_20=window[19]"]))],
    4: [(CODE, """from core.lesson import passage, readings, store
from core.text.corpus import load_corpus

baked = store.load_baked()    # the stored run: python -m core passage rebuilds it
h = baked.history
fig = go.Figure([go.Scatter(x=[r.epoch for r in h], y=[r.train_ppl for r in h], name="the passage (training)"),
                 go.Scatter(x=[r.epoch for r in h], y=[r.val_ppl for r in h], name="the text after it (held out)")])
fig.update_layout(title="The stored run (seed 0)", xaxis_title="epoch", yaxis_title="perplexity", yaxis_type="log")
fig.show()
say(*readings.passage_run(h, baked.vocab_size, None), readings.what_repeats(h))"""),
        (CODE, """from core.nn import gradflow_readings

window = passage.passage(load_corpus())[: passage.config().num_steps + 1]
reaches = {epoch: passage.gradient_reach(model, window) for epoch, model in sorted(baked.models.items())}
fig = go.Figure([go.Scatter(y=r.norms, name=f"after {e} epochs") for e, r in reaches.items()])
fig.update_layout(title="How far back the last character's loss reaches", xaxis_title="steps back",
                  yaxis_type="log")
fig.show()
last = max(reaches)
say(gradflow_readings.reach(reaches[last].norms, last))"""),
        (CODE, numbers_cell(["val_ppl=h[-1].val_ppl", "train_ppl=h[-1].train_ppl"]))],
    5: [(CODE, """from core.nn import gradflow, gradflow_readings

a = gradflow.analyse(n=32, scale=S["scale"], T=24)
fig = go.Figure([go.Scatter(y=a.linear, name="linear"), go.Scatter(y=a.tanh, name="through tanh")])
fig.update_layout(title="Gradient norm against steps back", xaxis_title="steps back k", yaxis_type="log")
fig.show()
say(gradflow_readings.through_tanh(a))"""), (CODE, numbers_cell(["rho=a.rho", "growth=a.growth"]))],
}

LABS = {"forecasting": FORECASTING, "gradient_flow": GRADIENT_FLOW, "rnn_cell": RNN_CELL, "sampling": SAMPLING,
        "tokens": TOKENS, "training": TRAINING}

SECTIONS = {"forecasting": "9.1 Working with Sequences", "tokens": "9.2 Converting Raw Text into Sequence Data and "
            "9.3 Language Models", "rnn_cell": "9.4 Recurrent Neural Networks", "sampling": "9.5 Recurrent Neural "
            "Network Implementation from Scratch", "gradient_flow": "9.7 Backpropagation Through Time",
            "training": "9.5 and 9.6 (from scratch, and concise)"}


ACT_SECTIONS = {1: "9.1 Working with Sequences", 2: "9.2 and 9.3 (raw text into sequence data, language models)",
                3: "9.4 Recurrent Neural Networks",
                4: "9.5 and 9.7 (an RNN from scratch, backpropagation through time)",
                5: "9.6 and 9.7 (the concise implementation, backpropagation through time)"}


def cells_of(page: str, act: int | None) -> list:
    """The recipe of a lab, or of one act of the chapter."""
    return ACTS[act] if page == "chapter" else LABS[page]
