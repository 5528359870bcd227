"""A model's weights read back: safetensors bytes (never pickle) and the JSON that describes the model, for a
saved run (core.runs.saved) or the pretrained character RNN shipped in assets/."""
from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load as st_load

from core.assets import ASSETS, META, REBUILD, WEIGHTS
from core.nn.device import resolve_device
from core.nn.models import ModelSpec, RNNLM
from core.nn.sampling import LanguageModel
from core.text.tokens import vocab_from_dict


def load_model(weights: bytes, meta: dict, device: str = "cpu") -> LanguageModel:
    """Rebuild a LanguageModel from safetensors bytes and its JSON metadata (never unpickles)."""
    if not isinstance(meta, dict) or "model" not in meta or "vocab" not in meta:
        raise ValueError("The run's JSON lacks 'model' or 'vocab': not an RNN Lab run.")
    spec = ModelSpec.from_dict(meta["model"])
    vocab = vocab_from_dict(meta["vocab"])
    if len(vocab) != spec.vocab_size:
        raise ValueError(f"The vocabulary has {len(vocab)} tokens but the model expects {spec.vocab_size}.")
    try:
        tensors = st_load(weights)
    except Exception as exc:
        raise ValueError(f"The weights file is not valid safetensors ({exc}).") from None
    net = RNNLM(spec)
    try:
        net.load_state_dict(tensors, strict=True)
    except RuntimeError as exc:
        raise ValueError(f"The weights do not fit the model described in the JSON: {str(exc).splitlines()[0]}") from None
    net.to(resolve_device(device) if device in ("auto", "cuda") else torch.device("cpu"))
    return LanguageModel(net, vocab, meta.get("cleaning", "letters"), meta)


def load_pretrained(folder: str | Path = ASSETS, device: str = "cpu") -> LanguageModel:
    """Load the shipped model (safetensors + JSON; never unpickles). ValueError with a clear message when
    the files are missing or damaged."""
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
