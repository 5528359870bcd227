"""Server time of page reruns after a control change (AppTest), for the Text, Gradient flow and Sampling labs.

    python bench/page_reruns.py
"""

# tests/test_benches.py runs this bench at a tiny size (RNNLAB_BENCH_TINY=1) with each argument list here
TINY_RUNS = [[]]
NEEDS_CORPUS = False

from common import rerun_ms, summary

if __name__ == "__main__":
    print(summary("gradient flow, scale change, n=32 T=24",
                  rerun_ms("gradient_flow", lambda at, i: at.select_slider(key="gradient_flow.scale").set_value([0.5, 1.0, 2.0][i % 3])), 100))
    print(summary("gradient flow, scale change, n=256 T=200",
                  rerun_ms("gradient_flow", lambda at, i: at.select_slider(key="gradient_flow.scale").set_value([0.5, 1.0, 2.0][i % 3]),
                           query={"n": "256", "T": "200"}), 300))
    try:
        print(summary("text to tokens, cleaning toggled (corpus cached)",
                      rerun_ms("tokens", lambda at, i: at.radio(key="tokens.cleaning").set_value(["letters", "punctuation"][i % 2])), 300))
    except Exception as exc:  # no corpus here
        print(f"text to tokens: skipped ({exc})")
    print(summary("sampling, temperature change (300 characters)",
                  rerun_ms("sampling", lambda at, i: at.slider(key="sampling.temp").set_value([0.5, 0.8, 1.2][i % 3]))))
