"""The one registry of RNN Lab's pages: for each, its title, file, icon, blurb, controls and exercises (PAGES),
and the URL keys that are not a page's controls (Url). app.py builds the menu from it, ui and the pages read
their titles and controls from it, and the tests and benchmarks take their lists of pages and URL keys from it.

Every page's controls are declared once: name, type, default, range or choices, label, help, widget and URL key
(core.settings). The page draws its controls from these declarations (ui.url_state.draw), the URL reads and
writes them, exercises and assignment links name them, the chapter's claim links name them, and the tests and
benchmarks take their URL names from them (url_keys, query), so renaming a control breaks a test, not a link.

A field's default and range are the control's own; a page may narrow a range that depends on another control
(n_train below T) or give the choices it only knows at run time (the session's trained models).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from core.nn.cell_demo import MAX_WORD
from core.text.corpus import CLEANINGS
from core.nn.gradflow import KINDS
from core.settings import Setting, as_text, declared, setting

SCALES = (0.25, 0.35, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0, 1.05, 1.1, 1.2, 1.3, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0)
BPE_SIZES = (256, 512, 1024, 2048, 4096)
ALPHAS = (0.001, 0.01, 0.1, 0.5, 1.0)
CHAPTER_ACTS = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class Forecasting:
    T: int = setting(1000, "Series length T", lo=100, hi=5000, step=50)
    n_train: int = setting(600, "Training points n_train", "The model is fitted on the first n_train points only.",
                           lo=50, hi=4999, step=10)
    tau: int = setting(4, "Window τ (tau)", "How many past values the model looks at.", lo=1, hi=64)
    k: int = setting(16, "Horizon k", "Steps ahead: the model feeds its own guesses back k-1 times.", lo=1, hi=64)
    sigma: float = setting(0.2, "Noise σ (sigma)", lo=0.0, hi=1.0, step=0.01)
    seed: int = setting(0, "Seed", lo=0, hi=10_000, widget="input")


@dataclass(frozen=True)
class Tokens:
    source: Literal["timemachine", "upload"] = setting(
        "timemachine", "Text", widget="radio", words={"timemachine": "The Time Machine", "upload": "My upload"})
    cleaning: Literal[CLEANINGS] = setting(
        "letters", "Cleaning", widget="radio",
        words={"letters": "letters and spaces (the book)", "punctuation": "keep punctuation"})
    tokenizer: Literal["char", "word", "bpe"] = setting("char", "Tokenizer", widget="radio", url="tok",
                                                        words={"char": "characters", "word": "words", "bpe": "BPE"})
    bpe_size: int = setting(1024, "BPE vocabulary size", widget="select_slider", choices=BPE_SIZES, url="bpe")
    start: int = setting(2000, "Passage start (character in the raw text)", lo=0, hi=10_000_000)
    top_n: int = setting(1, "Most frequent", widget="radio", choices=(1, 2, 3), url="topn",
                         words={1: "1-grams", 2: "2-grams", 3: "3-grams"})
    bpe_text: str = setting("the time traveller, unfathomable", "Text to cut", hi=200, url="bpetext")
    alpha: float = setting(0.1, "Smoothing α", "Added to every n-gram count; smaller trusts the counts more.",
                           widget="select_slider", choices=ALPHAS)
    V: int = setting(10_000, "Vocabulary |V|", lo=2, hi=1_000_000, widget="input")
    k: int = setting(20, "Context length k", lo=1, hi=100, widget="input")
    h: int = setting(256, "Hidden units h", lo=1, hi=100_000, widget="input")
    d: int = setting(256, "Embedding size d (0 = one-hot)", lo=0, hi=100_000, widget="input")


@dataclass(frozen=True)
class RnnCell:
    word: str = setting("machine", "Word to read (the network predicts each next letter)", hi=MAX_WORD)
    h: int = setting(4, "Hidden units", lo=1, hi=8)
    seed: int = setting(0, "Weight seed", lo=0, hi=10_000, widget="input")
    t: int = setting(1, "Time step t", "Which step of reading the word the figures show.", lo=1, hi=MAX_WORD)
    letter: str = setting("", "Letter fed in", "One of the letters the word feeds in: its one-hot row times W_xh "
                          "against the row looked up.", widget="select")      # choices: the word's letters
    V: int = setting(28, "Vocabulary |V|", lo=2, hi=100_000, widget="input")
    h2: int = setting(256, "Hidden units h", lo=1, hi=10_000, widget="input")


HIDDEN_SPAN = 32                                # characters in one view of Sampling's hidden-state heatmap
HIDDEN_WINDOWS = tuple(range(1, 161, HIDDEN_SPAN))   # its first characters: 1, 33, 65, 97, 129 (of the first 160)


@dataclass(frozen=True)
class Sampling:
    model: str = setting("pretrained", "Model", widget="select")    # choices: the pretrained model and the session's
    prefix: str = setting("the time traveller ", "Prefix", "Spaces count: after a space the model must guess a "
                          "new word.", hi=200)
    temperature: float = setting(0.8, "Temperature T", lo=0.0, hi=2.0, step=0.05, url="temp")
    length: int = setting(300, "Characters to generate", lo=20, hi=1000, step=10, url="len")
    top_k: int = setting(0, "Top-k (0 = off)", "Keep only the k likeliest tokens.", lo=0, hi=50, url="topk")
    top_p: float = setting(1.0, "Top-p (1 = off)", lo=0.05, hi=1.0, step=0.05, url="topp")
    seed: int = setting(0, "Seed", lo=0, hi=1_000_000, widget="input")
    hidden_from: int = setting(1, "Characters shown", "Which 32 of the first 160 characters the hidden-state "
                               "heatmap shows, each one written under its column.", widget="segmented",
                               choices=HIDDEN_WINDOWS, url="hfrom")
    score_a: str = setting("the machine stood in the laboratory", "Your text", hi=200)
    score_b: str = setting("laboratory the in stood machine the", "Compare with", hi=200)


@dataclass(frozen=True)
class GradientFlow:
    scale: float = setting(1.0, "Weight scale (× W_hh)", "Multiplies the random matrix; ρ scales with it.",
                           widget="select_slider", choices=SCALES)
    n: int = setting(32, "Hidden size n", lo=2, hi=256)
    T: int = setting(24, "Steps back T", lo=1, hi=200)
    kind: Literal[KINDS] = setting("gaussian", "Matrix kind", widget="radio")
    use_tanh: bool = setting(True, "Through tanh", "Off: the purely linear recurrence.", url="tanh")
    input_scale: float = setting(1.0, "Input scale", "Larger inputs push tanh into saturation.", lo=0.0, hi=5.0,
                                 step=0.1, url="input")
    theta: float = setting(1.0, "Clipping threshold θ", lo=0.1, hi=10.0, step=0.1)
    seed: int = setting(0, "Seed", lo=0, hi=10_000, widget="input")


@dataclass(frozen=True)
class Chapter:
    act: int = setting(1, "Act", widget="radio", choices=CHAPTER_ACTS)
    tau: int = setting(4, "Window τ: how many past values the model sees", lo=1, hi=32)
    h: int = setting(32, "Hidden units h", lo=4, hi=512, step=4)
    seed: int = setting(0, "Seed", "Another seed: other starting weights and another order of the windows.",
                        lo=0, hi=10_000, widget="input")
    scale: float = setting(1.0, "Weight scale (× a random W_hh)", widget="select_slider", choices=SCALES)


@dataclass(frozen=True)
class Training:
    preset: str = setting("book", "Preset", widget="segmented")   # choices: core.runs.config.PRESETS


@dataclass(frozen=True)
class Exercises:
    assign: str = setting("", "Exercise", widget="select")         # choices: the exercise bank


@dataclass(frozen=True)
class Classroom:
    shown: str = setting("", "Exercise", "The exercise whose answers the chart shows.", widget="select",
                         url="show")                               # choices: the exercise bank


class Url(StrEnum):
    """The URL keys that are not a page's controls (a StrEnum: each is its own text in a URL)."""

    EXERCISE = "ex"            # the exercise an assignment link puts on top of a lab
    HIDE = "hide"              # the controls (their URL keys, comma-separated) a teacher's link fixes
    RUN = "run"                # a training run's address: a reload or a new tab finds it again
    LEARNER = "me"             # a learner's code: their answers are kept under it
    TEACHER = "teacher"        # a class's teacher key (the teacher's view)
    JOIN = "join"              # a class's join code (the teacher's own address too, once their key is kept)
    PRESENT = "present"        # the class's projector view (1): one exercise's answers, large, no names
    SWEEP = "sweep"            # a sweep a teacher hands out: a control's URL key and its values (lr:0.1,0.3,1)


