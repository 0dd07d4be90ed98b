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
#   bash tools/gpu-measure.sh jax bench     # about 4 minutes
#   bash tools/gpu-measure.sh jax train     # about 6 minutes
# Everything it prints goes to $OUT too. One backend per run (jax or torch).
set -u
BACKEND=${1:-jax}
STAGE=${2:-bench}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT" /tmp/pydeps
PY=${PYTHON:-python3}
$PY -m pip install --quiet --no-index --no-deps --target /tmp/pydeps .gpu/*.whl
export PYTHONPATH=$PWD:/tmp/pydeps KERAS_BACKEND=$BACKEND HARNESS_INFERENCE=keras
H="$PY -m harness"
log=$OUT/gpu-$BACKEND-$STAGE.log
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  if [ "$STAGE" = bench ]; then
  echo "== forward positions/s by batch and training samples/s"
  timeout 200 $H bench models a0.small a0.6.64 mobile.small b6c96nbt.conv.avg transformer.small \
      --board-size 19 --batch-sizes 1,64,256,1024 --train-batch 256 --seconds 1 \
      --save "$OUT/models-19x19-$BACKEND"
  echo "== self-play on 9x9"
  timeout 60 $H bench selfplay --model a0.6.64 --board-size 9 --playouts 64 --games 256 \
      --leaves 2 --seconds 30
  else
  echo "== a 5-minute supervised run and its held-out top-1"
  timeout 420 $H train --model a0.6.64 --data .gpu/tygem-2m.h5 --run gpu-$BACKEND \
      --runs-dir /tmp/gpu-runs --budget 300 --epochs 5 --batch-size 256 --quiet
  timeout 120 $H evaluate /tmp/gpu-runs/gpu-$BACKEND/best.keras --data .gpu/tygem-2m.h5 \
      --split test --max-samples 50000 --quiet
  fi
} 2>&1 | tee "$log"
