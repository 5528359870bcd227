"""Every lab and act as a Jupyter notebook (issue 44): the page's current settings in the first cell, then cells
that call core and draw the page's figures with plotly, the page's readings built by the same functions, the book's
section, and the lab's exercises as "predict, then run" cells. The top layer of core: it reads the labs' registry.

  build.py    a notebook from a lab's module: the settings cell, what the lab computes and draws, the exercises
  cli.py      python -m core notebook LAB [--set KEY=VALUE ...] [--out FILE.ipynb]
"""
