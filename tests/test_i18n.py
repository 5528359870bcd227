"""Issue 66: RNN Lab in Chinese. The catalog is complete and keeps every placeholder (a missing or broken translation
fails here); a translated page shows no English sentence in Chinese and no Chinese in English; its claims say the
same numbers in both languages, chosen by the same rule, over every control; exercises grade the same."""
from __future__ import annotations

import ast
import json
import re
import shutil

import pytest

from apptest_util import ROOT, page
from claims_sweep import sweep_points
from core.labs import catalog as catalogs
from core.i18n import LANGS, speaking
from core.labs import PAGES, TRANSLATED, citation, controls_of

CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")
URL = re.compile(r"\(?https?://\S+|\[[^\]]*\]\([^)]*\)")
MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|:material/\w+:|:[a-z]+\[", re.S)   # formulas; Streamlit's icons, colours
# A model's or a learner's text quoted as data (“…”, '…', a monospace block), code, HTML tags, and the sampler's top-k
# and top-p
DATA = re.compile(r"“[^”]*”|'[^'\n]*'|`[^`]*`|<div style=\"font-family:monospace.*?</div>|<[^>]*>|top\\?-[kp]", re.S)
# Words that stay as they are in Chinese: identifiers a control or a formula names, and proper names
KEPT = {"tau", "sigma", "cos", "sin", "tanh", "min", "numpy", "GRU", "LSTM", "Jupyter", "install", "RNN", "Lab", "pip",
        "CPU", "csv", "JSON", "Adam", "softmax", "torch", "BPE", "sigmoid", "exp", "NaN",
        "cuDNN", "PyTorch", "GPU", "CUDA", "cpu", "cuda", "Python"}
TRANSLATED_LABS = [k for k in TRANSLATED if PAGES[k].lab and PAGES[k].module is not None]
NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?")


def english_words(text: str) -> list[str]:
    """Words of English (three letters or more) left in a text, leaving out links, formulas, identifiers (n_train,
    x_t) and kept names."""
    text = MATH.sub(" ", URL.sub(" ", DATA.sub(" ", str(text))))
    return [w for w in re.findall(r"(?<![\w])[A-Za-z]{3,}(?![\w])", text) if w not in KEPT]


def test_the_chinese_catalog_is_complete_and_keeps_every_placeholder():
    assert catalogs.problems("zh") == []


def test_a_missing_or_broken_translation_fails_the_check(tmp_path, monkeypatch):
    """The check can fail: one translation emptied, one placeholder renamed, one bold pair dropped."""
    broken = tmp_path / "rnnlab.po"
    shutil.copy(catalogs.catalog_path("zh"), broken)
    text = broken.read_text(encoding="utf-8")
    text = text.replace('msgstr "序列预测"', 'msgstr ""', 1)
    text = text.replace("比值", "比值{ratio}", 1).replace("**怎么看这两张图**", "怎么看这两张图", 1)
    text = text.replace("正在以 **{name}** 的身份", "正在以 **{name}。**的身份", 1)
    broken.write_text(text, encoding="utf-8")
    monkeypatch.setattr(catalogs, "catalog_path", lambda lang: broken)
    found = "\n".join(catalogs.problems("zh"))
    assert "no translation for 'Forecasting'" in found
    assert "'ratio' has placeholders [], its translation ['ratio']" in found
    assert "differ in bold" in found and "Markdown does not close it" in found


def test_no_module_that_translates_binds_the_underscore():
    """`_` is gettext's name: a module that imports it and also assigns `_` (a, _ = ...) breaks every message
    in that function (Python takes the name for a local one)."""
    for path in [*ROOT.glob("core/**/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports = any(isinstance(n, ast.ImportFrom) and n.module == "core.i18n" and
                      any(a.name == "_" for a in n.names) for n in ast.walk(tree))
        if imports:
            bound = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "_"
                     and isinstance(n.ctx, ast.Store)]
            assert not bound, f"{path.relative_to(ROOT)} binds _ at lines {bound}"


def test_chinese_writes_numbers_as_english_does():
    """The readings format numbers once (core.i18n): Babel's locale data agree for the digits' symbols."""
    from babel.numbers import get_decimal_symbol, get_group_symbol
    from core.i18n import BABEL_LOCALE
    assert get_decimal_symbol(BABEL_LOCALE["zh"]) == get_decimal_symbol("en") == "."
    assert get_group_symbol(BABEL_LOCALE["zh"]) == get_group_symbol("en") == ","


def test_a_chinese_page_cites_the_chinese_editions_sections():
    with speaking("zh"):
        words, url = citation(PAGES["forecasting"].module.SECTION)
        assert "第 8 章“循环神经网络”" in words and "第 8.1 节“序列模型”" in words and url.startswith("https://zh.d2l.ai/")
        words, _url = citation(PAGES["gates"].module.SECTION)   # English 10.1 LSTM and 10.2 GRU: Chinese 9.2 and 9.1
        assert "第 9.1 节“门控循环单元（GRU）”和第 9.2 节“长短期记忆网络（LSTM）”" in words
    assert "version 1.0, chapter 9" in citation(PAGES["forecasting"].module.SECTION)[0]


def both(compute):
    with speaking("en"):
        english = compute()
    with speaking("zh"):
        chinese = compute()
    return english, chinese


@pytest.mark.parametrize("key", TRANSLATED_LABS)
def test_a_translated_labs_claims_say_the_same_numbers_by_the_same_rule_in_both_languages(key):
    """Every control of the lab walked over its range (as the claims sweep walks it) and its NAMED settings: in
    Chinese, each claim is chosen by the same rule from the same numbers, states the same numbers, and is Chinese."""
    import importlib
    lab, book = PAGES[key].module, importlib.import_module(f"test_lab_{key}")
    if getattr(lab, "TRAINS", False):   # each point a training run: its rule book's results (stored runs, histories)
        results = book.examples()
    else:
        results = []
        for s in sweep_points(PAGES[key]):
            try:
                results.append(lab.compute(s))
            except ValueError:
                continue
    for r in results:
        s = getattr(r, "settings", getattr(r, "config", None))
        english, chinese = both(lambda: lab.readings(r))
        assert [(c.kind, c.numbers) for c in english] == [(c.kind, c.numbers) for c in chinese], s
        for e, c in zip(english, chinese):
            assert book.holds(e, r), (s, e.text)
            assert sorted(NUMBER.findall(e.text)) == sorted(NUMBER.findall(c.text)), (e.text, c.text)
            assert CJK.search(c.text) and not english_words(c.text), c.text
        texts = both(lambda: [lab.notes(r), *(ch.summary for ch in lab.charts(r))])[1]
        assert all(CJK.search(t) and not english_words(t) for t in texts), texts


def test_memory_and_gates_readings_say_the_same_numbers_by_the_same_rule_on_any_numbers():
    """Memory and gates trains for its numbers, so its claims are checked in both languages on numbers drawn over
    their whole range (accuracies, delay sweeps, gradient shares from 0 to 10^2, forget gates): the same kind, the
    same numbers, and Chinese words."""
    import random
    from core.nn import memory_readings as mr
    rng = random.Random(66)
    cases = [(mr.recall, (kind, acc, d)) for kind in ("rnn", "gru", "lstm") for acc in (0.0, 0.2, 0.25, 0.5, 0.95, 1.0)
             for d in (1, 40)]
    for kind in ("rnn", "gru", "lstm"):
        for _i in range(40):
            delays = sorted(rng.sample(range(1, 101), rng.randint(1, 6)))
            cases.append((mr.over_delays, (kind, {d: rng.choice([1.0, rng.random(), 0.25, 0.95]) for d in delays})))
            g = [rng.choice([0.0, 10 ** rng.uniform(-12, 2)]) for _j in range(4)]
            cases.append((mr.first_input, (kind, g, [rng.choice([0.0, 10 ** rng.uniform(-12, 2)]) for _j in range(4)])))
    cases += [(mr.forget_gate, (f, d)) for f in (0.0, 0.05, 0.5, 0.95, 1.0) for d in (0, 5, 100)]
    for function, args in cases:
        english, chinese = both(lambda: function(*args))
        assert (english.kind, english.numbers) == (chinese.kind, chinese.numbers)
        assert sorted(NUMBER.findall(english.text)) == sorted(NUMBER.findall(chinese.text)), (english.text, chinese.text)
        assert CJK.search(chinese.text) and not english_words(chinese.text), chinese.text


@pytest.mark.parametrize("key", TRANSLATED_LABS)
def test_exercises_grade_the_same_in_both_languages(key):
    from core.exercises.bank import for_lab
    from core.exercises.types import CHOICE, grade, wrong_answer
    for ex in for_lab(key):
        english, chinese = both(ex.run)
        assert english.answer == chinese.answer and list(english.numbers.values()) == list(chinese.numbers.values())
        for answer in (english.answer, wrong_answer(ex, english.answer)):
            g_en, g_zh = grade(ex, answer, english), None
            with speaking("zh"):
                g_zh = grade(ex, answer, chinese)
                shown = [ex.question, ex.hint, *ex.options] if ex.kind == CHOICE else [ex.question, ex.hint]
                from core.i18n import _
                assert all(CJK.search(_(t)) for t in shown), ex.key
            assert g_en.correct == g_zh.correct and CJK.search(g_zh.message), (ex.key, answer)
        assert CJK.search(chinese.explanation) and not english_words(chinese.explanation), chinese.explanation


def page_texts(at) -> list[str]:
    """Every text AppTest sees a learner read: titles, Markdown, captions, messages, metrics, widgets' labels and
    help, a radio's options."""
    out = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success"):
        out += [e.value for e in at.get(kind)]
    for m in at.metric:
        out += [m.label, m.delta or ""]
    for kind in ("button", "toggle", "slider", "number_input", "radio", "expander", "selectbox", "text_input"):
        for e in at.get(kind):
            out += [getattr(e, "label", "") or "", getattr(e, "help", "") or ""]
            out += list(getattr(e, "options", []) or []) if kind == "radio" else []
    return [t for t in out if t]


@pytest.mark.parametrize("key", TRANSLATED)
def test_a_translated_page_in_chinese_shows_no_english_sentence_and_in_english_no_chinese(key):
    zh = page(key, unknown={"lang": "zh"})
    zh.run()
    assert not zh.exception and zh.query_params.get("lang") in ("zh", ["zh"])
    texts = page_texts(zh) + [str(c) for d in zh.dataframe for c in d.value.columns]   # a table's headers too
    texts += [v for d in zh.dataframe for col in d.value.columns for v in d.value[col] if isinstance(v, str)
              and CJK.search(v)]                                # and its words (not its data: tokens, samples)
    assert len(texts) > (6 if key == "classroom" else 12)   # the Class page's welcome is short
    left = {t[:80]: english_words(t) for t in texts if english_words(t)}
    assert not left, left
    en = page(key)
    en.run()                      # after the Chinese run in this process: nothing cached crosses languages
    assert not en.exception and not [t for t in page_texts(en) if CJK.search(t)]
    specs = [json.loads(c.proto.spec) for c in en.get("plotly_chart")]
    assert not [json.dumps(sp, ensure_ascii=False) for sp in specs if CJK.search(json.dumps(sp, ensure_ascii=False))]
    zh_specs = [json.loads(c.proto.spec)["layout"] for c in zh.get("plotly_chart")]
    assert all(CJK.search(json.dumps(sp, ensure_ascii=False)) for sp in zh_specs) and len(zh_specs) == len(specs)


@pytest.mark.parametrize("act", [2, 3, 4, 5])
def test_every_act_of_the_chapter_in_chinese_shows_no_english_sentence(act):
    """Act 1 is the chapter's default (the page test above); the other acts, each from its address."""
    at = page("chapter", unknown={"lang": "zh", "act": str(act)})
    at.run()
    assert not at.exception
    texts = page_texts(at) + [str(c) for d in at.dataframe for c in d.value.columns]
    left = {t[:80]: english_words(t) for t in texts if english_words(t)}
    assert not left, left
    specs = [json.loads(c.proto.spec)["layout"] for c in at.get("plotly_chart")]
    assert specs and all(CJK.search(json.dumps(sp, ensure_ascii=False)) for sp in specs)


@pytest.mark.parametrize("key", TRANSLATED_LABS)
def test_a_bad_address_value_is_refused_in_chinese(key):
    """A value the page cannot use, in a Chinese address: the warning and the reason are Chinese."""
    from core.runs.config import SETTINGS as FORM      # the Training lab's form keeps its settings in the address too
    pool = {**controls_of(key), **(FORM if key == "training" else {})}
    name, s = next((n, s) for n, s in pool.items() if s.kind is int and not s.choices)
    at = page(key, unknown={"lang": "zh", s.key: "1.5"})   # a whole number wanted
    at.run()
    said = [w.value for w in at.warning]
    assert said and all(CJK.search(w) and not english_words(w.replace(name, "").replace(name.replace("_", "\\_"), "").replace(s.key, "")) for w in said), said


def test_the_chapters_act_one_and_the_sidebar_do_not_carry_one_language_into_another():
    """Act 1 draws the Forecasting lab's figures, cached for every learner: each language has its own."""
    zh = page("chapter", unknown={"lang": "zh"})
    zh.run()
    en = page("chapter")
    en.run()
    titles = [json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "") for c in en.get("plotly_chart")]
    assert titles and not [t for t in titles if CJK.search(t)], titles
    from ui.sidebar import device_label
    from core.i18n import speaking
    with speaking("zh"):
        assert CJK.search(device_label())
    assert not CJK.search(device_label())


