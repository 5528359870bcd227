"""A notebook from a lab's settings: its first cells (the settings, the imports, the book's section), the recipe's
cells (core.notebooks.recipes), the lab's exercises as "predict, then run" cells, and the notebook as nbformat
writes it (nbformat is imported only to write). A notebook imports core (the rnnlab package), numpy, torch,
plotly and tokenizers, nothing of the app."""
from __future__ import annotations

from dataclasses import asdict

from core.exercises.bank import for_lab
from core.labs import PAGES, SETTINGS_OF, citation, controls_of

MD, CODE = "markdown", "code"
SETUP = """\
# Needs RNN Lab's core with plotly: in a clone of RNN Lab, `pip install -e .` (as its README says), or the wheel
# that `python -m build` makes there (`pip install dist/rnnlab-*.whl`). Jupyter itself: `pip install jupyterlab`.
# The Time Machine is found as the app finds it: RNNLAB_CORPUS, the cache, or a download (sha1 checked).
import json
import numpy as np
import plotly.graph_objects as go
from IPython.display import Markdown, display


def say(*claims):
    \"\"\"Show the page's readings: each a claim built by core from the numbers it states, as plain text (a
    word or a prefix typed in the settings is only text: never a link, an image or HTML).\"\"\"
    import html, re
    text = html.escape(" ".join(str(c) for c in claims if c))
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
    lines = [f"# The {PAGES[page].title} page's settings, as its address had them. Change one and run all again."]
    lines.append("S = {")
    lines += [f"    {name!r}: {value!r},   # {controls_of(page)[name].label}" for name, value in settings.items()]
    lines.append("}")
    return "\n".join(lines)


def exercise_cells(page: str, act: int | None = None) -> list[tuple[str, str]]:
    """Each exercise of the page (on the chapter, of the act): the question, a cell for the learner's prediction,
    and a cell that runs the real computation, explains it and asserts the prediction against its answer."""
    exs = for_lab(page, act)
    if not exs:
        return []
    cells = [(MD, "## Exercises: predict, then run\n\nWrite your answer in the first cell, then run the second: it "
                  "runs the same computation the lab grades with and checks your answer against it.")]
    for ex in exs:
        options = "".join(f"\n- `{o}`" for o in ex.options)
        cells.append((MD, f"**{ex.question}**{options}" + (f"\n\n*Hint:* {ex.hint}" if ex.hint else "")))
        cells.append((CODE, f"my_answer = ...   # your prediction for {ex.key}: "
                            + ("one of the options above, as a string" if ex.options else "a number")))
        cells.append((CODE, "from core.exercises import cache, types\nfrom core.exercises.bank import BANK\n\n"
                            f"ex = BANK[{ex.key!r}]\nsolution = cache.solve(ex)   # the trained ones: their shipped "
                            "answers\nprint(solution.explanation)\nif my_answer is not ...:\n"
                            "    assert types.grade(ex, my_answer, solution).correct, "
                            "f\"not quite: the computation says {solution.answer!r}\"\n"
                            "    print('Right.')"))
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
    return [(MD, f"# RNN Lab: {title}\n\nFollows {citation(section)[0]}. Every number below is computed by "
                 "RNN Lab's own core, the code the lab's page runs; the readings are built by the same functions "
                 "from the numbers they state."),
            (CODE, SETUP), (CODE, settings_text)]
