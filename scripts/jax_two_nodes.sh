#!/usr/bin/env bash
# A real framework across two agents: a server and two agents (one fake GPU each) on
# loopback, and a 2-node gang running jax.distributed on JAX's CPU backend. Each process
# reports jax.process_count()/process_index(), gathers every process's value and sums
# an array sharded across both processes (a cross-process collective over gloo).
#
# Not run in CI: it needs jax[cpu] (about 100 MB from PyPI):
#   python3 -m venv /work/venv-jax && /work/venv-jax/bin/pip install 'jax[cpu]'
#   cargo build --release
#   JAX_PYTHON=/work/venv-jax/bin/python scripts/jax_two_nodes.sh
# Exit 0 only if the job succeeded and both parts printed the expected sum.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${GPUSCHED_BIN:-${CARGO_TARGET_DIR:-target}/release/gpusched}"
PY="${JAX_PYTHON:-/work/venv-jax/bin/python}"
[ -x "$BIN" ] || { echo "no gpusched binary at $BIN: cargo build --release (or set GPUSCHED_BIN)" >&2; exit 1; }
"$PY" -c 'import jax' 2>/dev/null || { echo "$PY cannot import jax: pip install 'jax[cpu]' into it (or set JAX_PYTHON)" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$BIN" server --listen 127.0.0.1:0 --data-dir "$work/data" 2>"$work/server.log" &
pids+=($!)
for _ in $(seq 200); do grep -q "listening on" "$work/server.log" 2>/dev/null && break; sleep 0.1; done
url="$(grep -o 'listening on [^ ,]*' "$work/server.log" | head -1 | cut -d' ' -f3)"
[ -n "$url" ] || { cat "$work/server.log" >&2; echo "the server did not start" >&2; exit 1; }
export GPUSCHED_SERVER="unix:$work/data/gpusched.sock"

for n in n1 n2; do
  "$BIN" agent --server "$url" --name "$n" --state-dir "$work/$n" \
    --join-token-file "$work/data/join-token" --allow-root-jobs \
    --gpus 1 --gpu-backend fake 2>"$work/$n.log" &
  pids+=($!)
done
for _ in $(seq 300); do
  [ "$("$BIN" nodes --json 2>/dev/null | grep -c '"state": "online"')" = 2 ] && break
  sleep 0.1
done

cat >"$work/jax_gang.py" <<'EOF'
import os
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(
    coordinator_address=f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
    num_processes=int(os.environ["NNODES"]),
    process_id=int(os.environ["NODE_RANK"]),
)
me = jax.process_index()
print(f"NODE_RANK={os.environ['NODE_RANK']} MASTER={os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']} "
      f"process_count={jax.process_count()} process_index={me} devices={jax.device_count()}", flush=True)
gathered = multihost_utils.process_allgather(jnp.array([me + 1.0]))
print("allgather:", gathered.ravel().tolist(), flush=True)
# One element per process, sharded over the processes' devices; the jitted sum runs
# across both processes.
mesh = Mesh(np.array(jax.devices()), ("p",))
local = [jax.device_put(jnp.array([me + 1.0]), jax.local_devices()[0])]
x = jax.make_array_from_single_device_arrays((jax.process_count(),), NamedSharding(mesh, P("p")), local)
total = jax.jit(jnp.sum, out_shardings=NamedSharding(mesh, P()))(x)
print("psum:", float(total.addressable_data(0)), flush=True)
EOF

echo "\$ gpusched submit --nodes 2 --gpus-per-node 1 -t 5m -- $PY jax_gang.py"
id="$("$BIN" submit --json --nodes 2 --gpus-per-node 1 -t 5m --cwd "$work" -- "$PY" "$work/jax_gang.py" | grep -o '[0-9]\+' | head -1)"
"$BIN" wait "$id" >/dev/null || true
echo "\$ gpusched show $id"
"$BIN" show "$id"
ok=0
for n in n1 n2; do
  echo "\$ gpusched logs $id --node $n"
  out="$("$BIN" logs "$id" --node "$n")"
  echo "$out"
  grep -q "^psum: 3.0$" <<<"$out" || ok=1
done
state="$("$BIN" show "$id" --json | grep -o '"state": "[a-z_]*"' | head -1)"
[ "$state" = '"state": "succeeded"' ] || { echo "job $id: $state" >&2; "$BIN" logs "$id" --stderr >&2 || true; exit 1; }
exit $ok
