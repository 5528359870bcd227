"""A real browser (Playwright driving Debian's chromium) against a live `streamlit run app.py`."""
import re
import time
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from core.labs import Url, query
from registry import labs, page_paths

pytestmark = pytest.mark.browser


def no_exception(page: Page) -> None:
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert "Traceback" not in page.inner_text("body")


def metric_value(page: Page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']", has_text=label).first
    return box.locator("[data-testid='stMetricValue']").inner_text()


def test_home_and_forecasting(page: Page, app_url, shots_dir):
    page.goto(app_url)
    expect(page.get_by_role("heading", name=re.compile("RNN Lab"))).to_be_visible(timeout=30_000)
    page.screenshot(path=str(shots_dir / "home.png"), full_page=True)
    page.locator("[data-testid='stSidebarNav']").get_by_text("Forecasting", exact=True).click()
    expect(page.get_by_text("One-step MSE, test range")).to_be_visible(timeout=30_000)
    before = metric_value(page, "One-step MSE, test range")
    slider = page.get_by_role("slider", name=re.compile("Window"))
    for tau in (5, 6, 7, 8):  # one key at a time, each change lands in the URL before the next
        slider.focus()
        page.keyboard.press("ArrowRight")
        expect(page).to_have_url(re.compile(rf"tau={tau}(&|$)"), timeout=15_000)
    expect(page.locator("[data-testid='stMetric']", has_text="One-step MSE, test range")
           .locator("[data-testid='stMetricValue']")).not_to_have_text(before, timeout=15_000)
    no_exception(page)
    page.screenshot(path=str(shots_dir / "forecasting.png"), full_page=True)


def by_menu(page: Page, title: str) -> None:
    """Open a page from the sidebar menu, as a learner does: the browser session (its answers) and the app's loaded
    scripts stay, where a new address would load them all again."""
    page.locator("[data-testid='stSidebarNav']").get_by_text(title, exact=True).click()
    expect(page.get_by_role("heading", name=re.compile(re.escape(title)))).to_be_visible(timeout=30_000)


def open_lab(page: Page, app_url: str, title: str) -> None:
    page.goto(app_url)
    expect(page.get_by_role("heading", name=re.compile("RNN Lab"))).to_be_visible(timeout=30_000)
    by_menu(page, title)


def test_text_cell_and_gradient_pages(page: Page, app_url, shots_dir):
    from conftest import corpus_path
    open_lab(page, app_url, "Text to tokens")
    if corpus_path() is None:  # without a corpus the lab says how to get one, and takes an upload
        expect(page.get_by_text("The Time Machine is not available").first).to_be_visible(timeout=30_000)
    else:
        expect(page.get_by_text("Bytes per token").first).to_be_visible(timeout=30_000)
    no_exception(page)
    page.screenshot(path=str(shots_dir / "tokens.png"), full_page=True)

    open_lab(page, app_url, "RNN cell")
    expect(page.get_by_text("Largest difference")).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Run the verification checks").click()
    expect(page.get_by_text(re.compile(r"\d+ passed, 0 failed"))).to_be_visible(timeout=60_000)
    no_exception(page)
    page.screenshot(path=str(shots_dir / "rnn_cell.png"), full_page=True)

    open_lab(page, app_url, "Gradient flow")
    expect(page.get_by_text("Spectral radius ρ", exact=True)).to_be_visible(timeout=30_000)
    no_exception(page)
    page.screenshot(path=str(shots_dir / "gradient_flow.png"), full_page=True)

    # Issue 44: the page at other settings, downloaded as a notebook, is the file the command writes
    from core.notebooks import build
    page.goto(app_url + "/gradient_flow?scale=1.5&tanh=0")
    expect(page.get_by_text("Spectral radius ρ", exact=True)).to_be_visible(timeout=30_000)
    with page.expect_download(timeout=30_000) as got:
        page.get_by_role("button", name="Download as notebook").click()
    assert got.value.suggested_filename == "rnnlab-gradient_flow.ipynb"
    assert open(got.value.path(), encoding="utf-8").read() == build.dumps(
        build.build("gradient_flow", {"scale": 1.5, "use_tanh": False}))


def test_sampling_types_a_prefix(page: Page, app_url, shots_dir):
    open_lab(page, app_url, "Sampling")
    expect(page.get_by_text("Mean surprisal")).to_be_visible(timeout=30_000)
    box = page.get_by_role("textbox", name="Prefix")
    box.fill("the psychologist")
    box.press("Enter")
    expect(page.get_by_text("the psychologist").first).to_be_visible(timeout=30_000)
    expect(page).to_have_url(re.compile(r"prefix=the\+psychologist|prefix=the%20psychologist"), timeout=15_000)
    no_exception(page)
    page.screenshot(path=str(shots_dir / "sampling.png"), full_page=True)


def test_training_tiny_run_moves_the_chart(page: Page, app_url, shots_dir, corpus_file):
    page.goto(app_url + "/training?preset=tiny&hidden_size=48&epochs=2")  # the form's settings come from the URL
    expect(page.get_by_role("heading", name=re.compile("Training"))).to_be_visible(timeout=30_000)
    expect(page.get_by_role("spinbutton", name="Hidden units")).to_have_value("48", timeout=30_000)
    page.get_by_role("button", name="Train", exact=True).click()
    expect(page).to_have_url(re.compile(r"hidden_size=48.*epochs=2|epochs=2.*hidden_size=48"), timeout=30_000)
    expect(page.get_by_text(re.compile(r"tiny #1: (running|finished)"))).to_be_visible(timeout=60_000)
    expect(page.get_by_text("tiny #1: finished")).to_be_visible(timeout=120_000)
    expect(page.locator("[data-testid='stMetric']", has_text="Validation perplexity")).to_be_visible()
    expect(page.get_by_text("Compare and export")).to_be_visible(timeout=30_000)
    no_exception(page)
    page.screenshot(path=str(shots_dir / "training.png"), full_page=True)


def test_walk_the_chapter_and_retrain_act_four(page: Page, app_url, shots_dir):
    from conftest import corpus_path
    page.goto(app_url)
    expect(page.get_by_role("heading", name=re.compile("Act 1"))).to_be_visible(timeout=30_000)
    for act, title in ((2, "Language into numbers"), (3, "A network with memory"), (4, "Training through time")):
        page.get_by_role("button", name=re.compile(f"^{title}")).click()
        expect(page.get_by_role("heading", name=re.compile(f"Act {act}"))).to_be_visible(timeout=30_000)
        expect(page).to_have_url(re.compile(rf"act={act}(&|$)"), timeout=15_000)
        no_exception(page)
    expect(page.get_by_text(re.compile(r"^The stored run \(seed 0\)\. Training perplexity falls"))).to_be_visible()
    if corpus_path() is None:
        expect(page.get_by_role("button", name=re.compile("Retrain live"))).to_be_disabled()
        return
    page.get_by_role("button", name=re.compile("Retrain live")).click()
    expect(page.get_by_text(re.compile(r"^Your run, seed 0 \(finished: epoch 60 of 60\)\. Training"))).to_be_visible(
        timeout=90_000)
    expect(page.get_by_text("Teacher forcing: why generating is harder than training")).to_be_visible()
    no_exception(page)
    page.screenshot(path=str(shots_dir / "chapter_act4.png"), full_page=True)


def test_exercises_in_two_labs_update_the_overview(page: Page, app_url, shots_dir):
    from core.exercises.bank import BANK

    def answer(question_start: str, option: str) -> None:
        card = page.locator("[data-testid='stVerticalBlock']", has_text=question_start).last
        card.get_by_text(option, exact=True).click()
        card.get_by_role("button", name="Check", exact=True).click()
        expect(page.get_by_text(re.compile(f"You answered {re.escape(option)}\\."))).to_be_visible(timeout=30_000)

    open_lab(page, app_url, "Gradient flow")
    answer("Weight scale 1.5, no tanh", "exploding")
    by_menu(page, "RNN cell")
    answer("A one-hot input row times W_xh", "a column of W_xh")
    expect(page.get_by_text(re.compile(r"Not quite: the run says a row of W_xh"))).to_be_visible()
    by_menu(page, "Exercises")
    box = page.locator("[data-testid='stMetric']", has_text="Answered")
    expect(box.locator("[data-testid='stMetricValue']")).to_have_text(f"2 of {len(BANK)}", timeout=15_000)
    no_exception(page)
    page.screenshot(path=str(shots_dir / "exercises.png"), full_page=True)
    not_you_forgets_the_learner(page, app_url, len(BANK))


def not_you_forgets_the_learner(page: Page, app_url: str, exercises: int) -> None:
    """On a shared computer: after "Not you? Forget me here" neither this tab nor a new one greets the learner
    (the address loses its code and the cookie goes, though the session arrived with it)."""
    has_cookie = lambda: any(c["name"] == "rnnlab_me" and c["value"] for c in page.context.cookies())  # noqa: E731
    wait_until(has_cookie, "the learner's cookie was never set", page)
    page.get_by_role("button", name="Not you? Forget me here").click()
    expect(page.get_by_role("button", name="Not you? Forget me here")).to_have_count(0, timeout=30_000)
    wait_until(lambda: not has_cookie(), "the learner's cookie stayed", page)
    assert f"{Url.LEARNER}=" not in page.url
    fresh = page.context.new_page()                     # the next person, in a new tab of the same browser
    fresh.goto(app_url + "/exercises")
    box = fresh.locator("[data-testid='stMetric']", has_text="Answered")
    expect(box.locator("[data-testid='stMetricValue']")).to_have_text(f"0 of {exercises}", timeout=30_000)
    assert f"{Url.LEARNER}=" not in fresh.url
    expect(fresh.get_by_role("button", name="Not you? Forget me here")).to_have_count(0)



def wait_until(condition, what: str, page: Page, seconds: float = 30) -> None:
    """Until condition() holds (a state of the browser that no locator shows, such as a cookie)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        page.wait_for_timeout(100)


PHONE_PAGES = page_paths()
OVERFLOW = """() => { const main = document.querySelector('[data-testid="stMain"]');
  const cut = Array.from(document.querySelectorAll('.katex-display')).filter(e => e.scrollWidth > e.clientWidth + 4);
  const unlabelled = Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'))
    .filter(e => !/\d/.test(e.getAttribute('aria-label') || '') || e.getAttribute('role') !== 'figure');
  const links = Array.from(document.querySelectorAll('[data-testid="stPageLink-NavLink"] *, [data-testid="stTable"], '
      + '[data-testid="stTable"] > *, [data-testid="stMarkdownContainer"] div'))
    .filter(e => e.scrollWidth > e.clientWidth + 2 && e.clientWidth > 0);
  return [main.scrollWidth - main.clientWidth, document.documentElement.scrollWidth - window.innerWidth,
          cut.length + links.length, unlabelled.length]; }"""


OVERLAPS = """() => { const out = [];
  for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
    const frame = chart.getBoundingClientRect();
    for (const t of chart.querySelectorAll('.gtitle'))
      if (t.getBoundingClientRect().right > frame.right + 2) out.push('title cut: ' + t.textContent);
    const boxes = Array.from(chart.querySelectorAll('.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, '
        + '.gtitle, .annotation-text, .legendtext')).filter(e => e.textContent.trim())
      .map(e => [e.textContent.trim(), e.getBoundingClientRect()]).filter(b => b[1].width > 0);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i][1], b = boxes[j][1];
      if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 2 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 2)
        out.push(boxes[i][0] + ' / ' + boxes[j][0]); } }
  return out; }"""


SETTLED = """() => !document.querySelector('[data-testid="stStatusWidget"]')
  && [...document.querySelectorAll('style')].some(e => e.textContent.includes('katex-display { font-size: 0.82em'))
  && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
       .every(c => c.offsetParent === null || c.querySelector('svg.main-svg'))"""


def settled(page: Page) -> None:
    """Until the page's run is over, app.py's phone styles are in the page (a rerun can leave them out for a moment)
    and every chart on screen has drawn itself (then two animation frames, so the browser has laid the labels
    out): the state the layout checks read."""
    page.wait_for_function(SETTLED, timeout=30_000)
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


def test_chart_labels_never_overlap_on_a_desktop(page: Page, app_url):
    """Acts 1 and 4, then every lab that draws charts, reached by the menu (by_menu)."""
    from conftest import corpus_path
    shown = [lab for lab in labs() if lab.charts and (corpus_path() is not None or not lab.corpus_charts)]

    def no_overlaps(where: str, tab: str = "") -> None:
        if tab:   # its charts are on another tab of the lab
            page.get_by_role("tab", name=tab).click()
        expect(page.locator("[data-testid='stPlotlyChart']:visible").first).to_be_visible(timeout=30_000)
        settled(page)
        assert page.evaluate(OVERLAPS) == [], where

    for act in (1, 4):
        page.goto(app_url + f"/?act={act}")
        expect(page.get_by_role("heading", name=re.compile(f"Act {act}"))).to_be_visible(timeout=30_000)
        no_overlaps(f"act {act}")
    for lab in shown:
        by_menu(page, lab.title)
        expect(page).to_have_url(re.compile(rf"/{lab.key}(\?|$)"), timeout=30_000)
        no_overlaps(lab.key, lab.charts_tab)


# Counts every moment (each batch of changes to the page) at which an equation is on screen without app.py's phone
# styles: it would show at full width for that moment.
UNSTYLED_WATCH = """window.__unstyled = 0;
new MutationObserver(() => { if (document.querySelector('.katex-display') && ![...document.querySelectorAll('style')]
    .some(e => e.textContent.includes('katex-display { font-size: 0.82em'))) window.__unstyled++; })
  .observe(document, {subtree: true, childList: true, characterData: true, attributes: true});"""


PANEL_GAP = """() => {
    const p = document.querySelector('.st-key-lab-controls');
    if (!p) return null;
    p.scrollIntoView({block: 'start'});
    const view = p.closest('[data-testid="stColumn"]').nextElementSibling;
    return [view.getBoundingClientRect().top - p.getBoundingClientRect().top, p.getBoundingClientRect().height]; }"""


def test_no_page_scrolls_sideways_on_a_phone(browser, app_url, shots_dir):
    """One walk over every page at 390 px: no sideways scroll, every chart labelled, no labels running into each
    other, no equation ever drawn without the phone styles; and (issue 30: Forecasting's six controls stood about
    1000 px above its chart, so a slider move showed nothing) a lab's controls panel takes at most 45% of the
    screen and what the controls move starts on the same screen (labs that lay their controls out inline, as the
    RNN cell does, have no panel)."""
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    phone.add_init_script(UNSTYLED_WATCH)
    panels = {f"/{lab.key}" for lab in labs() if lab.charts and not lab.corpus_charts}
    measured = []
    try:
        for path in PHONE_PAGES:
            phone.goto(app_url + path)
            expect(phone.locator("h1").first).to_be_visible(timeout=30_000)
            settled(phone)
            assert phone.evaluate(OVERFLOW) == [0, 0, 0, 0], path   # no sideways scroll; every chart labelled
            assert phone.evaluate(OVERLAPS) == [], path              # and no chart's labels run into each other
            assert phone.evaluate("() => window.__unstyled") == 0, path  # no equation ever drawn without the styles
            if path in panels and (shape := phone.evaluate(PANEL_GAP)) is not None:
                gap, height = shape
                assert height <= 0.45 * 844 and gap < 844, (path, height, gap)
                measured.append(path)
        assert "/forecasting" in measured, measured
        phone.screenshot(path=str(shots_dir / "training_phone.png"), full_page=True)
    finally:
        phone.close()


def test_tab_moves_from_control_to_control_without_chart_toolbars(page: Page, app_url):
    open_lab(page, app_url, "Forecasting")
    expect(page.get_by_text("One-step MSE, test range")).to_be_visible(timeout=30_000)
    expect(page.locator("[data-testid='stPlotlyChart']").first).to_be_visible(timeout=30_000)
    assert page.locator(".modebar-btn").count() == 0
    page.get_by_role("slider", name=re.compile("Series length")).focus()
    seen = []
    for _ in range(25):
        page.keyboard.press("Tab")
        seen.append(page.evaluate("() => (document.activeElement.className || '').toString() + ' ' + "
                                  "(document.activeElement.getAttribute('aria-label') || '')"))
    assert not any("modebar" in s for s in seen), seen
    controls = [s.strip() for s in seen if s.startswith(" ")][:4]   # the sliders, in order, one Tab each
    assert controls == ["Training points n_train", "Window τ (tau)", "Horizon k", "Noise σ (sigma)"], seen


def test_a_removed_upload_is_no_longer_used(page: Page, app_url, tmp_path):
    text = " ".join(["zebra quartz mellow river"] * 60)
    upload = tmp_path / "my_notes.txt"
    upload.write_text(text)
    page.goto(app_url + "/tokens?source=upload")
    expect(page.get_by_text("Upload a .txt file on the left").first).to_be_visible(timeout=30_000)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(str(upload))
    expect(page.get_by_role("heading", name=re.compile("One passage of my_notes"))).to_be_visible(timeout=30_000)
    page.get_by_role("button", name="Remove my_notes.txt").click()
    expect(page.get_by_text("Upload a .txt file on the left").first).to_be_visible(timeout=30_000)
    expect(page.get_by_role("heading", name=re.compile("One passage of my_notes"))).to_have_count(0)
    no_exception(page)


def test_two_learners_train_at_once_and_both_finish(browser, app_url, corpus_file):
    """Two browser contexts (two learners) press Train together on a server that trains one CPU run at a time:
    the first trains, the second sees its place in the queue, closes its tab and comes back to its run's
    address; the first learner stops their run, which keeps what it learnt and frees the CPU for the second,
    which then finishes."""
    first, second = [browser.new_context(viewport={"width": 1280, "height": 900}).new_page() for _ in range(2)]
    first.goto(app_url + "/training?preset=tiny&epochs=500")  # runs until its learner stops it (minutes)
    second.goto(app_url + "/training?preset=tiny&epochs=2")
    for tab in (first, second):
        expect(tab.get_by_role("button", name="Train", exact=True)).to_be_enabled(timeout=30_000)
    first.get_by_role("button", name="Train", exact=True).click()
    expect(first.get_by_text("tiny #1: running")).to_be_visible(timeout=60_000)
    second.get_by_role("button", name="Train", exact=True).click()
    expect(second.get_by_text("tiny #1: queued")).to_be_visible(timeout=30_000)
    expect(second.get_by_text(re.compile("Queued on the CPU, number 1 in line"))).to_be_visible()
    expect(first.get_by_text("tiny #1: running")).to_be_visible()      # the first learner's page goes on
    address = second.url
    assert f"{Url.RUN}=" in address
    second.context.close()                                # the second learner closes the tab ...
    back = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    back.goto(address)                                     # ... and comes back to the run's address
    expect(back.get_by_text("tiny #1: queued")).to_be_visible(timeout=30_000)
    # the page's own Stop, not Streamlit's header button of the same name (shown while a script run is under way)
    first.locator("[data-testid='stMain']").get_by_role("button", name="Stop", exact=True).click()
    expect(first.get_by_text("tiny #1: stopped")).to_be_visible(timeout=60_000)
    expect(first.locator("[data-testid='stMetric']", has_text="Validation perplexity")).to_be_visible()
    expect(back.get_by_text("tiny #1: finished")).to_be_visible(timeout=180_000)
    for tab in (first, back):
        no_exception(tab)
    back.context.close()
    first.context.close()


def test_a_cold_start_never_shows_the_pages_folder_as_a_menu(browser, tmp_path):
    """Before app.py has built its menu once, Streamlit would list pages/ by file name ('app', 'gradient flow');
    the config hides that menu and app.py turns its own on."""
    import subprocess
    import sys
    import urllib.request

    from conftest import ROOT, _free_port
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port",
                               str(port), "--server.address", "127.0.0.1", "--server.headless", "true"], cwd=ROOT,
                              env=dict(__import__("os").environ, RNNLAB_CACHE_DIR=str(tmp_path), RNNLAB_WARM_WORKERS="0",
                                       RNNLAB_WARM_UP="0"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    page = browser.new_page()
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
                break
            except OSError:
                page.wait_for_timeout(200)
        page.goto(f"http://127.0.0.1:{port}/gradient_flow", wait_until="commit")   # a deep link, first of all
        menus = set()
        nav = page.locator("[data-testid='stSidebarNav']")
        for _ in range(1200):   # until the real menu is there (a minute at most), note every menu seen
            if nav.count():
                menus.add(nav.first.inner_text())
            if any("The chapter" in m for m in menus):
                break
            page.wait_for_timeout(50)
        assert any("The chapter" in m for m in menus), menus
        assert not any("gradient flow" in m or "\napp\n" in f"\n{m}\n" for m in menus), menus
    finally:
        page.close()
        server.terminate()
        server.wait(10)


def test_a_check_that_trains_shows_its_progress_and_cancel_stops_it(browser, tmp_path, corpus_file):
    """Issue 29: on a server that computes its checks (RNNLAB_SHIPPED_ANSWERS=off), tr_slow's Check trains the passage
    run with a progress bar and a Cancel button; Cancel stops it, says so, and records no answer."""
    import subprocess
    import sys

    from conftest import ROOT, _free_port, wait_healthy
    port = _free_port()
    env = dict(__import__("os").environ, RNNLAB_SHIPPED_ANSWERS="off", RNNLAB_RUNS_DIR=str(tmp_path / "runs"),
               RNNLAB_CORPUS=str(corpus_file), RNNLAB_WARM_WORKERS="0", RNNLAB_WARM_UP="0")
    server = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port",
                               str(port), "--server.address", "127.0.0.1", "--server.headless", "true"], cwd=ROOT,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        wait_healthy(port, server)
        page.goto(f"http://127.0.0.1:{port}/training?preset=passage")
        page.locator(".st-key-ex-tr_slow-answer").get_by_text("no", exact=True).click()
        check = page.locator(".st-key-ex-tr_slow-check button")
        expect(check).to_be_enabled(timeout=60_000)
        check.click()
        expect(page.get_by_text(re.compile(r"Training for this check: epoch \d+"))).to_be_visible(timeout=60_000)
        page.get_by_role("button", name=re.compile("Cancel")).click()
        expect(page.get_by_text("Cancelled: the check's run was stopped")).to_be_visible(timeout=30_000)
        expect(page.get_by_text(re.compile("Training for this check"))).to_have_count(0)
        expect(page.get_by_text("You answered")).to_have_count(0)        # nothing graded, nothing kept
        no_exception(page)
    finally:
        page.close()
        server.terminate()
        server.wait(10)


from test_deploy import remembered  # noqa: E402


def test_a_class_teacher_and_three_learners(browser, app_url, corpus_file):
    """Issues 26 and 42: a teacher starts a class (the key leaves the address: it is kept in the browser); three
    learners join in their own browsers and the open teacher's view shows them and their answers without a
    reload; Ben answers an exercise link; Ana opens it as copied from his address bar (it is hers: no address carries a key), answers
    wrong first and then right, and reloads; each follows a sweep link (without their code in
    it: the browser remembers them) that hands out the learning rates in turn, and trains; after a reload (the
    key from the cookie) the teacher's view shows first-attempt scores, the runs named by their learning rate and
    final perplexity against the learning rate; the projector view shows no names and no key."""
    teacher = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    teacher.goto(app_url + "/classroom")
    teacher.get_by_label("Class name").fill("Tuesday RNNs")
    teacher.get_by_role("button", name="Start the class").click()
    expect(teacher.get_by_text("Your class: Tuesday RNNs")).to_be_visible(timeout=30_000)
    expect(teacher).to_have_url(re.compile(rf"[?&]{Url.JOIN}=[A-Z0-9]{{8}}"), timeout=30_000)
    assert f"{Url.TEACHER}=" not in teacher.url
    code = re.search(rf"{Url.JOIN}=([A-Z0-9]{{8}})", teacher.url).group(1)
    roster = teacher.locator("[data-testid='stDataFrame']").first
    learners = {}
    for name in ("Ana", "Ben", "Cy"):
        page = browser.new_context(viewport={"width": 390, "height": 900}).new_page()
        page.goto(f"{app_url}/classroom?{urlencode(query('classroom', join=code))}")
        page.get_by_label("Your name, as your teacher knows you").fill(name)
        page.get_by_role("button", name="Join").click()
        expect(page.get_by_text("your answers reach your teacher")).to_be_visible(timeout=30_000)
        remembered(page)
        learners[name] = page
    expect(roster).to_contain_text("Cy", timeout=30_000)             # live: the open view, not reloaded
    link = "/gradient_flow?" + urlencode(query("gradient_flow", {"scale": 1.5, "use_tanh": False}, exercise="gf_regime",
                                                 hide=["scale", "use_tanh"]))
    learners["Ben"].goto(app_url + link)
    for name, answers in (("Ben", ("exploding",)), ("Ana", ("stable", "exploding"))):
        page = learners[name]
        if name == "Ana":       # she opens the link as copied from Ben's address bar
            copied_address_is_hers(page, learners["Ben"])
        for answer in answers:
            page.get_by_text(answer, exact=True).first.click()
            page.get_by_role("button", name="Check", exact=True).first.click()
            expect(page.get_by_text(f"You answered {answer}.")).to_be_visible(timeout=30_000)
    answered = teacher.get_by_role("figure", name=re.compile(r"2 of 3 learners answered; 1 right on their first"))
    expect(answered).to_be_visible(timeout=30_000)                   # live, following the answered exercise ...
    chart = teacher.locator("[data-testid='stPlotlyChart'][aria-label*='learners answered']")
    expect(chart).to_have_count(1, timeout=30_000)    # ... and the older chart gone once the rerun ends (while it
                                                       # runs, Streamlit may show both: strict locators fail there)
    ana = learners["Ana"]
    ana.reload()
    expect(ana.get_by_text("You answered exploding.")).to_be_visible(timeout=30_000)
    resume_code_moves(browser, app_url, ana)
    sweep = "/training?" + urlencode(query("training", {"preset": "tiny", "epochs": 1}, sweep="lr:0.01,0.001,0.003"))
    for name, lr in (("Ana", "0.01"), ("Ben", "0.001"), ("Cy", "0.003")):    # in turn, as they open the link
        page = learners[name]
        page.goto(app_url + sweep)
        expect(page.get_by_text(re.compile(rf"so yours is {re.escape(lr)}\b"))).to_be_visible(timeout=60_000)
        page.get_by_role("button", name="Train", exact=True).click()         # all three press Train ...
        expect(page.get_by_text(re.compile(r"tiny #1: (queued|starting|running|finished)"))).to_be_visible(
            timeout=60_000)
    for page in learners.values():                                            # ... and all three finish
        expect(page.get_by_text("tiny #1: finished")).to_be_visible(timeout=180_000)
    teacher.reload()                                                   # the key comes back from the cookie
    expect(roster).to_contain_text("Ana", timeout=30_000)
    runs = teacher.get_by_role("figure", name=re.compile(r"3 runs: Ana: lr 0.01 at .*; Ben: lr 0.001 at .*; "
                                                          r"Cy: lr 0.003 at "))
    expect(runs).to_be_visible(timeout=30_000)
    swept = teacher.get_by_role("figure", name=re.compile(r"against lr.*Ben 0.001: [0-9.]+; Cy 0.003: [0-9.]+; "
                                                           r"Ana 0.01: "))
    expect(swept).to_be_visible(timeout=30_000)
    no_exception(teacher)
    teacher.get_by_role("button", name="Projector view").click()
    expect(teacher.get_by_role("button", name="Leave the projector view")).to_be_visible(timeout=30_000)
    shown = teacher.locator("[data-testid='stMain']").inner_text()
    assert code in shown and not re.search(r"\b(Ana|Ben|Cy)\b", shown), shown
    assert f"{Url.TEACHER}=" not in teacher.url
    for page in (teacher, *learners.values()):
        page.context.close()


def copied_address_is_hers(ana: Page, ben: Page) -> None:
    """Issue 63: Ben's address carries no learner key (it once did, and one click made anyone Ben), so Ana opening
    it as copied from his address bar answers as Ana."""
    assert f"{Url.LEARNER}=" not in ben.url and f"{Url.LEARNER}=" not in ana.url
    ana.goto(ben.url)
    expect(ana.locator("[data-testid='stSidebar']")).to_contain_text("Answering as Ana", timeout=30_000)


def resume_code_moves(browser, app_url: str, ana: Page) -> None:
    """On another device Ana types the resume code her sidebar shows, and her answers are there."""
    side = ana.locator("[data-testid='stSidebar']")
    expect(side).to_contain_text("Your resume code:", timeout=30_000)
    code = re.search(r"Your resume code: ([A-Z0-9]{4}-[A-Z0-9]{4})", side.text_content()).group(1)
    phone = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    phone.goto(app_url + "/exercises")
    phone.get_by_text("Go on from another device").click()
    phone.get_by_label("Your resume code").fill(code.lower().replace("-", " "))
    phone.get_by_role("button", name="Go on as that learner").click()
    expect(phone.locator("[data-testid='stSidebar']")).to_contain_text("Answering as Ana", timeout=30_000)
    box = phone.locator("[data-testid='stMetric']", has_text="Answered")
    expect(box.locator("[data-testid='stMetricValue']")).to_have_text(re.compile(r"^1 of "), timeout=30_000)
    assert f"{Url.LEARNER}=" not in phone.url
    wait_until(lambda: any(c["name"] == "rnnlab_me" and c["value"] for c in phone.context.cookies()),
               "the new device's browser never kept the learner", phone)      # so a reload there finds her too
    phone.context.close()


def test_the_language_follows_the_address_the_menu_the_switch_and_the_cookie(page: Page, app_url, shots_dir):
    """Issue 66: ?lang=zh shows a translated page in Chinese (its <html lang> says so); the menu keeps the language;
    the sidebar's switch changes it; the cookie brings it back on a new visit."""
    sidebar = page.locator("[data-testid='stSidebar']")
    try:
        page.goto(app_url + "/forecasting?lang=zh")
        expect(page.get_by_role("heading", name=re.compile("序列预测"))).to_be_visible(timeout=30_000)
        expect(page.locator("html")).to_have_attribute("lang", "zh-Hans", timeout=15_000)
        expect(page.get_by_text("单步预测均方误差（测试区间）")).to_be_visible()
        page.screenshot(path=str(shots_dir / "forecasting-zh.png"), full_page=True)
        sidebar.locator("[data-testid='stSidebarNav']").get_by_text("采样", exact=True).click()
        expect(page.get_by_role("heading", level=1, name=re.compile("采样"))).to_be_visible(timeout=30_000)
        expect(page.get_by_role("heading", name=re.compile("接下来是什么"))).to_be_visible(timeout=30_000)
        expect(page).to_have_url(re.compile(r"[?&]lang=zh(&|$)"), timeout=15_000)
        sidebar.get_by_text("English", exact=True).click()
        expect(page.get_by_role("heading", name=re.compile("Sampling"))).to_be_visible(timeout=30_000)
        expect(page).not_to_have_url(re.compile(r"lang="), timeout=15_000)
        sidebar.get_by_text("中文", exact=True).click()
        expect(page.get_by_role("heading", level=1, name=re.compile("采样"))).to_be_visible(timeout=30_000)
        expect(page).to_have_url(re.compile(r"[?&]lang=zh(&|$)"), timeout=15_000)
        page.goto(app_url + "/forecasting")              # a new visit, no lang= in the address: the cookie's
        expect(page.get_by_role("heading", name=re.compile("序列预测"))).to_be_visible(timeout=30_000)
        no_exception(page)
        page.goto(app_url + "/tokens?lang=zh")          # Streamlit's own uploader words, in Chinese by a style
        button = page.locator("[data-testid='stFileUploaderDropzone'] button p").first
        expect(button).to_be_visible(timeout=30_000)
        wait_until(lambda: "上传" in button.evaluate("e => getComputedStyle(e, '::after').content"),
                   "the uploader's button never said 上传", page)
    finally:
        page.context.clear_cookies(name="rnnlab_lang")   # the other tests meet the app in English
