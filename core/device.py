"""Which device training uses."""
from __future__ import annotations

import torch

from core.checks import check_choice

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(name: str = "auto") -> torch.device:
    """'auto' -> CUDA when a GPU is visible, else CPU; 'cuda' without a GPU raises ValueError."""
    check_choice("device", name, DEVICES)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was asked for, but no CUDA GPU is visible to PyTorch here: "
                         "choose 'cpu' or 'auto'.")
    return torch.device(name)


def describe_device(device: torch.device | str | None = None) -> str:
    """A short human label, e.g. 'CUDA: NVIDIA H200' or 'CPU (2 threads)'."""
    device = resolve_device("auto") if device is None else torch.device(device)
    if device.type == "cuda":
        return f"CUDA: {torch.cuda.get_device_name(device)}"
    return f"CPU ({torch.get_num_threads()} threads)"
