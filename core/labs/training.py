"""Lab 7, Training: RNN, GRU and LSTM language models trained live, their curves, metrics and runs compared.

The lab's settings (a preset, then every setting of core.runs.config.TrainConfig on its form), the computation (a
training run: core.runs.loop.train, which the page hands to its training workers), its figures, tables and
readings. Its page draws them; its notebook trains the same run in the kernel."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import plotly.graph_objects as go

from core.i18n import N_, _, listing, sentences
from core.claims import Claim
from core.figures import Chart, Metric, chart_text, style
from core.runs import data as data_module, loop, readings as run_readings
from core.runs.config import PRESETS, SETTINGS, TrainConfig
from core.runs.record import HistoryRow, Progress, status_word
from core.settings import allowed, setting

KEY = "training"
TITLE = N_("Training")   # the menu shows it translated (core.i18n)
ICON = ":material/model_training:"
BLURB = N_("Train RNN, GRU and LSTM language models live on CPU or GPU; watch, stop, compare and export runs.")
SECTION = "9.5 Recurrent Neural Network Implementation from Scratch and 9.6 Concise Implementation"
TRAINS = True    # compute() trains a model: the claims sweep checks its readings on histories, not at every control


@dataclass(frozen=True)
class Settings:
    preset: str = setting("book", N_("Preset"), widget="segmented", choices=tuple(PRESETS))


def settings_from(values: dict) -> TrainConfig:
    """The run a notebook's S asks for: its preset, with every other setting in S put over it (as the form does)."""
    values = dict(values)
    name = values.pop("preset", Settings().preset)
    if name not in PRESETS:
        raise ValueError(_("There is no preset {name}; presets: {presets}.").format(name=repr(str(name)[:40]),
                                                                                    presets=", ".join(PRESETS)))
    unknown = set(values) - set(SETTINGS)
    if unknown:
        raise ValueError(_("Not a training setting: {names}.").format(names=", ".join(sorted(map(str, unknown)))))
    return replace(PRESETS[name].config, **{k: SETTINGS[k].check(v) for k, v in values.items()})


def out_of_range(chosen: dict) -> list[str]:
    """The form's values that the engine would refuse, each in words with its allowed range."""
    wrong = []
    for name, value in chosen.items():
        s = SETTINGS[name]
        try:
            s.check(value)
        except ValueError:
            wrong.append(_("{label} is {value}; {allowed}").format(label=_(s.label), value=format(value, ",.6g"),
                                                                   allowed=allowed(s).lower())
                         if s.kind in (int, float) and not s.choices else
                         _("{label} has a value it cannot take ({value}).").format(label=_(s.label), value=repr(value)))
    return wrong


@dataclass(frozen=True)
class Result:
    config: TrainConfig
    history: list[HistoryRow]
    seconds: float


def compute(config: TrainConfig, text: str | None = None) -> Result:
    """Train the run on the corpus (or text): seconds to minutes on a CPU, by preset."""
    from core.text.corpus import load_corpus
    result = loop.train(config, text=load_corpus() if text is None else text)
    return Result(config, list(result.history), result.elapsed)


def seconds_text(s: float) -> str:
    """Seconds as the runs table rounds them below ten (a half-second run reads 0.5 s, not 0 s), whole above."""
    return _("{s} s").format(s=f"{s:.1f}" if s < 9.95 else f"{s:,.0f}")


def progress_metrics(p: Progress) -> list[Metric]:
    """A run's numbers as it trains: perplexities, bits per byte, speed, time spent and left."""
    def shown(x: float, fmt: str) -> str:
        return format(x, fmt) if math.isfinite(x) else "–"
    return [Metric(_("Train perplexity"), shown(p.train_ppl, ".2f"),
                   _("Over the steps of the epoch in progress so far (a whole epoch's once it ends).")),
            Metric(_("Validation perplexity"), shown(p.val_ppl, ".2f"),
                   _("On the held-out text, measured at the end of the last finished epoch (epoch 0: before "
                     "training). Compare it with the train perplexity once an epoch has ended.")),
            Metric(_("Bits per byte"), shown(p.val_bpb, ".3f")), Metric(_("Tokens / s"), f"{p.tokens_per_s:,.0f}"),
            Metric(_("Elapsed"), seconds_text(p.elapsed)),
            Metric(_("ETA"), seconds_text(p.eta) if math.isfinite(p.eta) else "–")]


def metrics(r: Result) -> list[Metric]:
    last = r.history[-1]
    return [Metric(_("Validation perplexity"), f"{last.val_ppl:.2f}"),
            Metric(_("Train perplexity"), f"{last.train_ppl:.2f}"),
            Metric(_("Epochs"), f"{last.epoch}"), Metric(_("Elapsed"), seconds_text(r.seconds))]


def perplexities_when(p: Progress, epochs: int) -> str:
    """The two perplexities of a progress report, each with when it was measured: they come from different
    moments (the train figure from the steps of the epoch in progress, the validation one from the last finished
    epoch), so side by side without that they would read as a gap between training and held-out text."""
    per_epoch = p.total_steps // epochs if epochs else 0
    current = p.epoch + 1 if per_epoch and p.step > p.epoch * per_epoch else p.epoch
    checked = p.history[-1].epoch if p.history else p.epoch
    parts = []
    if math.isfinite(p.train_ppl):
        parts.append(_("; train perplexity {ppl:.2f} over epoch {epoch}'s steps so far").format(ppl=p.train_ppl,
                                                                                                 epoch=current))
    if math.isfinite(p.val_ppl):
        parts.append((_("; validation perplexity {ppl:.2f} before training") if checked == 0 else
                      _("; validation perplexity {ppl:.2f} after epoch {epoch}")).format(ppl=p.val_ppl, epoch=checked))
    return "".join(parts)


