"""Issue 62: each lab built as one module in core (core/labs/<key>.py) is what its page draws and its notebook runs.
Here: the pages show the module's own readings and figures at the settings the issue's walk found wrong, and the
module's parts check their inputs. The claims sweep (tests/test_claims_sweep.py) walks every control of each."""
from __future__ import annotations

from core.labs import LABS, PAGES


def test_the_registry_lists_the_module_labs_with_their_own_settings():
    for p in LABS:
        if p.module:
            assert (p.key, p.title, p.settings, p.blurb) == (p.module.KEY, p.module.TITLE, p.module.Settings,
                                                             p.module.BLURB)
    assert PAGES["gradient_flow"].module and PAGES["sampling"].module
