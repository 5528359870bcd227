# RNN Lab in a container. CPU build of PyTorch by default; for an NVIDIA GPU host build with
#   --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128
# and run with --gpus all (see README). Runs are kept in /runs and the corpus is read from /data: mount both.
FROM python:3.11-slim

# Standard pip settings, so the image also builds behind a package mirror (they replace nothing below).
ARG PIP_INDEX_URL
ARG PIP_EXTRA_INDEX_URL
ARG PIP_FIND_LINKS
ARG PIP_TRUSTED_HOST
# Where PyTorch's wheels come from, added to the indexes above: its CPU build by default (2.13.0+cpu outranks
# PyPI's CUDA build of 2.13.0), a CUDA build for GPUs, or empty to take torch from the indexes above alone.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
# --build-arg WITH_RAY=1 adds Ray (requirements-ray.txt): for a Ray head or worker node, or an app that sends
# its runs to a Ray cluster (deploy/compose.ray.yaml).
ARG WITH_RAY

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    RNNLAB_CACHE_DIR=/home/rnnlab/.cache/rnnlab \
    RNNLAB_RUNS_DIR=/runs \
    RNNLAB_CORPUS=/data

# Chinese glyphs (issue 66) for anything that draws the pages inside the container: a headless browser's
# screenshot or browser test run there (a learner's own browser uses its own fonts).
RUN apt-get update && apt-get install -y --no-install-recommends fonts-noto-cjk && rm -rf /var/lib/apt/lists/*

# /runs: the run store (mount a volume there to keep runs across restarts; compose shares one between its app
# processes); /data: a folder that may hold timemachine.txt (else the app downloads it into its cache).
RUN useradd --create-home --uid 10001 rnnlab && mkdir -p /runs /data /home/rnnlab/.cache/rnnlab \
    && chown rnnlab:rnnlab /runs /home/rnnlab/.cache /home/rnnlab/.cache/rnnlab
WORKDIR /app

COPY requirements.txt requirements-ray.txt ./
RUN PIP_EXTRA_INDEX_URL="${PIP_EXTRA_INDEX_URL}${TORCH_INDEX_URL:+ $TORCH_INDEX_URL}" \
    sh -c 'pip install -r requirements.txt && if [ -n "$WITH_RAY" ]; then pip install -r requirements-ray.txt; fi'

COPY --chown=rnnlab:rnnlab . .
# The app's bytecode, compiled once here: PYTHONDONTWRITEBYTECODE keeps Python from saving it at run time, and
# every training worker would otherwise compile core/ again as it starts (about 0.1 s each).
RUN python -m compileall -q app.py core ui pages
USER rnnlab

EXPOSE 8501
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).read() == b'ok' else 1)"

CMD ["python", "-m", "ui.serve", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true"]
