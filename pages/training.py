"""Lab 6, Training: train RNN language models live (CPU or GPU), with progress, stop, compare and export."""
import math
from dataclasses import replace

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core import train as core_train
from core.train import PRESETS
from ui import data, models, params
from ui.common import cite, learner_errors, show_source
from ui.jobs import JobManager

params.page("training")
st.title("🏋️ Training")
st.markdown(
    "Pick a preset or set every knob, press **Train**, and watch the model learn: perplexity falls, and the "
    "samples turn from noise into words. Training runs on the server in the background, so you can visit "
    "other labs and come back. Perplexity is exp(mean cross-entropy): a model guessing uniformly among V "
    "tokens scores V. **Bits per byte** divides the cross-entropy in bits by the bytes per token, so a "
    "character model and a BPE model can be compared."
)
cite("9.5 Recurrent Neural Network Implementation from Scratch and 9.6 Concise Implementation")


def _session_alive(session_id: str) -> bool:
    try:
        from streamlit.runtime import Runtime
        return not Runtime.exists() or Runtime.instance().is_active_session(session_id)
    except Exception:
        return True


@st.cache_resource
def manager() -> JobManager:
    return JobManager(session_alive=_session_alive)


def session_id() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx else "local"


PRESET_NOTES = {
    "book": "The book's run: characters, 10,000 training windows of 32, 32 hidden units, SGD at lr 1, 100 epochs.",
    "bpe": "The book's newer setup: byte-level BPE with 1,024 tokens, embedding 64, 128 hidden units, 10 epochs.",
    "whole": "The whole corpus (90% / 10%), state carried across windows, 256 units, Adam: about a minute of CPU.",
    "tiny": "Three quick epochs of a small model: seconds, for trying the controls.",
}

jobs = manager()
sid = session_id()
mine = jobs.for_session(sid)
active = [j for j in mine if j.active]

with st.sidebar:
    if active:
        st.caption(f"Training: {active[0].name} ({active[0].status})")

