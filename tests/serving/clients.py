"""The real clients (tritonclient's HTTP client, the openai package) as the tests use them,
with the checks of what the test doubles answer. Shared by check_direct.py (the doubles
alone) and e2e.py (through gpusched's gateway)."""

import http.client
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


class Failure(AssertionError):
    pass


class Fatal(Failure):
    """A failure no waiting can mend (a process died): wait_until gives up at once."""


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(url, timeout=5.0):
    """(status, body bytes); status 0 when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (OSError, ValueError):
        return 0, b""


def wait_until(what, fn, timeout, interval=0.2):
    """Calls fn until it returns something truthy; that value, or Failure after timeout."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            v = fn()
            if v:
                return v
            last = v
        except Fatal:
            raise
        except Exception as e:  # noqa: BLE001 - reported if it never succeeds
            last = e
        time.sleep(interval)
    raise Failure(f"gave up after {timeout:.0f}s waiting for {what} (last: {last!r})")


def start_local(script, port, *args, log=None):
    """A test double on a port of this machine, as a child process."""
    cmd = [sys.executable, os.path.join(HERE, script), "--port", str(port), "--host", "127.0.0.1", *args]
    out = open(log, "ab") if log else subprocess.DEVNULL
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    return p


def expected(x):
    x = np.asarray(x, dtype=np.float32)
    return x * 2 + 1, x.sum(axis=1)


def triton_infer(url, model, x, binary_in=True, binary_out=True, client=None, timeout=60.0,
                 request_id="", headers=None):
    """One inference with tritonclient.http; returns (OUTPUT0, OUTPUT1) and checks them."""
    import tritonclient.http as httpclient

    own = client is None
    if own:
        host = url.split("://", 1)[-1].rstrip("/")
        client = httpclient.InferenceServerClient(host, connection_timeout=timeout, network_timeout=timeout)
    try:
        x = np.asarray(x, dtype=np.float32)
        inp = httpclient.InferInput("INPUT0", list(x.shape), "FP32")
        inp.set_data_from_numpy(x, binary_data=binary_in)
        outs = [httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary_out),
                httpclient.InferRequestedOutput("OUTPUT1", binary_data=binary_out)]
        res = client.infer(model, [inp], outputs=outs, request_id=request_id, headers=headers)
        o0, o1 = res.as_numpy("OUTPUT0"), res.as_numpy("OUTPUT1")
        e0, e1 = expected(x)
        check(o0 is not None and o0.shape == e0.shape and np.allclose(o0, e0),
              f"OUTPUT0 of {x.shape} is wrong: got {None if o0 is None else o0.shape}")
        check(o1 is not None and o1.shape == e1.shape and np.allclose(o1, e1, rtol=1e-4),
              f"OUTPUT1 of {x.shape} is wrong: got {o1!r} expected {e1!r}")
        return o0, o1
    finally:
        if own:
            client.close()


def openai_client(base_url, timeout=60.0, max_retries=0):
    import openai

    return openai.OpenAI(base_url=base_url.rstrip("/") + "/v1", api_key=os.environ.get("OPENAI_API_KEY", "unused"),
                         timeout=timeout, max_retries=max_retries)


def openai_checks(base_url, model, timeout=60.0):
    """Models list, a completion, a chat, and both streamed: what the stand-in answers."""
    c = openai_client(base_url, timeout)
    ids = [m.id for m in c.models.list().data]
    check(model in ids, f"/v1/models lists {ids}, not {model}")
    r = c.completions.create(model=model, prompt="hello there", max_tokens=16)
    want = f"[{model}] you said: hello there"
    check(r.choices[0].text == want, f"completion: {r.choices[0].text!r} != {want!r}")
    check(r.choices[0].finish_reason == "stop", f"completion finish_reason {r.choices[0].finish_reason}")
    r = c.chat.completions.create(model=model, messages=[{"role": "system", "content": "be brief"},
                                                         {"role": "user", "content": "what is two plus two"}])
    want = f"[{model}] you said: what is two plus two"
    check(r.choices[0].message.content == want, f"chat: {r.choices[0].message.content!r} != {want!r}")
    r = c.chat.completions.create(model=model, messages=[{"role": "user", "content": "a b c d e f"}], max_tokens=3)
    check(r.choices[0].message.content == f"[{model}] you said:" and r.choices[0].finish_reason == "length",
          f"max_tokens 3: {r.choices[0].message.content!r} {r.choices[0].finish_reason}")
    # Streaming: chunks one word each, joined they are the answer.
    stream = c.chat.completions.create(model=model, messages=[{"role": "user", "content": "stream me seven words please now"}],
                                       stream=True)
    pieces, finish = [], None
    for ch in stream:
        if ch.choices:
            pieces.append(ch.choices[0].delta.content or "")
            finish = ch.choices[0].finish_reason or finish
    text = "".join(pieces)
    want = f"[{model}] you said: stream me seven words please now"
    check(text == want, f"streamed chat: {text!r} != {want!r}")
    check(len([p for p in pieces if p]) == len(want.split()), f"streamed chat came in {len(pieces)} chunks: {pieces}")
    check(finish == "stop", f"streamed chat finish_reason {finish}")
    stream = c.completions.create(model=model, prompt="one two three", stream=True)
    text = "".join(ch.choices[0].text for ch in stream if ch.choices)
    check(text == f"[{model}] you said: one two three", f"streamed completion: {text!r}")
    # An unknown model is a 404 the client raises as NotFoundError.
    import openai

    try:
        c.completions.create(model="no-such-model", prompt="x")
        raise Failure("a completion for an unknown model succeeded")
    except openai.NotFoundError:
        pass
    c.close()


class UnixAPI:
    """gpusched's HTTP API over its Unix socket (the local user, no token)."""

    def __init__(self, sock_path, timeout=30.0):
        self.path = sock_path
        self.timeout = timeout

    def call(self, method, path, obj=None, ok=(200, 201, 202, 204)):
        """(status, parsed body); raises Failure on a status outside `ok`."""
        path_ = self.path

        class Conn(http.client.HTTPConnection):
            def connect(s):
                s.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.sock.settimeout(self.timeout)
                s.sock.connect(path_)

        c = Conn("localhost", timeout=self.timeout)
        try:
            body = json.dumps(obj).encode() if obj is not None else None
            c.request(method, path, body=body, headers={"Content-Type": "application/json"})
            r = c.getresponse()
            raw = r.read()
        finally:
            c.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        if ok and r.status not in ok:
            raise Failure(f"{method} {path} answered {r.status}: {raw[:800].decode(errors='replace')}")
        return r.status, parsed

    def get(self, path):
        return self.call("GET", path)[1]
