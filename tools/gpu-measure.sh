#!/bin/bash
# Issue #40 item 3: the GPU table, in one run on a lent GPU machine (device
# tool). That machine has JAX, PyTorch, numba, h5py and the rest with CUDA,
# Python 3.12, no TensorFlow, no Keras, and no network. Prepare here:
#
#   mkdir -p .gpu && echo /.gpu/ >> .git/info/exclude
#   .venv/bin/pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --platform manylinux_2_28_x86_64 -d .gpu keras==3.15.1 namex optree
#   .venv/bin/harness ingest ../shared/data/tygem/Kifu/2011-05.zip \
#       ../shared/data/tygem/Kifu/2011-06.zip -o .gpu/tygem-2m.h5 \
#       --test-source 2011-06 --workers 2
#
# then run it there with carry [".gpu"], in two calls that each fit the
# device's 10-minute command limit:
#   bash tools/gpu-measure.sh jax bench     # about 5 minutes
#   bash tools/gpu-measure.sh jax train     # about 4.5 minutes
# and, for what those two left unmeasured (the jitted training rows, the
# PyTorch backend, self-play after issue #38's search changes), one call
# that needs only the wheels:
#   bash tools/gpu-measure.sh jax more      # about 6 minutes, both backends
# (on an H200, 2026-11-27, the first call also starts the machine: about
# 15 minutes of device time for both, all a session gets; docs/results.md,
# "On an NVIDIA H200 with JAX", has what they printed.)
# Everything it prints goes to $OUT too. One backend per run (jax or torch).
set -u
BACKEND=${1:-jax}
STAGE=${2:-bench}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT" /tmp/pydeps
PY=${PYTHON:-python3}
$PY -m pip install --quiet --no-index --no-deps --target /tmp/pydeps .gpu/*.whl
export PYTHONPATH=$PWD:/tmp/pydeps KERAS_BACKEND=$BACKEND HARNESS_INFERENCE=keras PYTHONUNBUFFERED=1
H="$PY -m harness"
log=$OUT/gpu-$BACKEND-$STAGE.log
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  $PY -c "import jax, keras; print('jax', jax.__version__, jax.devices(), 'keras', keras.__version__)"
  if [ "$STAGE" = bench ]; then
  echo "== forward positions/s by batch and training samples/s"
  timeout 230 $H bench models a0.small a0.6.64 mobile.small b6c96nbt.conv.avg transformer.small \
      --board-size 19 --batch-sizes 1,64,256,1024 --train-batch 256 --seconds 1 \
      --save "$OUT/models-19x19-$BACKEND"
  echo "== self-play on 9x9"
  timeout 100 $H bench selfplay --model a0.6.64 --board-size 9 --playouts 32 --games 128 \
      --leaves 2 --seconds 20 --uct-seconds 0
  elif [ "$STAGE" = more ]; then
  for backend in jax torch; do
    echo "== $backend: forward positions/s and training samples/s, 19x19"
    KERAS_BACKEND=$backend timeout 160 $H bench models a0.6.64 b6c96nbt.conv.avg \
        --board-size 19 --batch-sizes 256,1024 --train-batch 256 --seconds 2 \
        --save "$OUT/models-19x19-more-$backend"
    echo "== $backend: self-play on 9x9"
    KERAS_BACKEND=$backend timeout 90 $H bench selfplay --model a0.6.64 --board-size 9 \
        --playouts 32 --games 128 --leaves 2 --seconds 20 --uct-seconds 0
  done
  else
  echo "== a 200-s supervised run and its held-out top-1"
  timeout 290 $H train --model a0.6.64 --data .gpu/tygem-2m.h5 --run gpu-$BACKEND \
      --runs-dir /tmp/gpu-runs --budget 200 --epochs 5 --batch-size 256 --val-samples 16384 --quiet
  timeout 100 $H evaluate /tmp/gpu-runs/gpu-$BACKEND/best.keras --data .gpu/tygem-2m.h5 \
      --split test --max-samples 30000 --quiet
  fi
} 2>&1 | tee "$log"