@dataclass(frozen=True)
class Page:
    """A page of the app: pages/<key>.py, its menu entry and its controls' declaration."""

    key: str
    title: str
    icon: str
    settings: type             # the dataclass that declares its controls (above)
    blurb: str = ""
    lab: bool = True           # one of the labs (the menu's "Labs"); the chapter, exercises and class are not
    charts: bool = True        # draws charts at its defaults (the tests check each one's summary and data)
    charts_tab: str = ""       # the tab its charts are on, when not the first
    corpus_charts: bool = False   # its charts are drawn from the corpus (skipped without one)

    @property
    def path(self) -> str:
        return f"pages/{self.key}.py"

    @property
    def exercises(self) -> list[str]:
        """The keys of the exercises on this page (core.exercises.bank), in the bank's order."""
        from core.exercises.bank import for_lab
        return [ex.key for ex in for_lab(self.key)]


# The pages in menu order: the chapter (the app's home), the exercises and the class, then the labs.
PAGES: dict[str, Page] = {p.key: p for p in (
    Page("chapter", "The chapter", ":material/menu_book:", Chapter, lab=False),
    Page("exercises", "Exercises", ":material/task_alt:", Exercises, lab=False, charts=False),
    Page("classroom", "Class", ":material/groups:", Classroom, lab=False, charts=False),
    Page("forecasting", "Forecasting", ":material/show_chart:", Forecasting,
         "Fit an autoregressive model to a noisy sine and see why k-step forecasts fall apart."),
    Page("tokens", "Text to tokens", ":material/text_fields:", Tokens,
         "Clean text, cut it into characters, words or BPE subwords, see Zipf's law, and count n-grams until the table "
         "runs out of data.",
         charts_tab="Counting n-grams", corpus_charts=True),
    Page("rnn_cell", "RNN cell", ":material/memory:", RnnCell,
         "Step the recurrence through time, see the same weights reused, and check the gradients yourself."),
    Page("sampling", "Sampling", ":material/edit_note:", Sampling,
         "Talk to a pretrained character RNN: prefix, temperature, top-k/top-p, and a look at its hidden state."),
    Page("gradient_flow", "Gradient flow", ":material/waves:", GradientFlow,
         "Turn the spectral radius of W_hh and watch the backpropagated gradient vanish or explode."),
    Page("training", "Training", ":material/model_training:", Training,
         "Train RNN, GRU and LSTM language models live on CPU or GPU; watch, stop, compare and export runs.",
         charts=False),
)}
LABS: list[Page] = [p for p in PAGES.values() if p.lab]
SETTINGS_OF = {key: p.settings for key, p in PAGES.items()}


