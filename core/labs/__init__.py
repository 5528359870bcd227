"""The one registry of RNN Lab's pages: for each, its title, file, icon, blurb, controls and exercises (PAGES),
and the URL keys that are not a page's controls (Url). app.py builds the menu from it, ui and the pages read
their titles and controls from it, and the tests and benchmarks take their lists of pages and URL keys from it.

Every page's controls are declared once: name, type, default, range or choices, label, help, widget and URL key
(core.settings). The page draws its controls from these declarations (ui.url_state.draw), the URL reads and
writes them, exercises and assignment links name them, the chapter's claim links name them, and the tests and
benchmarks take their URL names from them (url_keys, query), so renaming a control breaks a test, not a link.

A field's default and range are the control's own; a page may narrow a range that depends on another control
(n_train below T) or give the choices it only knows at run time (the session's trained models).

A lab built as one module (core/labs/<key>.py, listed here with Page.of) holds the whole lab once, and its page,
its notebook and the tests are built from it. The module names:
- KEY, TITLE, ICON, BLURB: its menu entry; SECTION: the book's section it follows (v1.0);
- Settings: its controls' declarations (a frozen dataclass of core.settings.setting fields);
- compute(settings) -> a result: all the lab's computation, in core;
- metrics(result) -> [core.figures.Metric], charts(result) -> [core.figures.Chart] (plotly figures with their
  summaries), readings(result) -> [core.claims.Claim]: every sentence that states a number, a trend, a comparison
  or a regime (the claims sweep checks each over every control's range);
- numbers(result) -> dict: what its notebook prints (the tests compare it with the page's);
- INTRO, FORMULA, NOTATION and notes(result): its texts; SOURCE: the functions whose code the page and the notebook
  show.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import StrEnum
from types import ModuleType

from core.labs import chapter, classroom, forecasting, gates, gradient_flow, rnn_cell, sampling, tokens, training
from core.i18n import N_, is_chinese
from core.settings import Setting, as_text, declared, setting


BOOK = "Dive into Deep Learning (Zhang, Lipton, Li and Smola), version 1.0"
CHAPTERS = {9: ("Recurrent Neural Networks", "https://d2l.ai/chapter_recurrent-neural-networks/index.html"),
            10: ("Modern Recurrent Neural Networks", "https://d2l.ai/chapter_recurrent-modern/index.html")}


# The Chinese edition (动手学深度学习, 2.0.0, zh.d2l.ai) numbers the chapter 8 and its GRU and LSTM sections 9.1 and
# 9.2 (v1.0 in English: 9, and 10.2 and 10.1): each English section a page follows, as the Chinese edition titles it.
BOOK_ZH = "《动手学深度学习》第二版（阿斯顿·张、扎卡里·C. 立顿、李沐、亚历山大·J. 斯莫拉）"
CHAPTERS_ZH = {8: ("循环神经网络", "https://zh.d2l.ai/chapter_recurrent-neural-networks/index.html"),
               9: ("现代循环神经网络", "https://zh.d2l.ai/chapter_recurrent-modern/index.html")}
SECTIONS_ZH = {"9.1": "8.1 序列模型", "9.2": "8.2 文本预处理", "9.3": "8.3 语言模型和数据集", "9.4": "8.4 循环神经网络",
               "9.5": "8.5 循环神经网络的从零开始实现", "9.6": "8.6 循环神经网络的简洁实现", "9.7": "8.7 通过时间反向传播",
               "10.1": "9.2 长短期记忆网络（LSTM）", "10.2": "9.1 门控循环单元（GRU）"}
# The pages whose every string is in the catalog (issue 66); the others show English, and say so in the language asked
TRANSLATED = ("chapter", "forecasting", "tokens", "rnn_cell", "sampling", "gradient_flow", "gates", "training",
              "classroom", "exercises")


def citation(section: str) -> tuple[str, str]:
    """The book's words for a section a page follows ("10.1 Long Short-Term Memory (LSTM)"): the edition, its
    chapter and the section, and the chapter's address; in Chinese (core.i18n), the Chinese edition's."""
    chapter = int(section.split(".")[0])
    if is_chinese():
        numbers = [part.split(" ")[0] for part in section.split(" and ")]
        zh = sorted((SECTIONS_ZH[n].split(" ", 1) for n in numbers), key=lambda t: [int(x) for x in t[0].split(".")])
        name, url = CHAPTERS_ZH[int(zh[0][0].split(".")[0])]
        parts = "和".join(f"第 {number} 节“{title}”" for number, title in zh)
        return f"{BOOK_ZH}第 {zh[0][0].split('.')[0]} 章“{name}”的{parts}", url
    name, url = CHAPTERS[chapter]
    return f"{BOOK}, chapter {chapter}, {name}, section {section}", url


def section_number(section: str) -> str:
    """A section's number as the edition in force numbers it: "9.3" in English (v1.0), "8.3" in Chinese."""
    return SECTIONS_ZH[section].split(" ")[0] if is_chinese() else section


@dataclass(frozen=True)
class Exercises:
    assign: str = setting("", N_("Exercise"), widget="select")     # choices: the exercise bank


class Url(StrEnum):
    """The URL keys that are not a page's controls (a StrEnum: each is its own text in a URL)."""

    EXERCISE = "ex"            # the exercise an assignment link puts on top of a lab
    HIDE = "hide"              # the controls (their URL keys, comma-separated) a teacher's link fixes
    RUN = "run"                # a training run's address: a reload or a new tab finds it again
    LEARNER = "me"             # an old address's learner code: dropped on arrival, never read (ui.learner)
    TEACHER = "teacher"        # a class's teacher key (the teacher's view)
    JOIN = "join"              # a class's join code (the teacher's own address too, once their key is kept)
    PRESENT = "present"        # the class's projector view (1): one exercise's answers, large, no names
    FOLLOW = "follow"          # the class view follows the latest answered exercise (1), not one a teacher chose
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
    module: ModuleType | None = None   # the lab's one module (core/labs/<key>.py), for the labs built from one

    @classmethod
    def of(cls, module: ModuleType, **options) -> Page:
        """A lab's page from its module: key, title, icon, blurb and settings are the module's own."""
        return cls(module.KEY, module.TITLE, module.ICON, module.Settings, module.BLURB, module=module, **options)

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
    Page.of(chapter, lab=False),
    Page("exercises", N_("Exercises"), ":material/task_alt:", Exercises, lab=False, charts=False),
    Page.of(classroom, lab=False, charts=False),
    Page.of(forecasting),
    Page.of(tokens, charts_tab="Counting n-grams", corpus_charts=True),
    Page.of(rnn_cell),
    Page.of(sampling),
    Page.of(gradient_flow),
    Page.of(gates),
    Page.of(training, charts=False),
)}
LABS: list[Page] = [p for p in PAGES.values() if p.lab]
CHAPTER_ACTS = chapter.ACTS
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


def lab_title(key: str) -> str:
    """A page's title from the registry (the key itself for one it does not know)."""
    return PAGES[key].title if key in PAGES else key


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
