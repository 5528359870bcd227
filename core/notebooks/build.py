"""A lab, or an act of the chapter, as a Jupyter notebook: its first cells (the settings, the imports, the book's
section), the cells that call the lab's module in core.labs with the settings cell's S (so its figures and readings
are the page's own; the last code cell prints the page's numbers as JSON, which the tests compare with the page's),
the lab's exercises as "predict, then run" cells, and the notebook as nbformat writes it (nbformat is imported only
to write). A notebook imports core (the rnnlab package), numpy, torch, plotly and tokenizers, nothing of the app."""
from __future__ import annotations

import inspect
from dataclasses import asdict
from types import ModuleType

from core.exercises.bank import for_lab
from core.i18n import DEFAULT, LANGS, _, current, speaking
from core.labs import PAGES, SETTINGS_OF, TRANSLATED, citation, controls_of, forecasting

MD, CODE = "markdown", "code"
SETUP = """\
# Needs RNN Lab's core with plotly: in a clone of RNN Lab, `pip install -e .` (as its README says), or the wheel
# that `python -m build` makes there (`pip install dist/rnnlab-*.whl`). Jupyter itself: `pip install jupyterlab`.
# The Time Machine is found as the app finds it: RNNLAB_CORPUS, the cache, or a download (sha1 checked).
import json
import numpy as np
import plotly.graph_objects as go
from IPython.display import Markdown, display
from core.i18n import sentences, set_language


def say(*claims):
    \"\"\"Show the page's readings: each a claim built by core from the numbers it states, as plain text (a
    word or a prefix typed in the settings is only text: never a link, an image or HTML).\"\"\"
    import html, re
    text = html.escape(sentences(*claims))
    display(Markdown(re.sub(r"([\\\\`*_{}\\[\\]()#+!|~$<>:=^.@-])", r"\\\\\\1", text)))"""


def settings_of(page: str, values: dict | None = None) -> dict:
    """The page's settings: its declared defaults, with `values` (by setting name) checked and put over them."""
    controls = controls_of(page)
    out = asdict(SETTINGS_OF[page]())
    for name, value in (values or {}).items():
        if name not in controls:
            raise ValueError(f"The {page} page has no setting {name!r}; its settings: {', '.join(controls)}.")
        out[name] = controls[name].check(value)
    return {k: v for k, v in out.items() if k in controls}


def settings_cell(page: str, settings: dict) -> str:
    lines = [_("# The {page} page's settings, as its address had them. Change one and run all again.").format(
        page=_(PAGES[page].title))]
    lines.append("S = {")
    lines += [f"    {name!r}: {value!r},   # {_(controls_of(page)[name].label)}" for name, value in settings.items()]
    lines.append("}")
    return "\n".join(lines)


def exercise_cells(page: str, act: int | None = None) -> list[tuple[str, str]]:
    """Each exercise of the page (on the chapter, of the act): the question, a cell for the learner's prediction,
    and a cell that runs the real computation, explains it and asserts the prediction against its answer."""
    exs = for_lab(page, act)
    if not exs:
        return []
    cells = [(MD, _("## Exercises: predict, then run\n\nWrite your answer in the first cell, then run the second: "
                    "it runs the same computation the lab grades with and checks your answer against it."))]
    nope, right = _("not quite: the computation says"), _("Right.")
    for ex in exs:   # an option is typed as it is written in code; its words in the notebook's language beside it
        options = "".join(f"\n- `{o}`" + ("" if _(o) == o else f" ({_(o)})") for o in ex.options)
        cells.append((MD, f"**{_(ex.question)}**{options}" + (_("\n\n*Hint:* {hint}").format(hint=_(ex.hint))
                                                             if ex.hint else "")))
        cells.append((CODE, "my_answer = ...   # " + (_("your prediction for {key}: one of the options above, as a "
                                                        "string") if ex.options else
                                                      _("your prediction for {key}: a number")).format(key=ex.key)))
        cells.append((CODE, "from core.exercises import cache, types\nfrom core.exercises.bank import BANK\n\n"
                            f"ex = BANK[{ex.key!r}]\nsolution = cache.solve(ex)   # the trained ones: their shipped "
                            "answers\nprint(solution.explanation)\nif my_answer is not ...:\n"
                            "    assert types.grade(ex, my_answer, solution).correct, "
                            f"f\"{nope} {{solution.answer!r}}\"\n"
                            f"    print({right!r})"))
    return cells


def numbers_cell(names: list[str]) -> str:
    """The last cell: the numbers the page shows, as JSON (the tests compare them with the page's)."""
    keys = ", ".join(names)
    return f"numbers = dict({keys})\nprint(json.dumps(numbers, default=float))"


