"""The pretrained character RNN shipped in assets/ (rebuilt by python -m core pretrain)."""
from __future__ import annotations

import json
from pathlib import Path

from core.sampling import LanguageModel

ASSETS = Path(__file__).resolve().parents[1] / "assets"
WEIGHTS = "charrnn.safetensors"
META = "charrnn.json"
REBUILD = "Rebuild it with: python -m core pretrain (needs the corpus; a few minutes on CPU)."


def load_pretrained(folder: str | Path = ASSETS, device: str = "cpu") -> LanguageModel:
    """Load the shipped model (safetensors + JSON; never unpickles). ValueError with a clear message when
    the files are missing or damaged."""
    from core.runs.saved import load_model  # local import: the saved-run code is not needed to define this module

    folder = Path(folder)
    try:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
        weights = (folder / WEIGHTS).read_bytes()
    except FileNotFoundError as exc:
        raise ValueError(f"The pretrained model is missing ({Path(exc.filename).name} not found in {folder}). {REBUILD}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"The pretrained model's metadata in {folder} cannot be read ({exc}). {REBUILD}") from None
    try:
        return load_model(weights, meta, device)
    except ValueError as exc:
        raise ValueError(f"The pretrained model in {folder} is damaged: {exc} {REBUILD}") from None
