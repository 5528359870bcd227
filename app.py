"""RNN Lab: navigation and shared page setup. Each lab lives in pages/, all computation in core/."""
import os
import threading

import streamlit as st

from ui import serve

serve.imports_done()   # python -m ui.serve imports torch and the rest while the server starts: wait for them

from core import __version__  # noqa: E402
from core.i18n import _  # noqa: E402
from core.labs import PAGES  # noqa: E402
from ui import lang  # noqa: E402
from ui.sidebar import device_label  # noqa: E402

st.set_page_config(page_title="RNN Lab", page_icon=":material/autorenew:", layout="wide",
                   menu_items={"About": f"RNN Lab {__version__}: an interactive lab for recurrent neural networks."})

# The menu, from the registry (core.labs.PAGES): the chapter (the home page), exercises and class, then the labs; in
# the language of the address, the session or the cookie (ui.lang).
lang.arrive()
menu = {"RNN Lab": [], _("Labs"): []}
for entry in PAGES.values():
    menu[_("Labs") if entry.lab else "RNN Lab"].append(
        st.Page(entry.path, title=_(entry.title), icon=entry.icon, default=entry.key == "chapter"))
st.set_option("client.showSidebarNavigation", True)   # the config hides the pages/ folder's menu until here
nav = st.navigation(menu)


@st.cache_resource(show_spinner=False)
def warm_up() -> bool:
    """Once per server process, in the background: what the slowest first open (Text to tokens) computes at its
    defaults, so that no learner waits for it. A failure here only means that page computes it on first open.

    Not a daemon: a process that ends while it runs waits for it, instead of killing it in the middle of torch's
    or the tokenizers' native code (that aborted short runs, exit code 134). Nor does a stopping server wait
    long: when the interpreter starts to end, before it waits for its threads, `stop` is set; the warm-up then
    starts no further piece, and the RNN's pass over the held-out text ends at its next step (core.nn.interrupt)."""
    stop = threading.Event()
    threading._register_atexit(stop.set)   # called before the interpreter joins this thread at exit
    from ui.serve import quiet_logs
    quiet_logs()                           # its cached computations run outside any page: no warning for that

    def work():
        try:
            from core.nn.interrupt import interruptible
            from pages import tokens
            with interruptible(stop):
                tokens.warm(stop)
        except Exception:   # noqa: BLE001 - never let a warm-up break the server (nor its being stopped)
            pass
    threading.Thread(target=work, name="rnnlab-warm-up", daemon=False).start()
    return True


if os.environ.get("RNNLAB_WARM_UP", "1") != "0":   # 0: a server for a test or bench that never opens Text to tokens
    warm_up()

# Phones: wide equations shrink and scroll inside their own box rather than widening the page; a lab's controls,
# stacked above its figures, scroll inside a panel of at most 40% of the screen, so a slider and what it moves
# are on the screen together. st.markdown, not st.html: a style-only st.html goes to Streamlit's event container,
# which a page load sometimes draws after the page's equations (seen on 3 of 5 passes over every page at phone
# width), so they showed unstyled for a moment; this element is drawn in order with the page, and its own first
# rule hides its empty box so that it takes no room.
st.markdown("<style id='rnnlab-styles'>[data-testid='stElementContainer']:has(#rnnlab-styles) { display: none; } "
            "@media (max-width: 640px) { .katex-display { font-size: 0.82em; overflow-x: auto; "
            "overflow-y: hidden; } .st-key-lab-controls { max-height: 40vh; overflow-y: auto; "
            "border-bottom: 1px solid #e5e7eb; padding-bottom: 0.5rem; } }"
            # a link into a lab wraps rather than being cut at the screen's edge
            "[data-testid='stPageLink-NavLink'] div, [data-testid='stPageLink-NavLink'] p { white-space: normal; "
            "overflow: visible; }"
            # a table's long cells (Act 4's samples) wrap rather than run off a phone's screen (Streamlit's own rule
            # on the cells' Markdown is stronger than a plain one); headers break between words only ("epoch" was
            # cut into "epoc" and "h" beside the samples at phone width)
            "[data-testid='stTable'] td *, [data-testid='stTable'] th * { white-space: normal !important; "
            "overflow-wrap: anywhere !important; } [data-testid='stTable'] th * { overflow-wrap: normal !important; }"
            "</style>", unsafe_allow_html=True)

lang.streamlit_words()
lang.switch()
with st.sidebar:
    st.caption(_("Training device: **{device}**").format(device=device_label()))
    st.caption(f"RNN Lab v{__version__}")

nav.run()
