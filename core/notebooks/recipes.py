"""What each lab and act of RNN Lab computes, draws and says, as notebook cells: code that calls the lab's module in
core.labs with the settings cell's S, so its figures and readings are the page's own. The last code cell prints the
page's numbers as JSON (the tests compare them with the page's)."""
from __future__ import annotations

import inspect
from types import ModuleType

from core.labs import PAGES, forecasting
from core.notebooks.cells import CODE, MD, numbers_cell


def module_cells(lab: ModuleType) -> list:
    """A lab built as one module (core/labs/<key>.py): its text, its computation, metrics, charts and readings run
    by the module's own functions (the page calls the same ones), the code it shows, and its numbers as JSON."""
    key = lab.KEY
    settings = "lab.settings_from(S)" if hasattr(lab, "settings_from") else "lab.Settings(**S)"
    out = [(MD, lab.INTRO + (f"\n\n$${lab.FORMULA}$$" if lab.FORMULA else "")
            + (f"\n\n*{lab.NOTATION}*" if lab.NOTATION else "")),
           (CODE, f"""from core.labs import {key} as lab

r = lab.compute({settings})
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


def section_of(page: str) -> str:
    """The book's section a lab follows: its module's own."""
    return PAGES[page].module.SECTION


def cells_of(page: str, act: int | None) -> list:
    """The recipe of a lab (its module's), or of one act of the chapter."""
    return ACTS[act] if page == "chapter" else module_cells(PAGES[page].module)
