"""Where the shipped artefacts are: assets/ holds the pretrained character RNN (rebuilt by python -m core pretrain),
the chapter's stored passage run (python -m core passage) and the answers of the exercises that train (python -m
core exercises --bake). Loading them is core.nn.weights's (the model) and their own packages' work."""
from __future__ import annotations

import importlib.util
from pathlib import Path

def _assets_dir() -> Path:
    """assets/ beside core/ in a clone (or an editable install); from a wheel, the package rnnlab_assets that
    pyproject.toml ships them in."""
    here = Path(__file__).resolve().parents[1] / "assets"
    if here.is_dir():
        return here
    spec = importlib.util.find_spec("rnnlab_assets")
    if spec is not None and spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    return here


ASSETS = _assets_dir()
WEIGHTS = "charrnn.safetensors"
META = "charrnn.json"
# The pretrained model's held-out scores in its charrnn.json (state carried through the last tenth of the corpus)
HELD_OUT_PPL, HELD_OUT_BPC = "val_ppl", "val_bits_per_char"
REBUILD = "Rebuild it with: python -m core pretrain (needs the corpus; a few minutes on CPU)."
