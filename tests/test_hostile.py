"""The bad-input sweep, kept: every URL parameter of every page set to hostile values (hypothesis draws the
mix), and arbitrary bytes as uploads. Nothing may raise, and nothing a user wrote may render as a link, an image,
HTML or a Streamlit directive."""
import re

from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from apptest_util import page
from core.text import corpus
from registry import page_params

HOSTILE = [
    "", " ", "0", "-1", "-0", "1e309", "nan", "inf", "-inf", "1e-320", "3.5", "99999999999999999999", "0x10",
    "true", "None", "日本", "Ωmega ☃", "a" * 10_000, "1,2", "%00", "\x00", "\n\n# heading",
    "[Session expired: log in](https://evil.example)", "![x](http://127.0.0.1:9/p.png)",
    "<img src=x onerror=alert(1)>", "<script>alert(1)</script>", ":red[boom] :material/home:", "$x^2$",
    "**bold** _it_ `code`", "https://evil.example/path", "javascript:alert(1)",
    # Markdown's autolinks, which backslash escapes do not stop: a bare URL, www. and an e-mail address
    "https://evil.example/login", "www.evil.example", "someone@evil.example", "mailto:x@evil.example",
]
# The URL names each page reads, from its declared controls (besides these, unknown names must be ignored).
PAGE_PARAMS = page_params()
# A link or image in rendered Markdown that does not come from the app itself (its one link is to d2l.ai).
UNSAFE = [re.compile(p) for p in (r"(?<!\\)\]\((?!https://d2l\.ai)", r"(?<!\\)!\[", r"(?<!\\)<img", r"(?<!\\)<script",
                                  r"(?<!\\):red\[", r"(?<!\\)https?(?<!\\):(?!//d2l\.ai)", r"evil\.example(?!\\)")]


# What Markdown turns into a link by itself in the text it shows (GitHub-flavoured autolinks), after escapes.
AUTOLINK = re.compile(r"(?i)(https?://(?!d2l\.ai)|mailto:|xmpp:|www\.[-\w])|[-.\w+]+@[-\w]+(\.[-\w]+)+")


def rendered_markdown(at) -> list[str]:
    out = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "subheader", "title", "header",
                 "toast"):
        out.extend(str(e.value) for e in getattr(at, kind))
    return out


def autolinks(markdown: str) -> list[str]:
    """The autolinks Markdown would make in this source: found in the text its escapes leave."""
    text = re.sub(r"\\(.)", r"\1", markdown)
    return [m.group(0) for m in AUTOLINK.finditer(text)]


def check_page(name: str, query: dict, unknown: dict | None = None) -> None:
    at = page(name, timeout=60, unknown=unknown, **query).run()
    assert not at.exception, (name, query, [e.value for e in at.exception])
    for text in rendered_markdown(at):
        if "d2l.ai" in text and "Follows" in text:
            continue  # the citation the app writes itself
        for pattern in UNSAFE:
            assert not pattern.search(text), (name, pattern.pattern, text[:300])
        assert not autolinks(text), (name, autolinks(text), text[:300])


def test_the_autolink_check_sees_what_escapes_miss():
    from ui.common import plain
    for value in ("https://evil.example/login", "www.evil.example", "someone@evil.example", "mailto:x@y.org"):
        assert autolinks(value) and autolinks("\\".join(value)), value   # escaped, it is still a link
        assert not autolinks(plain(value)), value                       # the word joiners break it
    assert not autolinks("[Follows d2l.ai](https://d2l.ai/chapter)")    # the app's own citation


values = st.sampled_from(HOSTILE)


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=[Phase.explicit, Phase.generate])  # no shrinking: the failing page and values are in the message
@given(data=st.data())
def test_hostile_url_values_on_every_page(data):
    for name, params in PAGE_PARAMS.items():
        chosen = {p: data.draw(values, label=f"{name}.{p}") for p in params}
        check_page(name, chosen, {"not_a_setting": data.draw(values, label="unknown")})


def test_each_hostile_value_alone_in_the_first_parameter():
    """Each value alone, on one page in turn (the pages take turns, so each meets its share of the values alone):
    all values on all pages took most of a minute, and the sweep above mixes them on every page."""
    pages = [(name, params) for name, params in PAGE_PARAMS.items() if name != "exercises"]   # a plain choice
    for i, value in enumerate(HOSTILE):
        for name, params in (pages[i % len(pages)],):
            check_page(name, {params[0]: value})


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.binary(max_size=2048) | st.text(max_size=600).map(lambda t: t.encode("utf-8")))
def test_any_upload_is_text_or_a_clear_message(data):
    try:
        text = corpus.validate_upload(data)
    except corpus.CorpusError as exc:
        assert str(exc).endswith(".") and len(str(exc)) < 300
    else:
        assert isinstance(text, str) and len(text.strip()) >= corpus.MIN_UPLOAD_CHARS