def notebook(cells: list[tuple[str, str]]):
    """The cells as an nbformat v4 notebook (nbformat is needed only here)."""
    try:
        import nbformat
    except ImportError:
        raise ValueError("Writing a notebook needs nbformat: pip install nbformat (or, in a clone, pip install -e '.[notebook]')."
                         ) from None
    nb = nbformat.v4.new_notebook()
    nb.nbformat_minor = 4          # cells without ids: the same settings always write the same file
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(text) if kind == MD else nbformat.v4.new_code_cell(text)
                for kind, text in cells]
    for cell in nb.cells:
        cell.pop("id", None)
    nbformat.validate(nb)
    return nb


def dumps(nb) -> str:
    import nbformat
    return nbformat.writes(nb)


def header(title: str, section: str, settings_text: str) -> list[tuple[str, str]]:
    return [(MD, _("# RNN Lab: {title}\n\nFollows {citation}. Every number below is computed by RNN Lab's own core, "
                   "the code the lab's page runs; the readings are built by the same functions from the numbers they "
                   "state.").format(title=title, citation=citation(section)[0])),
            (CODE, SETUP + f"\n\nset_language({current()!r})   # the language of the readings below"),
            (CODE, settings_text)]

def module_cells(lab: ModuleType) -> list:
    """A lab built as one module (core/labs/<key>.py): its text, its computation, metrics, charts and readings run
    by the module's own functions (the page calls the same ones), the code it shows, and its numbers as JSON."""
    key = lab.KEY
    settings = "lab.settings_from(S)" if hasattr(lab, "settings_from") else "lab.Settings(**S)"
    out = [(MD, _(lab.INTRO) + (f"\n\n$${lab.FORMULA}$$" if lab.FORMULA else "")
            + (f"\n\n*{_(lab.NOTATION)}*" if lab.NOTATION else "")),
           (CODE, f"""from core.labs import {key} as lab

r = lab.compute({settings})
print("; ".join(str(m) for m in lab.metrics(r)))
for chart in lab.charts(r):
    chart.figure.show()
    say(chart.summary)"""),
           (CODE, "# What the page says, each sentence built from the numbers it states\nsay(*lab.readings(r))")]
    code = "\n\n".join(inspect.getsource(f) for f in lab.SOURCE)
    out.append((MD, _("### The code behind these figures\n\nRNN Lab's own functions, as the page shows them:")
                + f"\n\n```python\n{code}```"))
    out.append((CODE, numbers_cell(["**lab.numbers(r)"])))
    return out


ACTS = {
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


def act_one_cells() -> list:
    """Act 1: the Forecasting lab at its defaults, with the act's own window τ (its texts in the language in force,
    so built when asked for)."""
    return [(CODE, '# Act 1 is the Forecasting lab at its defaults, with the act\'s own window τ\n'
                   'S = dict(T=1000, n_train=600, tau=S["tau"], k=16, sigma=0.2, seed=0)')] + module_cells(forecasting)


def cells_of(page: str, act: int | None) -> list:
    """The recipe of a lab (its module's), or of one act of the chapter."""
    if page == "chapter":
        return act_one_cells() if act == 1 else ACTS[act]
    return module_cells(PAGES[page].module)

def pages_with_notebooks() -> list[str]:
    """Every lab (read from the registry each time) and the chapter."""
    return [p.key for p in PAGES.values() if p.lab] + ["chapter"]


def check_lang(page: str, lang: str) -> str:
    """The notebook's language: English for every page; another for a page whose strings are all translated."""
    if lang not in LANGS:
        raise ValueError(f"No language {lang!r}: choose one of {', '.join(LANGS)}.")
    if lang != DEFAULT and page not in TRANSLATED:
        raise ValueError(f"The {page} notebook is not translated into {LANGS[lang]} yet: so far "
                         f"{', '.join(TRANSLATED)}. Leave out --lang for the English one.")
    return lang


def build(page: str, values: dict | None = None, lang: str = DEFAULT):
    """The notebook of a lab, or of the chapter's act values['act'], at these settings (by setting name), in the
    language `lang` (its texts, and the readings it prints when it runs)."""
    if page not in pages_with_notebooks():
        raise ValueError(f"No notebook for {page!r}: choose one of {', '.join(pages_with_notebooks())}.")
    with speaking(check_lang(page, lang)):
        settings = settings_of(page, values)
        act = settings.get("act") if page == "chapter" else None
        title = _("The chapter, act {act}").format(act=act) if act else _(PAGES[page].title)
        section = PAGES["chapter"].module.SECTIONS[act] if act else section_of(page)
        nb_cells = header(title, section, settings_cell(page, settings))
        nb_cells += cells_of(page, act) + exercise_cells(page, act)
        return notebook(nb_cells)


def file_name(page: str, values: dict | None = None, lang: str = DEFAULT) -> str:
    settings = settings_of(page, values)
    return (f"rnnlab-{page}" + (f"-act{settings['act']}" if page == "chapter" else "")
            + ("" if lang == DEFAULT else f"-{lang}") + ".ipynb")
