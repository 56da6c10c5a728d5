#!/usr/bin/env python3
"""A toy model server speaking the Open Inference Protocol (KServe v2 / Triton HTTP/REST).

The test double of a GPU model server for gpusched's services (tests/serving/e2e.py) and
the model both systems run in scripts/bench_serving.py. Standard library plus numpy,
Python 3.9 or later.

One model (default `toy`, or `--model` / `$MODEL_NAME`):
  input   INPUT0   FP32 [N, D]   (N: the batch dimension; any D)
  outputs OUTPUT0  FP32 [N, D]   INPUT0 * 2 + 1
          OUTPUT1  FP32 [N]      the row sums of INPUT0
Each call costs `--batch-ms` plus `--item-ms` per row (a sleep) under one lock, so calls
run one at a time like kernels on one GPU and a batch of 8 costs far less than 8 calls.

Routes:
  GET  /v2/health/live, /v2/health/ready, /v2, /v2/models/{m}[/versions/{v}],
       /v2/models/{m}[/versions/{v}]/ready, /v2/models/{m}/config
  POST /v2/models/{m}[/versions/{v}]/infer   JSON tensors, and Triton's binary tensor
       extension (`Inference-Header-Content-Length`, `binary_data_size`, binary outputs
       when an output asks `binary_data` or the request `binary_data_output`)
  GET  /healthz   liveness (fails while `--dead-file` exists)
  GET  /stats     {"requests", "batches", "items", "max_batch", "sizes", "pid", ...}

Test knobs: `--unready-file F` (not ready while F exists), `--dead-file F` (/healthz
answers 500 while F exists), `--start-delay S` (sleep S seconds before listening),
`--fail-file F` (inference answers 500 while F exists); `{job}` in these paths is
replaced by `$GPUSCHED_JOB_ID`, so a test can aim at one replica of a service.

Listens on `--host` (default 0.0.0.0) port `--port` (default `$PORT`). SIGTERM: stop
accepting, let the requests in flight finish (at most `--drain-s`), exit 0.
"""

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

# Triton's datatype names and numpy's.
DTYPES = {
    "BOOL": np.bool_,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "FP16": np.float16,
    "FP32": np.float32,
    "FP64": np.float64,
}


class BadRequest(Exception):
    pass


class ToyModel:
    """The model: numpy arithmetic plus a sleep standing in for GPU time.

    Shared with scripts/bench_serving.py, so gpusched's replicas and Ray Serve's run the
    same code at the same cost."""

    def __init__(self, name="toy", batch_ms=20.0, item_ms=1.0):
        self.name = name
        self.batch_ms = float(batch_ms)
        self.item_ms = float(item_ms)
        self.gpu = threading.Lock()  # one "GPU": calls serialize
        self.stats_lock = threading.Lock()
        self.batches = 0
        self.items = 0
        self.max_batch = 0
        self.sizes = {}

    def cost_s(self, n):
        return (self.batch_ms + self.item_ms * n) / 1000.0

    def compute(self, x):
        """x: FP32 [N, D] -> (OUTPUT0 [N, D], OUTPUT1 [N]). Pure arithmetic, no cost."""
        x = np.asarray(x, dtype=np.float32)
        return (x * np.float32(2) + np.float32(1)).astype(np.float32), x.sum(axis=1, dtype=np.float32)

    def __call__(self, x):
        n = int(x.shape[0])
        with self.gpu:
            out = self.compute(x)
            time.sleep(self.cost_s(n))
        with self.stats_lock:
            self.batches += 1
            self.items += n
            self.max_batch = max(self.max_batch, n)
            self.sizes[n] = self.sizes.get(n, 0) + 1
        return out


