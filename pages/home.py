"""Home: what RNN Lab is and where each lab starts."""
import streamlit as st

from ui.common import BOOK, BOOK_URL, LABS


def lab_links() -> None:
    for lab in LABS:
        col_link, col_text = st.columns([1, 3])
        col_link.page_link(lab.path, label=lab.title, icon=lab.icon)
        col_text.markdown(lab.blurb)


def main() -> None:
    st.title("🔁 RNN Lab")
    st.markdown(
        "An interactive lab for **recurrent neural networks**: move a slider and the maths redraws, "
        "sample text from a trained model, and train your own models live. "
        f"The labs follow the RNN chapter of [{BOOK.split(' (')[0]}]({BOOK_URL}) and go further: every "
        "figure is computed by the real code, which you can open under each plot.")
    st.subheader("The labs")
    lab_links()
    st.divider()
    st.caption("Tip: every lab keeps its settings in the address bar. Copy the URL to share exactly what you see.")


if __name__ == "__main__":
    main()
