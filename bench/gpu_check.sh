#!/usr/bin/env bash
# Everything to check on a lent GPU machine, in one go: the GPU tests (tests/test_gpu.py, skipped elsewhere)
# and bench/gpu.py. Logs go to $OUT (or bench/out). Needs the corpus: set RNNLAB_CORPUS to a local copy.
#     RNNLAB_CORPUS=/path/to/timemachine.txt bash bench/gpu_check.sh
set -u
out=${OUT:-bench/out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
nvidia-smi -L
python3 -c "import sys, torch; print(sys.version.split()[0], 'torch', torch.__version__, 'CUDA', torch.version.cuda,
      'cuDNN', torch.backends.cudnn.version(), torch.cuda.get_device_name())"
timeout "${GPU_TESTS_S:-200}" python3 -m pytest -q -rs -p no:cacheprovider tests/test_gpu.py 2>&1 \
    | tee "$out/gpu_tests.log"
timeout "${GPU_BENCH_S:-300}" python3 bench/gpu.py --seeds "${GPU_SEEDS:-8}" 2>&1 | tee "$out/gpu_bench.log"