@functools.cache
def controls_of(page: str) -> dict[str, Setting]:
    """A page's declared controls by name (read once; the dict is shared, so never change it)."""
    if page not in SETTINGS_OF:
        raise ValueError(f"There is no page {page!r}; pages: {', '.join(SETTINGS_OF)}.")
    controls = declared(SETTINGS_OF[page])
    if page == "training":   # its form: every setting of TrainConfig that the form shows, declared there
        from core.runs.config import FORM_SETTINGS, SETTINGS
        controls.update({name: SETTINGS[name] for name in FORM_SETTINGS})
    return controls


def url_keys(page: str) -> list[str]:
    """The URL names a page reads for its controls (the others are Url's)."""
    return [s.key for s in controls_of(page).values()]


def by_name(page: str, name: str) -> Setting:
    controls = controls_of(page)
    if name not in controls:
        raise ValueError(f"The {page} page has no control {name!r}; it has {', '.join(controls)}.")
    return controls[name]


def url_query(page: str, values: dict) -> dict[str, str]:
    """Control values by name as a page's URL query (keys and text from the declarations, checked)."""
    out = {}
    for name, value in values.items():
        s = by_name(page, name)
        out[s.key] = as_text(s.check(value))
    return out


def query(page: str, controls: dict | None = None, *, exercise: str | None = None, hide=(), **others) -> dict[str, str]:
    """A page's URL query: its controls by their declared names (checked, url_query), an exercise on top, the
    controls to hide (by name or URL key: the URL holds their keys), and any other Url key by its member's name in
    lower case (run=, learner=, teacher=, join=)."""
    out = url_query(page, controls or {})
    if exercise is not None:
        out[Url.EXERCISE.value] = str(exercise)
    if hide:
        keys = {s.key for s in controls_of(page).values()}
        out[Url.HIDE.value] = ",".join(n if n in keys else by_name(page, n).key for n in hide)
    for name, value in others.items():
        try:
            out[Url[name.upper()].value] = str(value)
        except KeyError:
            raise ValueError(f"There is no URL key {name!r}; they are: {', '.join(u.name.lower() for u in Url)}.") \
                from None
    return out
