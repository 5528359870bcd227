"""Text before networks (the chapter's 9.2 and 9.3): the corpus, its tokens, n-gram counts and the counting
language model an RNN is compared with. Needs numpy and tokenizers, never torch.

  corpus.py      The Time Machine (found, downloaded and checked) or an upload, and cleaning
  tokens.py      character and byte-level BPE vocabularies
  ngrams.py      n-gram counts, Zipf's curve, how much of the n-gram space a text covers
  bpe_merges.py  the merges BPE learns, in order, with their counts
  ngram_lm.py    add-alpha n-gram language models scored on held-out text
"""