def test_an_untranslated_page_says_so_in_chinese(monkeypatch):
    """Every page is translated now; a page added later (here: Sampling taken off the list) says so in Chinese."""
    import ui.lang
    monkeypatch.setattr(ui.lang, "TRANSLATED", tuple(k for k in TRANSLATED if k != "sampling"))
    at = page("sampling", unknown={"lang": "zh"})
    at.run()
    assert any("本页尚未翻译" in i.value for i in at.info)
    assert "zh" in LANGS and PAGES["forecasting"].title == "Forecasting"   # data stays English; the page translates it


def test_a_runs_stored_message_is_said_in_the_readers_language():
    """A run's message is stored in English by whoever trained it (core.nn.said) and shown in the reader's language:
    every template, filled in, reads back as itself in English and as Chinese with the same values."""
    from core.nn import said
    import string
    for key, template in said.TEMPLATES.items():
        names = [f for _t, f, _s, _c in string.Formatter().parse(template) if f]
        values = {n: (said.say("finished", epochs=7) if n == said.NESTED else "42") for n in names}
        stored = said.say(key, **values)
        assert said.words(stored) == stored, key
        with speaking("zh"):
            shown = said.words(stored)
        assert CJK.search(shown) and not english_words(shown) and shown.count("42") == stored.count("42"), shown
    assert said.words("CUDA out of memory") == "CUDA out of memory"     # a message from elsewhere stays as it is