def decode_tensor(spec, binary, offset):
    """One input of a request -> (numpy array, new offset into the binary part)."""
    name = spec.get("name")
    dtype_name = spec.get("datatype")
    shape = spec.get("shape")
    if not isinstance(name, str) or dtype_name not in DTYPES or not isinstance(shape, list):
        raise BadRequest("each input needs a name, a datatype (FP32, ...) and a shape")
    if not all(isinstance(d, int) and d >= 0 for d in shape):
        raise BadRequest(f"input {name}: shape {shape} must be non-negative integers")
    dtype = DTYPES[dtype_name]
    count = int(np.prod(shape)) if shape else 1
    params = spec.get("parameters") or {}
    size = params.get("binary_data_size")
    if size is not None:
        if not isinstance(size, int) or size < 0 or offset + size > len(binary):
            raise BadRequest(f"input {name}: binary_data_size {size} runs past the body")
        raw = binary[offset:offset + size]
        offset += size
        if size != count * np.dtype(dtype).itemsize:
            raise BadRequest(
                f"input {name}: {size} bytes for shape {shape} of {dtype_name} "
                f"(expected {count * np.dtype(dtype).itemsize})")
        arr = np.frombuffer(raw, dtype=dtype).reshape(shape)
    else:
        if "data" not in spec:
            raise BadRequest(f"input {name}: no data and no binary_data_size")
        try:
            arr = np.array(spec["data"], dtype=dtype).reshape(shape)
        except (ValueError, TypeError) as e:
            raise BadRequest(f"input {name}: data does not fit shape {shape}: {e}")
    return name, arr, offset


def triton_dtype(arr):
    for k, v in DTYPES.items():
        if np.dtype(v) == arr.dtype:
            return k
    raise ValueError(arr.dtype)


