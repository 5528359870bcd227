"""The one plot style every lab figure uses: title, axis titles, height and margins in one call."""
from __future__ import annotations

import plotly.graph_objects as go


def style(fig: go.Figure, title: str | None, x_title: str | None, y_title: str | None, height: int = 360,
          log_x: bool = False, log_y: bool = False, legend_below: bool = False) -> go.Figure:
    """Apply the lab's layout to fig and return it."""
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, height=height,
                      margin=dict(t=50 if title else 20, b=40))
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_layout(yaxis_type="log")  # the main y axis only (a second one keeps its own scale)
    if legend_below:
        fig.update_layout(legend=dict(orientation="h", y=-0.2))
    return fig