def _fragment_only_run() -> bool:
    """True while the fragment reruns on its own (a full-page run draws everything anyway)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    return bool(ctx and getattr(ctx, "fragment_ids_this_run", None))


def history_frame(job) -> pd.DataFrame:
    rows = job.progress.history if job.progress else []
    return pd.DataFrame(rows)


def curves(jobs_to_plot, title: str) -> go.Figure:
    fig = go.Figure()
    last_epoch = 1
    for job in jobs_to_plot:
        h = history_frame(job)
        if h.empty:
            continue
        last_epoch = max(last_epoch, int(h["epoch"].max()))
        if len(jobs_to_plot) == 1:
            fig.add_trace(go.Scatter(x=h["epoch"][1:], y=h["train_ppl"][1:], name="train perplexity", mode="lines+markers"))
        fig.add_trace(go.Scatter(x=h["epoch"], y=h["val_ppl"], mode="lines+markers",
                                 name="validation perplexity" if len(jobs_to_plot) == 1 else job.name))
        if len(jobs_to_plot) == 1:
            fig.add_trace(go.Scatter(x=h["epoch"], y=h["val_bpb"], name="validation bits per byte (right axis)",
                                     mode="lines", line=dict(dash="dot"), yaxis="y2"))
    fig.update_layout(title=title, xaxis_title="epoch", yaxis_title="perplexity", yaxis_type="log", height=340,
                      xaxis=dict(dtick=max(1, math.ceil(last_epoch / 10))),  # whole epochs only
                      margin=dict(t=50, b=40),
                      yaxis2=dict(title="bits per byte", overlaying="y", side="right", showgrid=False),
                      legend=dict(orientation="h", y=-0.25))
    return fig


@st.fragment(run_every=1.0)
def live() -> None:
    runs = jobs.for_session(sid)
    current = [j for j in runs if j.active]
    latest = current[0] if current else (runs[-1] if runs else None)
    if latest is None:
        st.info("No run yet: choose a preset and press **Train**.", icon="ℹ️")
        return
    if latest.active:
        st.session_state["training.watching"] = latest.id
    elif st.session_state.pop("training.watching", None) == latest.id and _fragment_only_run():
        st.rerun(scope="app")  # the run just ended: redraw the whole page (compare and export appear)
    p = latest.progress
    st.subheader(f"{latest.name}: {latest.status}")
    if latest.active:
        frac = p.step / p.total_steps if p and p.total_steps else 0.0
        st.progress(frac, text=f"epoch {p.epoch if p else 0}/{latest.config.epochs}, step {p.step if p else 0}"
                                f"/{p.total_steps if p else '?'}" if p else "preparing the data ...")
        if st.button("Stop", icon="⏹️", key=f"stop_{latest.id}"):
            jobs.stop(latest.id)
    elif latest.status == "error":
        st.error(latest.message, icon="🚫")
    elif latest.status == "diverged":
        st.warning(latest.message, icon="💥")
    else:
        st.success(f"{latest.status}: {latest.message}", icon="✅")
    if p is not None:
        c = st.columns(6)
        c[0].metric("Train perplexity", f"{p.train_ppl:.2f}" if math.isfinite(p.train_ppl) else "–")
        c[1].metric("Validation perplexity", f"{p.val_ppl:.2f}" if math.isfinite(p.val_ppl) else "–")
        c[2].metric("Bits per byte", f"{p.val_bpb:.3f}" if math.isfinite(p.val_bpb) else "–")
        c[3].metric("Tokens / s", f"{p.tokens_per_s:,.0f}")
        c[4].metric("Elapsed", f"{p.elapsed:.0f} s")
        c[5].metric("ETA", f"{p.eta:.0f} s" if math.isfinite(p.eta) else "–")
        st.caption(f"Device: {p.device}")
        st.plotly_chart(curves([latest], "Perplexity per epoch (epoch 0: untrained)"), width="stretch",
                        key=f"curve_{latest.id}")
        if latest.samples:
            st.markdown("**Samples** (prefix '" + latest.config.sample_prefix + "', T = 0.8)")
            st.dataframe(pd.DataFrame(latest.samples[::-1], columns=["epoch", "sample"]), hide_index=True,
                         width="stretch", height=min(300, 40 + 35 * len(latest.samples)))


live()

preset = params.choice("Preset", "preset", "book", tuple(PRESETS), widget="segmented_control",
                       format_func=lambda p: p.upper() if p == "bpe" else p.capitalize())
preset = preset or "book"
base = PRESETS[preset]
st.caption(PRESET_NOTES.get(preset, ""))

# Every setting of the form lives in the URL too (only those that differ from the preset), written when the
# learner presses Train: a copied address opens the same form, ready to train the same run.
RANGES = {"num_train": (1, 1_000_000), "num_val": (1, 1_000_000), "hidden_size": (1, 2048), "embed_dim": (0, 1024),
          "num_layers": (1, 4), "dropout": (0.0, 0.9), "lr": (1e-5, 100.0), "clip": (0.0, 1000.0),
          "epochs": (1, 10_000), "batch_size": (1, 8192), "num_steps": (1, 512), "seed": (0, 2**31 - 1)}
CHOICES = {"tokenizer": ("char", "bpe"), "bpe_vocab": (256, 512, 1024, 2048, 4096), "split": ("book", "whole"),
           "cleaning": ("letters", "punctuation"), "truncation": ("fresh", "detach"),
           "cell": ("scratch", "rnn", "gru", "lstm"), "optimizer": ("sgd", "adam"), "device": ("auto", "cpu", "cuda"),
           "lr_decay": ("none", "cosine")}
FIELDS = tuple(CHOICES) + tuple(RANGES)
if st.session_state.get("_tr_preset", preset) != preset:
    params.clear_form(FIELDS)  # settings written for another preset
st.session_state["_tr_preset"] = preset
form = f"tr.{preset}"


def _start(url: dict) -> tuple[dict, list[str]]:
    config, problems = core_train.parse_overrides(base, url, RANGES, CHOICES)
    return {n: getattr(config, n) for n in FIELDS}, problems


params.seed_form(form, FIELDS, _start)
labels = {"timemachine": "The Time Machine", "upload": "My upload", "char": "characters", "bpe": "BPE",
          "book": "book windows", "whole": "whole corpus 90/10", "fresh": "fresh zero state",
          "detach": "carry state (detach)", "scratch": "RNN from scratch", "rnn": "RNN (fused)", "gru": "GRU",
          "lstm": "LSTM", "sgd": "SGD", "adam": "ADAM"}


def radio(col, label: str, name: str, **kw):
    return col.radio(label, CHOICES[name], key=f"{form}.{name}", format_func=lambda v: labels.get(v, v), **kw)


def number(col, label: str, name: str, **kw):
    lo, hi = RANGES[name]
    return col.number_input(label, lo, hi, key=f"{form}.{name}", **kw)


with st.form("train_form"):
    st.markdown("**Data**")
    d1, d2, d3, d4 = st.columns(4)
    source = d1.radio("Text", ("timemachine", "upload"), key=f"tr.source.{preset}", format_func=labels.get)
    radio(d2, "Tokens", "tokenizer")
    d3.select_slider("BPE vocabulary", CHOICES["bpe_vocab"], key=f"{form}.bpe_vocab")
    radio(d4, "Split", "split")
    d5, d6, d7, d8 = st.columns(4)
    number(d5, "Training windows (book split)", "num_train")
    number(d6, "Validation windows (book split)", "num_val")
    radio(d7, "Cleaning", "cleaning")
    radio(d8, "Between windows", "truncation",
          help="fresh: zero state per window; detach: carry the state, cut the gradient (whole-corpus split only)")
    st.markdown("**Model**")
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.selectbox("Cell", CHOICES["cell"], key=f"{form}.cell", format_func=labels.get)
    number(m2, "Hidden units", "hidden_size")
    number(m3, "Embedding (0 = one-hot)", "embed_dim")
    number(m4, "Layers", "num_layers")
    number(m5, "Dropout", "dropout", step=0.05)
    st.markdown("**Optimisation**")
    o1, o2, o3, o4, o5, o6 = st.columns(6)
    o1.selectbox("Optimizer", CHOICES["optimizer"], key=f"{form}.optimizer", format_func=labels.get)
    number(o2, "Learning rate", "lr", format="%g")
    number(o3, "Clip norm (0 = off)", "clip")
    number(o4, "Epochs", "epochs")
    number(o5, "Batch size", "batch_size")
    number(o6, "num_steps", "num_steps")
    o7, o8, o9 = st.columns(3)
    number(o7, "Seed", "seed")
    radio(o8, "Device", "device", horizontal=True)
    radio(o9, "Learning-rate schedule", "lr_decay", horizontal=True)
    submitted = st.form_submit_button("Train", type="primary", icon="▶️", disabled=bool(active))

if submitted:
    with learner_errors():
        chosen = {n: st.session_state[f"{form}.{n}"] for n in FIELDS}
        if chosen["split"] == "book":
            chosen["truncation"] = "fresh"  # book windows are shuffled: each starts from a zero state
        config = replace(base, **chosen)
        if source == "upload":
            up = data.uploaded()
            if up is None:
                raise ValueError("Upload a text first (in the box below), or train on The Time Machine.")
            text = up["text"]
        else:
            text = data.time_machine_or_none()
            if text is None:
                raise ValueError("The Time Machine is not available here. Upload a text below, or set RNNLAB_CORPUS.")
        jobs.submit(config, text, sid, name=f"{preset} #{len(mine) + 1}")
        params.write_form(form, FIELDS, core_train.config_overrides(base, config, FIELDS))
        st.rerun()

with st.expander("Train on your own text"):
    data.upload_widget("training_upload")
    if data.uploaded():
        st.caption(f"Uploaded: {data.uploaded()['name']} ({len(data.uploaded()['text']):,} characters)")
    if data.time_machine_or_none() is None:
        data.missing_corpus_message()
        data.download_button()


done = [j for j in jobs.for_session(sid) if not j.active and j.result is not None]
if done:
    st.header("Compare and export")
    st.plotly_chart(curves(done, "Validation perplexity of this session's runs"), width="stretch")
    table = []
    for j in done:
        last = j.result.final
        table.append({"run": j.name, "status": j.status, "cell": j.config.cell, "tokens": j.config.tokenizer,
                      "hidden": j.config.hidden_size, "optimizer": j.config.optimizer, "lr": j.config.lr,
                      "epochs": last.get("epoch"), "val ppl": round(last.get("val_ppl", math.nan), 3),
                      "bits/byte": round(last.get("val_bpb", math.nan), 3), "seconds": round(j.result.elapsed, 1),
                      "tokens/s": round(j.result.tokens_per_s), "device": j.result.device})
    st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch")
    for j in reversed(done):
        with st.container(border=True):
            st.markdown(f"**{j.name}** · {j.status} · val perplexity {j.result.final.get('val_ppl', math.nan):.2f}")
            e1, e2, e3 = st.columns(3)
            # deferred: the archive is built only when the learner clicks, not on every rerun
            e1.download_button("Download run (.zip: weights, JSON, CSV)", lambda r=j.result: core_train.run_zip(r),
                               file_name=f"rnnlab-{j.name.replace(' ', '').replace('#', '-')}.zip",
                               mime="application/zip", key=f"zip_{j.id}")
            e2.download_button("Metrics (.csv)", lambda r=j.result: core_train.metrics_csv(r.history),
                               file_name=f"rnnlab-{j.id}-metrics.csv", mime="text/csv", key=f"csv_{j.id}")
            if e3.button("Use in the Sampling lab", key=f"use_{j.id}"):
                models.add_session_model(j.name, j.result.lm)
                st.toast(f"{j.name} is now in the Sampling lab's model picker.")

with st.expander("How training works here"):
    st.markdown("""