class Server:
    def __init__(self, args):
        self.args = args
        self.model = ToyModel(args.model, args.batch_ms, args.item_ms)
        self.requests = 0
        self.in_flight = 0
        self.failed = 0
        self.lock = threading.Lock()
        self.started = time.time()
        self.stopping = False
        self.replica = os.environ.get("GPUSCHED_JOB_ID") or f"pid{os.getpid()}"

    def exists(self, path):
        return bool(path) and os.path.exists(path)

    def ready(self):
        return not self.stopping and not self.exists(self.args.unready_file)

    def stats(self):
        m = self.model
        with m.stats_lock:
            return {
                "model": m.name,
                "pid": os.getpid(),
                "replica": self.replica,
                "port": self.args.port,
                "requests": self.requests,
                "failed": self.failed,
                "in_flight": self.in_flight,
                "batches": m.batches,
                "items": m.items,
                "max_batch": m.max_batch,
                "sizes": {str(k): v for k, v in sorted(m.sizes.items())},
                "uptime_s": round(time.time() - self.started, 3),
            }

    def metadata(self):
        return {
            "name": self.model.name,
            "versions": ["1"],
            "platform": "numpy",
            "inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [-1, -1]}],
            "outputs": [
                {"name": "OUTPUT0", "datatype": "FP32", "shape": [-1, -1]},
                {"name": "OUTPUT1", "datatype": "FP32", "shape": [-1]},
            ],
        }

    def config(self):
        return {
            "name": self.model.name,
            "platform": "numpy",
            "max_batch_size": self.args.max_batch_size,
            "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [-1]}],
            "output": [
                {"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [-1]},
                {"name": "OUTPUT1", "data_type": "TYPE_FP32", "dims": [1]},
            ],
        }

    def infer(self, header, binary):
        """A parsed request -> (response JSON, list of binary output blobs)."""
        if not isinstance(header, dict):
            raise BadRequest("the request must be a JSON object")
        inputs = header.get("inputs")
        if not isinstance(inputs, list) or not inputs:
            raise BadRequest("the request has no inputs")
        offset = 0
        tensors = {}
        for spec in inputs:
            if not isinstance(spec, dict):
                raise BadRequest("each input must be an object")
            name, arr, offset = decode_tensor(spec, binary, offset)
            tensors[name] = arr
        if "INPUT0" not in tensors:
            raise BadRequest(f"model {self.model.name} takes INPUT0; got {sorted(tensors)}")
        x = tensors["INPUT0"]
        if x.ndim != 2:
            raise BadRequest(f"INPUT0 must be [N, D]; got shape {list(x.shape)}")
        if self.args.max_batch_size and x.shape[0] > self.args.max_batch_size:
            raise BadRequest(
                f"batch of {x.shape[0]} is above the model's max_batch_size {self.args.max_batch_size}")
        out0, out1 = self.model(x.astype(np.float32, copy=False))
        produced = {"OUTPUT0": out0, "OUTPUT1": out1}
        params = header.get("parameters") or {}
        default_binary = bool(params.get("binary_data_output", False))
        asked = header.get("outputs")
        if asked is None:
            asked = [{"name": n} for n in produced]
        outputs, blobs = [], []
        for o in asked:
            if not isinstance(o, dict) or o.get("name") not in produced:
                raise BadRequest(f"unknown output {o!r}; the model has {sorted(produced)}")
            arr = produced[o["name"]]
            entry = {"name": o["name"], "datatype": triton_dtype(arr), "shape": list(arr.shape)}
            op = o.get("parameters") or {}
            if op.get("binary_data", default_binary):
                raw = np.ascontiguousarray(arr).tobytes()
                entry["parameters"] = {"binary_data_size": len(raw)}
                blobs.append(raw)
            else:
                entry["data"] = arr.flatten().tolist()
            outputs.append(entry)
        resp = {"model_name": self.model.name, "model_version": "1", "outputs": outputs,
                "parameters": {"replica": self.replica}}
        if "id" in header:
            resp["id"] = header["id"]
        return resp, blobs


def make_handler(srv):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "gpusched-toy-model/1"

        def log_message(self, fmt, *args):
            if srv.args.verbose:
                sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % args))

        def send(self, code, body=b"", ctype="application/json", headers=None):
            if isinstance(body, (dict, list)):
                body = json.dumps(body, separators=(",", ":")).encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def error(self, code, msg):
            self.send(code, {"error": msg})

        def model_path(self, parts):
            """['v2','models',m,('versions',v)?, rest...] -> (model, rest) or None."""
            if len(parts) < 3 or parts[0] != "v2" or parts[1] != "models":
                return None
            model, rest = parts[2], parts[3:]
            if len(rest) >= 2 and rest[0] == "versions":
                if rest[1] != "1":
                    return model, ["missing-version"]
                rest = rest[2:]
            return model, rest

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            parts = [p for p in path.split("/") if p]
            if path == "/v2/health/live":
                return self.send(200, b"", "text/plain")
            if path == "/v2/health/ready":
                return self.send(200 if srv.ready() else 503, b"", "text/plain")
            if path == "/healthz":
                if srv.exists(srv.args.dead_file):
                    return self.error(500, "dead (the --dead-file exists)")
                return self.send(200, b"ok", "text/plain")
            if path == "/stats":
                return self.send(200, srv.stats())
            if path in ("/v2", "/v2/"):
                return self.send(200, {"name": "gpusched-toy-model", "version": "1",
                                       "extensions": ["binary_tensor_data", "model_configuration"]})
            mp = self.model_path(parts)
            if mp is not None:
                model, rest = mp
                if model != srv.model.name or rest == ["missing-version"]:
                    return self.error(404, f"no model {model} (this server has {srv.model.name}, version 1)")
                if rest == []:
                    return self.send(200, srv.metadata())
                if rest == ["ready"]:
                    return self.send(200 if srv.ready() else 503, b"", "text/plain")
                if rest == ["config"]:
                    return self.send(200, srv.config())
            return self.error(404, f"no route GET {path}")

        do_HEAD = do_GET

        def do_POST(self):
            path = self.path.split("?", 1)[0]
            parts = [p for p in path.split("/") if p]
            length = self.headers.get("Content-Length")
            if length is None:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    body = self.read_chunked()
                else:
                    return self.error(411, "Content-Length required")
            else:
                body = self.rfile.read(int(length))
            mp = self.model_path(parts)
            if mp is None or mp[1] != ["infer"]:
                return self.error(404, f"no route POST {path}")
            if mp[0] != srv.model.name:
                return self.error(404, f"no model {mp[0]} (this server has {srv.model.name}, version 1)")
            with srv.lock:
                srv.requests += 1
                srv.in_flight += 1
            # In flight until the answer is written: SIGTERM's drain waits on this count,
            # so a call is never cut off between computing and sending its answer.
            try:
                return self.answer_infer(body)
            finally:
                with srv.lock:
                    srv.in_flight -= 1

        def answer_infer(self, body):
            try:
                if srv.exists(srv.args.fail_file):
                    raise RuntimeError("failing on purpose (the --fail-file exists)")
                hlen = self.headers.get("Inference-Header-Content-Length")
                if hlen is not None:
                    hlen = int(hlen)
                    if hlen < 0 or hlen > len(body):
                        raise BadRequest("Inference-Header-Content-Length is past the body")
                    header, binary = json.loads(body[:hlen]), body[hlen:]
                else:
                    header, binary = json.loads(body), b""
                resp, blobs = srv.infer(header, binary)
            except BadRequest as e:
                with srv.lock:
                    srv.failed += 1
                return self.error(400, str(e))
            except (ValueError, UnicodeDecodeError) as e:
                with srv.lock:
                    srv.failed += 1
                return self.error(400, f"the request is not valid JSON: {e}")
            except Exception as e:  # noqa: BLE001 - the test double answers every error
                with srv.lock:
                    srv.failed += 1
                return self.error(500, str(e))
            js = json.dumps(resp, separators=(",", ":")).encode()
            if blobs:
                return self.send(200, js + b"".join(blobs), "application/octet-stream",
                                 {"Inference-Header-Content-Length": str(len(js))})
            return self.send(200, js)

        def read_chunked(self):
            out = bytearray()
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()

    return Handler


