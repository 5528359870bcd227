"""Exercises that check themselves: predict, then run, then see why. Each solver runs the real core code.

  types.py           an Exercise, its Solution and the grading (no exercise here, so nothing imports upward)
  solvers_maths.py   solvers over the labs' maths
  solvers_models.py  solvers over trained models and runs
  bank.py            every exercise, by lab
  cache.py           answers computed once per server and kept; the shipped answers of those that train
  cli.py             python -m core exercises
"""
