#!/bin/bash
# Issue #63 item 4: self-play on the card, the device path (mctx over the JAX
# rules) beside today's host path, in one run on a lent GPU machine (device
# tool). That machine has JAX with CUDA, numba and h5py, Python 3.12, and no
# TensorFlow, Keras, mctx or network. Prepare here:
#
#   mkdir -p .gpu && grep -qx /.gpu/ .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude
#   .venv/bin/pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --platform manylinux_2_28_x86_64 -d .gpu keras==3.15.1 namex optree \
#       mctx==0.0.71 chex==0.1.92 toolz absl-py
#
# then run it there with carry [".gpu"]:
#   bash tools/gpu-selfplay.sh speed      # about 6 minutes: the table of item 4
#   bash tools/gpu-selfplay.sh agree      # about 1 minute: the two searches agree on the card
# Each bench has its own timeout so that one slow row cannot take the rest
# with it; everything it prints goes to $OUT too.
set -u
STAGE=${1:-speed}
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT" /tmp/pydeps
PY=${PYTHON:-python3}
$PY -m pip install --quiet --no-index --no-deps --target /tmp/pydeps .gpu/*.whl
export PYTHONPATH=$PWD:/tmp/pydeps KERAS_BACKEND=jax HARNESS_INFERENCE=keras PYTHONUNBUFFERED=1
H="$PY -m harness"
log=$OUT/gpu-selfplay-$STAGE.log
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  $PY -c "import jax, keras, mctx; print('jax', jax.__version__, jax.devices(), 'keras', keras.__version__)"
  if [ "$STAGE" = speed ]; then
  # Today's path as issue #40 measured it (its 0.26 of the bare network), then
  # both paths playing the same batches to their ends, the bare network beside.
  echo "== host path, bench selfplay (the issue's 944 moves/s row)"
  timeout 90 $H bench selfplay --model a0.6.64 --board-size 9 --playouts 32 --games 128 \
      --leaves 2 --seconds 20 --uct-seconds 0
  for model in a0.6.64 b6c96nbt.conv.avg; do
    for playouts in 32 64; do
      echo "== $model 9x9 $playouts playouts: device, 1024 games at once"
      timeout 100 $H bench device-selfplay --model $model --board-size 9 --playouts $playouts \
          --games 1024 --paths device --save "$OUT/device-9x9-$model-$playouts"
    done
    echo "== $model 19x19 32 playouts: device, 256 games at once"
    timeout 120 $H bench device-selfplay --model $model --board-size 19 --playouts 32 \
        --games 256 --paths device --save "$OUT/device-19x19-$model-32"
  done
  echo "== both paths on the same 128 games, 9x9, 32 playouts"
  timeout 120 $H bench device-selfplay --model a0.6.64 --board-size 9 --playouts 32 \
      --games 128 --save "$OUT/both-9x9-a0.6.64-32"
  else
  for root in gumbel puct; do
    timeout 60 $H bench device-selfplay --agreement --model a0.6.64 --board-size 9 \
        --playouts 32 --games 4 --root $root --save "$OUT/agree-$root"
  done
  fi
} 2>&1 | grep -v -E "^(W|I)0000|Warning" | tee "$log"
