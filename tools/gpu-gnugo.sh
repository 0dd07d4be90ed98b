#!/bin/bash
# Issue #38 item 4: the published 2-hour 9x9 network with more search against
# GNU Go level 10, on a lent 16-core machine (device tool), both opening seeds
# of the recipe's test at once. The games' outcomes depend on the playouts,
# not on the machine; the seconds per move on the 2-core machine are measured
# there separately. That machine has JAX and numba but no TensorFlow, Keras or
# GNU Go. Prepare here (the wheels as tools/gpu-measure.sh says, and GNU Go):
#
#   mkdir -p .gpu/bin .gpu/lib && cp /usr/games/gnugo .gpu/bin/
#   cp -L /lib/x86_64-linux-gnu/libreadline.so.8 /lib/x86_64-linux-gnu/libtinfo.so.6 .gpu/lib/
#
# then run with carry [".gpu"]:   bash tools/gpu-gnugo.sh PLAYOUTS WORKERS SECONDS
# NET=path (inside the carried tree, e.g. .gpu/) plays another network;
# TAG=name names its tournaments TAG-seedN (default g10), so that one call can
# play two searches one after the other.
# Seed 0 evaluates on the GPU (JAX, one CUDA context per game worker), seed 1
# on the CPU (JAX, one thread per worker; PLATFORMS="cuda cuda" puts both on
# the GPU): whichever is slower plays fewer games before SECONDS. A tournament
# resumes where it stopped: .gpu/TAG-seedN, where present, is the earlier
# call's output, and the rest can be played anywhere with the same --out.
set -u
PLAYOUTS=${1:-3200}
WORKERS=${2:-8}
LIMIT=${3:-480}
TAG=${TAG:-g10}
OUT=${OUT:-/tmp/gpu-out}
NET=${NET:-docs/results/nets/go9-a0.4.32-gumbel-noeyes-gen205.keras}
mkdir -p "$OUT" /tmp/pydeps
PY=${PYTHON:-python3}
$PY -m pip install --quiet --no-index --no-deps --target /tmp/pydeps .gpu/*.whl
export PYTHONPATH=$PWD:/tmp/pydeps KERAS_BACKEND=jax HARNESS_INFERENCE=keras PYTHONUNBUFFERED=1
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib
export XLA_PYTHON_CLIENT_PREALLOCATE=false OMP_NUM_THREADS=1
export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
{ nproc --all; lscpu | grep 'Model name'; nvidia-smi --query-gpu=name --format=csv,noheader; gnugo --version | head -1; } > "$OUT/machine.txt" 2>&1
read -r -a platforms <<< "${PLATFORMS:-cuda cpu}"
for seed in 0 1; do
  platform=${platforms[$seed]}
  dir=$TAG-seed$seed
  [ -d .gpu/$dir ] && cp -r .gpu/$dir /tmp/
  mkdir -p /tmp/$dir
  JAX_PLATFORMS=$platform timeout "$LIMIT" $PY -m harness tournament --board-size 9 --komi 7.5 \
      --opening-moves 4 --parallel "$WORKERS" --games-per-pair 40 --seed $seed --no-progress \
      --out /tmp/$dir "recipe=mcts:$NET@$PLAYOUTS,randomize=1" gnugo:10 \
      > /tmp/$dir/tournament.log 2>&1 &
done
wait
for seed in 0 1; do
  tar czf "$OUT/$TAG-seed$seed.tgz" -C /tmp --exclude games $TAG-seed$seed
  echo "$TAG seed $seed: $(wc -l < /tmp/$TAG-seed$seed/results.jsonl) games"
done
