"""RNN Lab computation: pure numpy / torch / tokenizers, no user-interface code."""

__version__ = "0.1.0"
