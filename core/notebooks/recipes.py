"""What each lab and act of RNN Lab computes, draws and says, as notebook cells: code that calls core with the
settings cell's S, plotly figures like the page's, and the page's readings from the same core functions. The last
code cell prints the page's numbers as JSON (the tests compare them with the page's)."""
from __future__ import annotations

import inspect
from types import ModuleType

from core.labs import PAGES, forecasting
from core.notebooks.cells import CODE, MD, numbers_cell

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

LABS = {"training": TRAINING}


def module_cells(lab: ModuleType) -> list:
    """A lab built as one module (core/labs/<key>.py): its text, its computation, metrics, charts and readings run
    by the module's own functions (the page calls the same ones), the code it shows, and its numbers as JSON."""
    key = lab.KEY
    out = [(MD, lab.INTRO + (f"\n\n$${lab.FORMULA}$$" if getattr(lab, "FORMULA", "") else "")
            + (f"\n\n*{lab.NOTATION}*" if getattr(lab, "NOTATION", "") else "")),
           (CODE, f"""from core.labs import {key} as lab

r = lab.compute(lab.Settings(**S))
print("; ".join(str(m) for m in lab.metrics(r)))
for chart in lab.charts(r):
    chart.figure.show()
    say(chart.summary)"""),
           (CODE, "# What the page says, each sentence built from the numbers it states\nsay(*lab.readings(r))")]
    code = "\n\n".join(inspect.getsource(f) for f in lab.SOURCE)
    out.append((MD, "### The code behind these figures\n\nRNN Lab's own functions, as the page shows them:\n\n"
                    f"```python\n{code}```"))
    out.append((CODE, numbers_cell(["**lab.numbers(r)"])))
    return out

ACTS = {
    1: [(CODE, '# Act 1 is the Forecasting lab at its defaults, with the act\'s own window τ\n'
               'S = dict(T=1000, n_train=600, tau=S["tau"], k=16, sigma=0.2, seed=0)')] + module_cells(forecasting),
    2: [(CODE, """from core.labs import tokens
from core.text import corpus, ngrams

text = corpus.clean(corpus.load_corpus(), "letters")
vocab = tokens.vocab_of(text, "char", 0)
print(f"{len(vocab)} tokens; the book is {len(text):,} of them. The first 16 as ids: {vocab.encode(text[:16])}")
cov = ngrams.ngram_coverage(vocab.encode(text), 5)
chart = tokens.coverage_chart(cov)
chart.figure.show()
say(chart.summary, tokens.coverage_claim(cov))"""), (CODE, numbers_cell(["distinct_5grams=cov[-1].distinct"]))],
    3: [(CODE, """from core.labs import chapter

chart = chapter.window_chart(S["h"])
chart.figure.show()
say(chart.summary)
counts = chapter.window_counts(S["h"])"""), (CODE, numbers_cell(["**counts"]))],
    4: [(CODE, """from core.labs import chapter
from core.lesson import readings, store
from core.text.corpus import load_corpus

baked = store.load_baked()    # the stored run: python -m core passage rebuilds it
h = baked.history
chart = chapter.passage_chart(h, baked.vocab_size, None, "The stored run (seed 0)")
chart.figure.show()
say(chart.summary, readings.what_repeats(h))"""),
        (CODE, """reach = chapter.reaches(baked.models, load_corpus())
chart = chapter.reach_chart(reach)
chart.figure.show()
say(chart.summary, chapter.reach_reading(reach))"""),
        (CODE, numbers_cell(["val_ppl=h[-1].val_ppl", "train_ppl=h[-1].train_ppl"]))],
    5: [(CODE, """from core.labs import chapter

a = chapter.bptt(S["scale"])
chart = chapter.bptt_chart(a)
chart.figure.show()
say(chart.summary)"""), (CODE, numbers_cell(["rho=a.rho", "growth=a.growth"]))],
}


SECTIONS = {"training": "9.5 and 9.6 (from scratch, and concise)"}


def section_of(page: str) -> str:
    """The book's section a lab follows: its module's own, or the table above."""
    module = PAGES[page].module
    return module.SECTION if module else SECTIONS[page]


def cells_of(page: str, act: int | None) -> list:
    """The recipe of a lab, or of one act of the chapter."""
    if page == "chapter":
        return ACTS[act]
    module = PAGES[page].module
    return module_cells(module) if module else LABS[page]
