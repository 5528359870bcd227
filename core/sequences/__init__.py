"""Sequences before text (the chapter's 9.1): a noisy sine, an autoregressive model fitted on a window of tau past
values, and what happens to its forecasts k steps ahead.

  forecast.py   the series, the least-squares fit, one-step and k-step predictions, their errors
  readings.py   what the lab and Act 1 say about a fit, as claims built from its numbers (one rule per idea)
"""