class Listener(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().server_bind()


def parse_args(argv=None):
    env = os.environ
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=env.get("MODEL_NAME", "toy"))
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=int(env.get("PORT", "8000")))
    p.add_argument("--batch-ms", type=float, default=float(env.get("TOY_BATCH_MS", "20")),
                   help="fixed cost of one call (ms)")
    p.add_argument("--item-ms", type=float, default=float(env.get("TOY_ITEM_MS", "1")),
                   help="cost of each row of a call (ms)")
    p.add_argument("--max-batch-size", type=int, default=0, help="refuse larger calls (0: any)")
    p.add_argument("--unready-file")
    p.add_argument("--dead-file")
    p.add_argument("--fail-file")
    p.add_argument("--start-delay", type=float, default=float(env.get("TOY_START_DELAY", "0")))
    p.add_argument("--drain-s", type=float, default=10.0)
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)
    # `{job}` in a knob's path is the replica's job id, so a test can aim at one replica.
    job = env.get("GPUSCHED_JOB_ID", "local")
    for k in ("unready_file", "dead_file", "fail_file"):
        if getattr(args, k):
            setattr(args, k, getattr(args, k).replace("{job}", job))
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.start_delay > 0:
        time.sleep(args.start_delay)
    srv = Server(args)
    httpd = Listener((args.host, args.port), make_handler(srv))
    args.port = httpd.server_address[1]
    done = threading.Event()

    def stop(signum, frame):
        srv.stopping = True
        done.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    t.start()
    print(f"model {args.model} listening on {args.host}:{args.port} (pid {os.getpid()}, "
          f"batch {args.batch_ms} ms + {args.item_ms} ms/item)", flush=True)
    done.wait()
    httpd.shutdown()
    httpd.server_close()  # no new connections are accepted
    deadline = time.time() + args.drain_s
    while srv.in_flight > 0 and time.time() < deadline:
        time.sleep(0.02)
    print(f"stopping: {json.dumps(srv.stats())}", flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
