"""The chapter's own story (the Chapter page's acts): a passage of The Time Machine, a small RNN trained on it,
and the run stored in assets/ that the acts show. Above core.runs, which trains it.

  passage.py      the passage, its settings, teacher forcing and how far a gradient reaches
  store.py        the stored passage run (python -m core passage rebuilds it)
  cell_timing.py  the passage run with the recurrence written two ways, timed where it runs
"""
