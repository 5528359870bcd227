"""A model read back from its weights (safetensors bytes, never pickle) and the plain data that describes its
model and vocabulary. Reading a run's files around it is core.runs.saved's work."""
from __future__ import annotations

import torch
from safetensors.torch import load as st_load

from core.nn.device import resolve_device
from core.nn.models import ModelSpec, RNNLM
from core.nn.sampling import LanguageModel
from core.text.tokens import vocab_from_dict


def load_model(weights: bytes, model: dict, vocab: dict, cleaning: str = "letters", meta: dict | None = None,
               device: str = "cpu") -> LanguageModel:
    """Rebuild a LanguageModel from safetensors bytes, its model's and vocabulary's plain data (ModelSpec.to_dict,
    the vocabulary's to_dict) and the cleaning its text had (never unpickles). meta: what the model is kept with."""
    if not isinstance(model, dict) or not isinstance(vocab, dict):
        raise ValueError("The run's JSON lacks 'model' or 'vocab': not an RNN Lab run.")
    spec = ModelSpec.from_dict(model)
    vocab = vocab_from_dict(vocab)
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
    return LanguageModel(net, vocab, cleaning, meta if meta is not None else {})