def curves_figure(histories: dict[str, list[HistoryRow]], title: str) -> go.Figure:
    """Validation perplexity per epoch of each named run; for a single run also its training perplexity. (Bits per
    byte is the same quantity on another scale: it is in the metrics above the chart, not on a second axis.)"""
    fig = go.Figure()
    last_epoch = 1
    single = len(histories) == 1
    for name, rows in histories.items():
        if not rows:
            continue
        epochs = [r.epoch for r in rows]
        last_epoch = max(last_epoch, max(epochs))
        if single:
            fig.add_trace(go.Scatter(x=epochs, y=[r.train_ppl for r in rows], name=_("train perplexity"),
                                     mode="lines+markers"))
        fig.add_trace(go.Scatter(x=epochs, y=[r.val_ppl for r in rows], mode="lines+markers",
                                 name=_("validation perplexity") if single else chart_text(name)))
    style(fig, title, _("epoch"), _("perplexity"), height=340, log_y=True)
    fig.update_layout(xaxis=dict(dtick=max(1, math.ceil(last_epoch / 10))),  # whole epochs only
                      legend=dict(orientation="h", y=-0.25))
    return fig


def train_above_val(rows: list[HistoryRow]) -> Claim | None:
    return run_readings.train_above_val(rows)


def curves_summary(histories: dict[str, list[HistoryRow]]) -> str:
    """Each run's curve in words: validation perplexity at the start, at the end, and at its best."""
    parts = []
    for name, rows in histories.items():
        vals = [(r.epoch, r.val_ppl) for r in rows if math.isfinite(r.val_ppl)]
        if not vals:
            parts.append(_("{name}: no validation yet").format(name=name))
            continue
        best = min(vals, key=lambda ev: ev[1])
        parts.append(_("{name}: validation perplexity {first:.2f} at epoch {first_epoch}, {last:.2f} at epoch "
                       "{last_epoch} (best {best:.2f} at epoch {best_epoch})").format(
            name=name, first=vals[0][1], first_epoch=vals[0][0], last=vals[-1][1], last_epoch=vals[-1][0],
            best=best[1], best_epoch=best[0]))
    said = train_above_val(next(iter(histories.values()))) if len(histories) == 1 else None
    return sentences(_("{parts}.").format(parts=_("; ").join(parts)), said)


def curves_chart(histories: dict[str, list[HistoryRow]], title: str, key: str) -> Chart:
    return Chart(key, curves_figure(histories, title), curves_summary(histories))


def charts(r: Result) -> list[Chart]:
    return [curves_chart({_("this run"): r.history}, _("Perplexity per epoch (epoch 0: untrained)"), "curve")]


def readings(r: Result) -> list[Claim]:
    said = train_above_val(r.history)
    return [said] if said else []


def numbers(r: Result) -> dict:
    last = r.history[-1]
    return dict(val_ppl=last.val_ppl, train_ppl=last.train_ppl, epochs=last.epoch)


def runs_rows(done: list) -> list[dict]:
    """The session's finished runs as table rows: settings, final numbers, time and speed."""
    rows = []
    for j in done:
        last = j.result.final
        rows.append({_("run"): j.name, _("status"): status_word(j.status), _("cell"): j.config.cell,
                     _("tokens"): j.config.tokenizer, _("hidden"): j.config.hidden_size,
                     _("optimizer"): j.config.optimizer, "lr": j.config.lr, _("epochs"): last.epoch if last else None,
                     _("val ppl"): round(last.val_ppl if last else math.nan, 3),
                     _("bits/byte"): round(last.val_bpb if last else math.nan, 3),
                     _("seconds"): round(j.result.elapsed, 1), _("tokens/s"): round(j.result.tokens_per_s),
                     _("device"): j.result.device})
    return rows


def span(window: list[int]) -> str:
    return f"{window[0]}-{window[-1]}"


def partition_rows() -> list[dict]:
    """The book's two ways of cutting a text into minibatches (9.3), on token positions: a row per minibatch."""
    demo = data_module.partition_demo()
    batch, random, sequential = _("minibatch"), _("random windows (split 'book')"), \
        _("sequential partitioning (split 'whole')")
    return [{batch: i + 1, random: ", ".join(span(w) for w in r), sequential: ", ".join(span(w) for w in q)}
            for i, (r, q) in enumerate(zip(demo["random"], demo["sequential"]))]


def partition_words() -> str:
    by = {split: listing(_(p.label) for p in PRESETS.values() if p.config.split == split) for split in ("book", "whole")}
    return _("Random windows ({book}): any window, in any order, so each must start from a zero state. Sequential "
             "({whole}): the text is split into as many streams as the batch holds, and each row of a minibatch "
             "continues the same row of the one before, so the state is carried across (its gradient stopped at the "
             "boundary: truncation 'detach').").format(book=by["book"], whole=by["whole"])


INTRO = N_(
    "Pick a preset or set every knob, press **Train**, and watch the model learn: perplexity falls, and the "
    "samples turn from noise into words. Training runs on the server in the background, so you can visit "
    "other labs and come back. Perplexity is exp(mean cross-entropy): a model guessing uniformly among V "
    "tokens scores V. **Bits per byte** divides the cross-entropy in bits by the bytes per token, so a "
    "character model and a BPE model can be compared.")
FORMULA = ""
NOTATION = ""
NOTES = N_("""
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


def notes(r: Result) -> str:
    return _(NOTES)


SOURCE = (loop.train, loop.Run.epoch, loop.Run.train_step)
