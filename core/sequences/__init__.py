"""Sequences before text (the chapter's 9.1): a noisy sine, an autoregressive model fitted on a window of tau past
values, and what happens to its forecasts k steps ahead.

  forecast.py   the series, the least-squares fit, one-step and k-step predictions, their errors
"""
