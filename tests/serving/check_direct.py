#!/usr/bin/env python3
"""The test doubles against the real clients, without gpusched: the toy model server with
tritonclient (JSON and binary tensors, both directions) and its probes and knobs, the
OpenAI stand-in with the openai package (plain and streamed). scripts/serving_test.sh runs
it before the end-to-end test, so a failure there points at the doubles, not the gateway.

Usage: check_direct.py   (in the venv of tests/serving/requirements.txt)
"""

import concurrent.futures as cf
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clients import (Failure, check, free_port, http_get, openai_checks, start_local,  # noqa: E402
                     triton_infer, wait_until)


def model_server_checks(tmp):
    import tritonclient.http as httpclient

    port = free_port()
    unready, dead = os.path.join(tmp, "unready"), os.path.join(tmp, "dead")
    p = start_local("model_server.py", port, "--batch-ms", "20", "--item-ms", "1", "--unready-file", unready,
                    "--dead-file", dead, "--model", "toy", log=os.path.join(tmp, "model.log"))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until("the model server to listen", lambda: http_get(url + "/v2/health/live")[0] == 200, 20)
        client = httpclient.InferenceServerClient(f"127.0.0.1:{port}")
        check(client.is_server_live() and client.is_server_ready(), "server not live/ready")
        check(client.is_model_ready("toy"), "model toy not ready")
        check(not client.is_model_ready("nope"), "an unknown model reads ready")
        md = client.get_model_metadata("toy")
        check(md["name"] == "toy" and md["inputs"][0]["name"] == "INPUT0", f"metadata {md}")
        check("binary_tensor_data" in client.get_server_metadata()["extensions"], "no binary extension")
        check(client.get_model_config("toy")["name"] == "toy", "config")
        rng = np.random.default_rng(1)
        for b_in in (True, False):
            for b_out in (True, False):
                triton_infer(url, "toy", rng.standard_normal((3, 5)), b_in, b_out, client=client)
        # A request with no outputs named gets them all, binary (tritonclient's default).
        inp = httpclient.InferInput("INPUT0", [2, 4], "FP32")
        x = np.arange(8, dtype=np.float32).reshape(2, 4)
        inp.set_data_from_numpy(x)
        r = client.infer("toy", [inp], request_id="abc")
        check(np.allclose(r.as_numpy("OUTPUT1"), x.sum(1)) and r.get_response()["id"] == "abc", "default outputs")
        # Errors the client raises.
        try:
            bad = httpclient.InferInput("INPUT9", [1, 1], "FP32")
            bad.set_data_from_numpy(np.zeros((1, 1), np.float32))
            client.infer("toy", [bad])
            raise Failure("a wrong input name was accepted")
        except httpclient.InferenceServerException as e:
            check("INPUT0" in str(e), f"error text: {e}")
        # Batching pays: 16 concurrent single-row calls cost 16 x 21 ms serialized.
        t = time.time()
        with cf.ThreadPoolExecutor(16) as ex:
            list(ex.map(lambda i: triton_infer(url, "toy", np.full((1, 4), i)), range(16)))
        el = time.time() - t
        check(el >= 16 * 0.021 * 0.9, f"16 calls took {el:.3f}s: the lock does not serialize them")
        t = time.time()
        triton_infer(url, "toy", np.ones((16, 4)), client=client)
        el1 = time.time() - t
        check(el1 < 0.2, f"one batch of 16 took {el1:.3f}s")
        st = json.loads(http_get(url + "/stats")[1])
        check(st["max_batch"] == 16 and st["items"] >= 16 + 16 and st["pid"] == p.pid, f"stats {st}")
        # Probes' knobs.
        open(unready, "w").close()
        check(http_get(url + "/v2/health/ready")[0] == 503 and not client.is_model_ready("toy"), "unready file")
        check(http_get(url + "/v2/health/live")[0] == 200, "live while unready")
        os.unlink(unready)
        check(http_get(url + "/v2/health/ready")[0] == 200, "ready again")
        open(dead, "w").close()
        check(http_get(url + "/healthz")[0] == 500, "dead file")
        os.unlink(dead)
        check(http_get(url + "/healthz")[0] == 200, "alive again")
        client.close()
        # SIGTERM: the request in flight is answered, then exit 0.
        with cf.ThreadPoolExecutor(1) as ex:
            fut = ex.submit(triton_infer, url, "toy", np.ones((200, 4)))  # ~220 ms
            # Terminate once the server holds the call (its own count says so), not
            # after a guessed sleep: on a busy machine the call may not be sent yet.
            until = time.time() + 10
            while json.loads(http_get(url + "/stats")[1])["in_flight"] == 0:
                check(time.time() < until and not fut.done(), "the 200-row call never reached the server")
                time.sleep(0.005)
            p.terminate()
            fut.result(timeout=10)
        check(p.wait(10) == 0, f"exit code {p.returncode} after SIGTERM")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    # --start-delay: nothing listens for that long.
    port = free_port()
    p = start_local("model_server.py", port, "--start-delay", "1.5")
    try:
        t = time.time()
        time.sleep(0.5)
        check(http_get(f"http://127.0.0.1:{port}/v2/health/live")[0] == 0, "listening during --start-delay")
        wait_until("the delayed server", lambda: http_get(f"http://127.0.0.1:{port}/v2/health/live")[0] == 200, 20)
        check(time.time() - t >= 1.4, "start delay too short")
    finally:
        p.kill()
        p.wait()


def openai_standin_checks(tmp):
    port = free_port()
    p = start_local("openai_standin.py", port, "--model", "tiny-llm", "--token-ms", "5",
                    log=os.path.join(tmp, "openai.log"))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until("the stand-in to listen", lambda: http_get(url + "/health")[0] == 200, 20)
        openai_checks(url, "tiny-llm")
        p.terminate()
        check(p.wait(10) == 0, f"exit code {p.returncode} after SIGTERM")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def main():
    with tempfile.TemporaryDirectory(prefix="gpusched-serving-direct.") as tmp:
        for name, fn in (("model server + tritonclient", model_server_checks),
                         ("openai stand-in + openai", openai_standin_checks)):
            t = time.time()
            try:
                fn(tmp)
            except Exception:
                for log in ("model.log", "openai.log"):
                    path = os.path.join(tmp, log)
                    if os.path.exists(path):
                        sys.stderr.write(f"--- {log}\n{open(path).read()[-3000:]}\n")
                print(f"FAIL {name}", flush=True)
                raise
            print(f"ok   {name} ({time.time() - t:.1f}s)", flush=True)


if __name__ == "__main__":
    main()