- **Book split**: the first *num_train* windows of *num_steps* tokens (stride one) train, the next *num_val*
  validate; every window starts from a zero state. **Whole corpus**: the first 90% trains as *batch size*
  parallel streams read in order from a random offset each epoch; the last 10% validates.
- **Clipping** rescales the whole gradient to norm θ when it is larger. **Divergence**: a NaN or infinite loss
  stops the run and restores the weights of the last good step. **Stop** keeps everything learnt so far.
- The **RNN (fused)** cell runs a hand-written, verified time loop on the CPU and cuDNN on a GPU; **from scratch**
  is the book's loop over time steps in plain PyTorch. Both compute the same function.
- **On a GPU** a run starts from the same weights as on the CPU and works in full float32 (no TF32 shortcuts),
  with cuDNN's deterministic algorithms: the same seed gives the same run again, and the numbers stay within
  float32 rounding of the CPU's.
- **Seeds matter**: with plain SGD at a constant learning rate the validation perplexity still jumps by about
  ±0.1 from one epoch to the next at the end of the book preset, so the final number depends on the seed
  (7.19 to 7.47 over sixteen seeds here; a book-style loop spreads at least as much). Compare settings over a few
  seeds, or with the *Compare* chart, before trusting a difference of a tenth.
- **One hidden bias**: the book's RNN adds one bias b_h inside the tanh; PyTorch's nn.RNN adds two (b_ih and b_hh)
  that always appear as a sum. In the book preset b_hh stays at zero, so plain SGD updates the sum at the book's
  learning rate rather than twice it.
""")
    show_source(core_train.train, title="The training loop")
