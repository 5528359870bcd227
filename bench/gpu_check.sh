#!/usr/bin/env bash
# Everything to check on a lent GPU machine, in one go: the GPU tests (tests/test_gpu.py, skipped elsewhere),
# bench/gpu.py (the presets on the GPU against the same machine's CPU; the book preset over seeds), the book
# preset's profile on the GPU, and, where d2l is importable, the book preset against d2l's concise run, both on
# the GPU. Logs go to $OUT (or bench/out). Needs the corpus: set RNNLAB_CORPUS to a local copy.
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
timeout "${GPU_PROFILE_S:-150}" python3 bench/train_profile.py --device cuda --repeats 2 2>&1 \
    | tee "$out/gpu_profile.log"
if python3 -c "import d2l.torch" >/dev/null 2>&1; then
    timeout "${GPU_D2L_S:-240}" python3 bench/train_speed.py --d2l python3 --device cuda --rounds 3 2>&1 \
        | tee "$out/gpu_d2l.log"
else
    echo "d2l is not importable here: the comparison with d2l's concise run is left out"
fi
