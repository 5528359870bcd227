"""The exercises, two or more per lab, many of them the RNN chapter's end-of-section exercises made checkable.
Every solver runs core code with its settings; none returns a stored answer. The solvers: core.exercises.solvers_maths
(the labs' maths), solvers_cell (the RNN cell's) and solvers_models (trained models and runs)."""
from __future__ import annotations

from core.exercises.types import CHOICE, NUMBER, Exercise
from core.exercises import solvers_cell as cell, solvers_maths as maths, solvers_models as models

# --- The bank ----------------------------------------------------------------------------------------------

YES_NO = ("yes", "no")
PREFIX = "the time traveller"
BANK: dict[str, Exercise] = {e.key: e for e in (
    Exercise("fc_horizon", "forecasting", "With a window of τ = 4, how does the 64-step test error compare with the "
             "one-step error?", CHOICE, maths.horizon_ratio, {"tau": 4, "k": 64},
             "Each step ahead feeds the model its own previous guess.",
             options=("about the same", "2 to 5 times larger", "more than 5 times larger"),
             other={"k": 4}, other_label="4 steps ahead instead", url={"tau": 4, "k": 64}),
    Exercise("fc_window", "forecasting", "Does a longer window (τ = 32 instead of 4) lower the 16-step test error?",
             CHOICE, maths.longer_window, {"tau": 4, "tau_long": 32, "k": 16},
             "A longer window sees more of the wave, and averages more noise.", options=YES_NO,
             other={"tau_long": 8}, other_label="τ = 8 instead of 32", url={"tau": 4, "k": 16}),
    Exercise("fc_settles", "forecasting", "Fed only its own guesses from the end of the training range (t = 600, "
             "τ = 4), at what value does the forecast come to rest?", NUMBER, maths.settles_at, {"tau": 4, "k": 16},
             "At rest, the next guess equals the values before it: x = w·(x, …, x) + b. The lab shows the fitted "
             "weights and bias.", tolerance=0.0, absolute=0.01,
             other={"tau": 16}, other_label="τ = 16", url={"tau": 4}),
    Exercise("fc_no_noise", "forecasting", "The book's exercise: with no noise at all, how many past values must the "
             "autoregressive model see (the smallest τ) to predict the sine exactly?", NUMBER,
             maths.window_without_noise,
             {}, "A sine is the solution of a second-order recurrence.", tolerance=0.0, absolute=0.0,
             book="v1.0's 9.1 Working with Sequences, #1.2"),
    Exercise("tok_table", "tokens", "The book's exercise: a table that predicts the next word from the k = 20 words "
             "before it, over a vocabulary of |V| = 10,000 words, has about 10 to the power of what entries?",
             NUMBER, maths.ngram_table_power, {"V": 10_000, "k": 20},
             "One probability for every possible next token after every possible context.", tolerance=0.0,
             absolute=0.3, other={"k": 2}, other_label="two words of context", url={"V": 10_000, "k": 20},
             book="the newer draft's Recurrent Neural Networks section, #4 (not in v1.0)"),
    Exercise("tok_rnn", "tokens", "The book's exercise, continued: an RNN language model over the same |V| = 10,000 "
             "words, each word embedded in d = 256 numbers, with h = 256 hidden units: how many parameters (E, "
             "W_xh, W_hh, b_h, W_hq, b_q)?", NUMBER, maths.rnn_parameters, {"V": 10_000, "d": 256, "h": 256},
             "Add |V|·d, d·h, h·h, h, h·|V| and |V|.", tolerance=0.001,
             other={"h": 512}, other_label="h = 512", url={"V": 10_000, "h": 256, "d": 256},
             book="the newer draft's Recurrent Neural Networks section, #4 (not in v1.0)"),
    Exercise("tok_coverage", "tokens", "What share of the possible 4-grams of letters and spaces does The Time "
             "Machine contain?", CHOICE, maths.coverage_share, {"n": 4},
             "There are 27⁴ = 531,441 possible 4-grams and "
             "the book has about 170,000 characters.", options=("under 1%", "1% to 10%", "10% to 50%", "over 50%"),
             other={"n": 2}, other_label="2-grams", needs_corpus=True),
    Exercise("cell_state", "rnn_cell", "A network with h = 4 hidden units reads 'unfathomable' instead of 'time', one "
             "letter per step, predicting each next letter. How many numbers does its hidden state hold after its "
             "last step?", NUMBER,
             cell.state_size,
             {"short": "time", "long": "unfathomable", "h": 4}, "Does the state grow, or is it overwritten?",
             tolerance=0.0, absolute=0.0, other={"h": 8}, other_label="h = 8", url={"word": "unfathomable", "h": 4}),
    Exercise("cell_lookup", "rnn_cell", "A one-hot input row times W_xh gives ...", CHOICE, cell.lookup_is_a_row,
             {"word": "machine", "h": 4, "t": 3}, "The row has a single 1; everything else is 0.",
             options=("a row of W_xh", "a column of W_xh", "the sum of W_xh's rows"), url={"word": "machine", "h": 4}),
    Exercise("cell_shared", "rnn_cell", "Unrolled over the 6 steps of reading 'machine', how many different W_hh "
             "matrices does the network use?", NUMBER, cell.shared_matrices, {"word": "machine", "h": 4},
             "Look at the unrolled picture: what is on every arrow between states?", tolerance=0.0, absolute=0.0,
             other={"word": "unfathomable"}, other_label="a 12-letter word", url={"word": "machine", "h": 4}),
    Exercise("book_output", "rnn_cell", "The book's exercise: an RNN predicts the next character of The Time Machine, "
             "cleaned to lower-case letters and spaces. How many numbers must its output layer give at each step?",
             NUMBER, cell.output_size, {}, "One score for every token the model could predict next.", tolerance=0.0,
             absolute=0.0, needs_corpus=True, book="v1.0's 9.4 Recurrent Neural Networks, #1"),
    Exercise("book_condition", "rnn_cell", "The book's exercise: why can an RNN's prediction at step t depend on every "
             "earlier token, however many there are?", CHOICE, cell.reaches_back,
             {"text": "the time machine", "swap": "l", "h": 16},
             "What does each step read besides the new token, and how big is it?",
             options=("its hidden state carries a summary of every earlier token forward",
                      "it keeps every earlier token in memory", "its input window grows with the text"),
             book="v1.0's 9.4 Recurrent Neural Networks, #2"),
    Exercise("samp_cold", "sampling", "What does sampling at a temperature near zero (T = 0.01) produce?", CHOICE,
             models.cold_temperature, {"prefix": PREFIX, "length": 60, "temperature": 0.01},
             "Dividing the scores by a tiny T makes the differences between them huge.",
             options=("the likeliest character every time (greedy)", "a different text for each seed"),
             other={"temperature": 1.0}, other_label="T = 1", url={"prefix": PREFIX, "temperature": 0.0}),
    Exercise("samp_topk", "sampling", "At a hot temperature (T = 1.5), does top-k = 1 give the same text as greedy "
             "decoding?", CHOICE, models.top_k_one, {"prefix": PREFIX, "length": 60, "temperature": 1.5, "seed": 0},
             "How many characters are left to choose from?", options=YES_NO,
             other={"temperature": 0.5}, other_label="T = 0.5", url={"prefix": PREFIX, "temperature": 1.5, "top_k": 1}),
    Exercise("samp_surprisal", "sampling", "How surprised is the pretrained model, on average, by its own greedy "
             "text (bits per character)?", CHOICE, models.greedy_surprisal, {"prefix": PREFIX, "length": 200,
                                                                        "temperature": 0.0},
             "Greedy text always takes the character the model finds likeliest.",
             options=("under 1 bit", "1 to 3 bits", "over 3 bits"), other={"temperature": 1.5}, other_label="T = 1.5",
             url={"prefix": PREFIX, "temperature": 0.0}),
    Exercise("gf_thirty", "gradient_flow", "A linear RNN whose W_hh is orthogonal times 0.9: what is the gradient's "
             "norm 30 steps back (it starts at 1)?", NUMBER, maths.thirty_steps_back, {"n": 32, "scale": 0.9, "T": 30},
             "An orthogonal matrix keeps lengths; the 0.9 does not.", tolerance=0.05,
             other={"scale": 1.1}, other_label="times 1.1",
             url={"kind": "orthogonal", "scale": 0.9, "T": 30, "use_tanh": False}),
    Exercise("gf_clip", "gradient_flow", "Can gradient clipping bring back the share of the gradient that distant "
             "steps carry?", CHOICE, maths.clipping_restores, {"n": 32, "scale": 0.8, "T": 24, "theta": 0.5},
             "Clipping rescales the whole gradient by one factor.", options=YES_NO,
             other={"theta": 5.0}, other_label="θ = 5", url={"scale": 0.8, "theta": 0.5}),
    Exercise("gf_regime", "gradient_flow", "Weight scale 1.5, no tanh, 24 steps: is the gradient vanishing, stable "
             "or exploding?", CHOICE, maths.linear_regime, {"n": 32, "scale": 1.5, "T": 24},
             "The spectral radius is about the scale.", options=("vanishing", "stable", "exploding"),
             other={"scale": 0.5}, other_label="scale 0.5", url={"scale": 1.5, "use_tanh": False}),
    Exercise("book_long", "gradient_flow", "The book's exercise: what goes wrong when an RNN is trained by "
             "backpropagating through long sequences?", CHOICE, maths.long_sequences,
             {"n": 32, "T": 100, "low": 0.9, "high": 1.1}, "Each step back multiplies the gradient by the same matrix.",
             options=("the gradient vanishes or explodes over the steps", "the model needs more parameters for each "
                      "extra step", "nothing changes"),
             other={"low": 1.0, "high": 1.0}, other_label="ρ = 1 exactly", url={"kind": "orthogonal", "T": 100,
                                                                                       "use_tanh": False},
             book="v1.0's 9.4 Recurrent Neural Networks, #3"),
    Exercise("book_problem", "gradient_flow", "The book's exercise: a problem of this language model. "
             "Through a tanh RNN with weight scale 1, what happens to a gradient sent back 100 steps?", CHOICE,
             maths.language_model_problem, {"n": 32, "scale": 1.0, "T": 100, "use_tanh": True},
             "Each step back multiplies by W_hh and by tanh's slopes, all below 1.",
             options=(maths.FADES, maths.KEEPS, maths.EXPLODES), other={"scale": 4.0, "use_tanh": False},
             other_label="scale 4, no tanh", url={"scale": 1.0, "T": 100, "use_tanh": True},
             book="v1.0's 9.4 Recurrent Neural Networks, #4"),
    Exercise("gf_power", "gradient_flow", "The book's exercise: a symmetric M has eigenvalues 1.2, 0.9 and 0.5. What "
             "is the largest |eigenvalue| of M^10?", NUMBER, maths.power_eigenvalue,
             {"eigenvalues": [1.2, 0.9, 0.5], "k": 10}, "Apply M to one of its eigenvectors ten times.",
             tolerance=0.01, other={"k": 30}, other_label="M^30",
             book="v1.0's 9.7 Backpropagation Through Time, #1.1"),
    Exercise("gf_align", "gradient_flow", "The book's exercise, continued: multiply a random vector x by that M thirty "
             "times. Which direction does M^30 x point in?", CHOICE, maths.power_alignment,
             {"eigenvalues": [1.2, 0.9, 0.5], "k": 30}, "Which component of x grows fastest?",
             options=("the eigenvector of the largest |eigenvalue|", "x's own direction", "no particular direction"),
             other={"k": 1}, other_label="M x, once", book="v1.0's 9.7 Backpropagation Through Time, #1.2"),
    Exercise("gates_rnn_delay", "gates", "In the lab's stored delay sweep (each delay trained with several seeds at the "
             "defaults otherwise), from which delay on does the plain RNN answer at chance at every longer delay?", NUMBER,
             models.rnn_chance_delay, {"cell": "rnn"}, "The lab's second chart is that sweep: each delay it tried is a point.",
             absolute=0.5, tolerance=0.0, other={"cell": "lstm"}, other_label="the LSTM (0: never within 100)"),
    Exercise("gates_forget", "gates", "An LSTM's memory cell starts at 1 and nothing moves it but its forget gate, "
             "whose bias is 3. What share of it is left after a delay of 40 steps?", NUMBER, models.forget_share,
             {"bias": 3.0, "delay": 40}, "Each step multiplies the memory cell by σ(bias).", tolerance=0.02,
             other={"bias": -3.0}, other_label="bias -3", url={"lstm_bias": 3.0, "delay": 40}),
    Exercise("gates_ratio", "gates", "In the stored comparison (delay 40), relative to what the last input gets, how "
             "much more of the gradient reaches the first input through the trained LSTM than through the trained "
             "plain RNN?", CHOICE, models.first_input_ratio, {"cell": "lstm"},
             "Through the plain RNN each step back multiplies by W_hh and tanh's slopes.",
             options=("less", "about the same", "10 to 1,000 times as much", "over 1,000 times as much"),
             other={"cell": "gru"}, other_label="the GRU"),
    Exercise("gates_params", "gates", "How many parameters does an LSTM cell with 8 inputs and 32 hidden units have "
             "(torch's layout, as the lab's cells)?", NUMBER, models.cell_parameters, {"cell": "lstm", "n": 8, "h": 32},
             "Four sets of weights: three gates and the candidate.", tolerance=0.0, other={"cell": "gru"},
             other_label="a GRU"),
    Exercise("tr_untrained", "training", "Before its first step, what perplexity does the book's character RNN "
             "(28 tokens, tiny random weights) have on its training windows?", NUMBER, models.untrained_perplexity,
             {"windows": 2000, "h": 32}, "Tiny weights: every score is about the same.", tolerance=0.05,
             other={"h": 256}, other_label="256 hidden units", needs_corpus=True, url={"preset": "book"}),
    Exercise("tr_slow", "training", "The passage run with learning rate 0.1 instead of 2: does its training "
             "perplexity get below 2 within its 60 epochs?", CHOICE, models.slow_learning_rate, {"lr": 0.1},
             "The default run needs about 20 epochs at learning rate 2.", options=YES_NO,
             other={"lr": 2.0}, other_label="learning rate 2", needs_corpus=True, url={"preset": "passage", "lr": 0.1},
             trains=True),
    Exercise("ch_held_out", "chapter", "After the passage run, is the perplexity on the text that follows the "
             "passage lower or higher than before training?", CHOICE, models.passage_held_out, {"seed": 0},
             "It only ever sees 432 characters.", options=("lower", "about the same", "higher"),
             other={"seed": 1}, other_label="seed 1", needs_corpus=True, url={"act": 4}, trains=True),
    Exercise("ch_forcing", "chapter", "Half-trained (20 epochs) on the passage, which gets more next characters "
             "right: teacher forcing or free running?", CHOICE, models.forcing_or_free, {"epochs": 20, "seed": 0},
             "In one the model reads the true text; in the other, its own guesses.",
             options=("teacher forcing", "free running", "the same"), other={"epochs": 60},
             other_label="fully trained (60 epochs)", needs_corpus=True, url={"act": 4}),
    Exercise("book_gates", "chapter", "The book's exercise, second half: how later chapters address the fading "
             "gradient (the first half is in the Gradient flow lab). An LSTM cell whose forget gate is open (bias 20) and input gate shut: what happens to a gradient sent back 100 "
             "steps along its memory cell?", CHOICE, models.gated_path,
             {"h": 16, "T": 100, "forget_bias": 20.0, "input_bias": 20.0},
             "Along the memory cell, each step back multiplies by the forget gate only.",
             options=(maths.FADES, maths.KEEPS, maths.EXPLODES), other={"forget_bias": 0.0},
             other_label="forget-gate bias 0", url={"act": 5},
             book="the newer draft's Recurrent Neural Networks section, #5, its second half (v1.0's 9.4 asks "
                  "only the first half, as #3)"),
)}


def for_lab(lab: str, act: int | None = None) -> list[Exercise]:
    """A lab's exercises; on the chapter with act, those of that act (each names its act in its url)."""
    return [e for e in BANK.values() if e.lab == lab and (act is None or e.url.get("act") == act)]
