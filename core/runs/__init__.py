"""Training runs: everything from a run's settings to its folder in the run store. Above core.nn and core.text;
no Streamlit here.

  config.py     TrainConfig (every setting declared once) and the presets
  record.py     what a run is, as data: Status, HistoryRow, Progress, RunRecord (no torch)
  loop.py       the training loop, train(), in named steps
  budget.py     a run's memory: the estimate checked before it starts, and the heap keeping freed blocks
  data.py       a run's data: the text as token ids, its splits, batches and validation windows
  saved.py      a saved run: safetensors + run.json + metrics.csv, and loading it back
  store.py      the run store: a folder per run (request, state, progress, stop, the saved run), cleanup
  worker.py     runs (or groups) trained into the store, one after another (a process, a thread or a Ray task)
  launchers.py  where a run trains, and following it through the store (the one channel for every mode)
  tasks.py      the kinds of run: a language model's, or the memory task's comparison (Memory and gates)
  group.py      runs of one shape trained together, as one stacked computation (a class pressing Train at once)
  job.py        a run as the server keeps it
  jobs.py       the server's runs: limits, the queue and its estimate, runs found again from the store
  cli.py        python -m core train
  pretrain.py   python -m core pretrain: rebuilds assets/charrnn.*

Importing this package imports none of them: `from core.runs import store` costs only what store needs.
"""
