"""Recurrent networks (the chapter's 9.4 to 9.7): the cells, the models built from them, their numeric proof,
and what a trained model does (sampling, probing). Above core.text; below core.runs, which trains them.

  rnn_ref.py       the float64 numpy reference with a hand-written backward pass through time
  cells.py         the cells RNN Lab can train, one registry (scratch loop, torch.nn.RNN, fused, GRU, LSTM)
  fused.py         the fused CPU recurrence and its hand-written backward
  gated.py         the plain RNN, a GRU and an LSTM stepped in Python, gates kept (checked against torch's own)
  memory.py        a memory task with one knob, the delay: each cell trained on it, its accuracy and gradients
  memory_readings.py  its claims: at chance, remembers or partly; over the delays; the gradient reaching the first
                   input; the forget gate
  memory_store.py  a comparison of the three cells, trained, written and read back: the shipped one with its delay
                   sweep (assets/gates_*; python -m core gates), and a live run's in its store folder
  blocks.py        a batch in blocks of rows, side by side in helper processes (data parallel on the CPU)
  models.py        the language model around a cell, perplexity, clipping, streamed cross-entropy
  optim.py         the runs' SGD, AdamW and cosine schedule (torch.optim's arithmetic, without its imports)
  interrupt.py     a run's stop flag, polled inside long steps
  device.py        cpu, cuda or auto
  weights.py       a model read back from safetensors and JSON (a saved run, the pretrained model)
  sampling.py      generating text: temperature, top-k, top-p
  probe.py         scores, hidden states, and the RNN against n-gram models on one text
  cell_demo.py     the RNN cell lab's small network reading one word
  param_counts.py  parameter counts: n-gram tables, RNNs, any trained cell
  gradflow.py      gradients through time: vanishing, exploding, clipping
  verify/          the numeric proof: python -m core verify
"""
