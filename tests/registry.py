"""The tests' lists of pages, URL names and cells, all read from the registries (core.labs.PAGES,
core.nn.cells.CELLS): a new lab or cell is covered without editing a test."""
from core.labs import CHAPTER_ACTS, PAGES, SETTINGS_OF, Url, url_keys
from core.nn.cells import CELLS


def labs():
    """The labs, read from the registry each time (a test may add one)."""
    return [p for p in PAGES.values() if p.lab]


def chart_pages() -> list[tuple[str, dict]]:
    """(page, query) for every page that draws charts at its defaults: each act of the chapter, each lab."""
    return [("chapter", {"act": str(a)}) for a in CHAPTER_ACTS] + [(lab.key, {}) for lab in labs() if lab.charts]


def page_paths() -> list[str]:
    """The address of every page: each act of the chapter, the exercises, each lab."""
    others = [f"/{p.key}" for p in PAGES.values() if not p.lab and p.key != "chapter"]
    return [f"/?act={a}" for a in CHAPTER_ACTS] + others + [f"/{lab.key}" for lab in labs()]


def page_params() -> dict[str, list[str]]:
    """The URL names each page reads: its declared controls, plus the exercise and the controls a link hides."""
    return {page: [*url_keys(page), Url.EXERCISE, Url.HIDE] for page in SETTINGS_OF}


def cells() -> list[str]:
    return list(CELLS)
