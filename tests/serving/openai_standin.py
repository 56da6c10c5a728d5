#!/usr/bin/env python3
"""An OpenAI-compatible stand-in: the test double of an LLM server (vLLM, TGI, ...).

Standard library only, Python 3.9 or later. Answers are deterministic, so a test can
check them through the gateway:

  completion of PROMPT        "[MODEL] you said: PROMPT"
  chat ending in user MESSAGE "[MODEL] you said: MESSAGE"

cut to `max_tokens` words (a "token" is a word here), finish_reason "length" then,
else "stop". With `"stream": true` the answer comes as Server-Sent Events, one word a
chunk (`data: {...}\\n\\n`, chunked transfer encoding), then `data: [DONE]`;
`--token-ms` spaces the chunks out so a test can see them arrive one by one.

Routes: GET /v1/models, /v1/models/{id}, /health (503 while `--unready-file` exists),
/stats; POST /v1/completions, /v1/chat/completions. Listens on `--host` (default
0.0.0.0) port `--port` (default `$PORT`). SIGTERM: stop accepting, finish what is in
flight (at most `--drain-s`), exit 0.
"""

import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CREATED = 1700000000  # fixed: answers are byte-for-byte deterministic but for ids


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.requests = 0
        self.streams = 0
        self.in_flight = 0
        self.stopping = False
        self.seq = 0
        self.replica = os.environ.get("GPUSCHED_JOB_ID") or f"pid{os.getpid()}"

    def next_id(self, prefix):
        with self.lock:
            self.seq += 1
            return f"{prefix}-{self.replica}-{self.seq}"


def answer_words(model, text, max_tokens):
    words = f"[{model}] you said: {text}".split()
    if max_tokens is not None and max_tokens < len(words):
        return words[:max_tokens], "length"
    return words, "stop"


def usage(prompt_text, words):
    p = len(prompt_text.split())
    return {"prompt_tokens": p, "completion_tokens": len(words), "total_tokens": p + len(words)}


def make_handler(st):
    args = st.args

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "gpusched-openai-standin/1"

        def log_message(self, fmt, *a):
            if args.verbose:
                sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % a))

        def send_json(self, code, obj):
            body = json.dumps(obj, separators=(",", ":")).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def error(self, code, msg, typ="invalid_request_error"):
            self.send_json(code, {"error": {"message": msg, "type": typ, "param": None, "code": None}})

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path == "/health":
                ok = not st.stopping and not (args.unready_file and os.path.exists(args.unready_file))
                return self.send_json(200 if ok else 503, {"status": "ok" if ok else "unready"})
            if path == "/stats":
                with st.lock:
                    return self.send_json(200, {"requests": st.requests, "streams": st.streams,
                                                "in_flight": st.in_flight, "pid": os.getpid(),
                                                "replica": st.replica})
            if path == "/v1/models":
                return self.send_json(200, {"object": "list", "data": [self.model_obj(m) for m in args.model]})
            if path.startswith("/v1/models/"):
                m = path[len("/v1/models/"):]
                if m in args.model:
                    return self.send_json(200, self.model_obj(m))
                return self.error(404, f"The model '{m}' does not exist", "not_found_error")
            return self.error(404, f"no route GET {path}", "not_found_error")

        def model_obj(self, m):
            return {"id": m, "object": "model", "created": CREATED, "owned_by": "gpusched-tests"}

        def do_POST(self):
            path = self.path.split("?", 1)[0]
            try:
                n = int(self.headers.get("Content-Length", "0"))
                req = json.loads(self.rfile.read(n) or b"{}")
                if not isinstance(req, dict):
                    raise ValueError("not an object")
            except ValueError as e:
                return self.error(400, f"the body is not a JSON object: {e}")
            model = req.get("model")
            if path not in ("/v1/completions", "/v1/chat/completions"):
                return self.error(404, f"no route POST {path}", "not_found_error")
            if model not in args.model:
                return self.error(404, f"The model '{model}' does not exist", "not_found_error")
            chat = path == "/v1/chat/completions"
            if chat:
                msgs = req.get("messages")
                if not isinstance(msgs, list) or not msgs:
                    return self.error(400, "messages must be a non-empty list")
                users = [m.get("content") for m in msgs if isinstance(m, dict) and m.get("role") == "user"]
                text = users[-1] if users else ""
                if isinstance(text, list):  # content parts
                    text = " ".join(p.get("text", "") for p in text if isinstance(p, dict))
            else:
                text = req.get("prompt", "")
                if isinstance(text, list):
                    text = text[0] if text else ""
            if not isinstance(text, str):
                return self.error(400, "the prompt must be a string")
            max_tokens = req.get("max_tokens", req.get("max_completion_tokens"))
            words, finish = answer_words(model, text, max_tokens)
            with st.lock:
                st.requests += 1
                st.in_flight += 1
            try:
                if args.latency_ms:
                    time.sleep(args.latency_ms / 1000.0)
                if req.get("stream"):
                    with st.lock:
                        st.streams += 1
                    return self.stream(chat, model, text, words, finish, req)
                rid = st.next_id("chatcmpl" if chat else "cmpl")
                content = " ".join(words)
                if chat:
                    choice = {"index": 0, "message": {"role": "assistant", "content": content},
                              "logprobs": None, "finish_reason": finish}
                    obj = "chat.completion"
                else:
                    choice = {"index": 0, "text": content, "logprobs": None, "finish_reason": finish}
                    obj = "text_completion"
                return self.send_json(200, {"id": rid, "object": obj, "created": CREATED, "model": model,
                                            "choices": [choice], "usage": usage(text, words),
                                            "system_fingerprint": st.replica})
            finally:
                with st.lock:
                    st.in_flight -= 1

        def chunk(self, data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def event(self, obj):
            payload = obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))
            self.chunk(f"data: {payload}\n\n".encode())

        def stream(self, chat, model, text, words, finish, req):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            rid = st.next_id("chatcmpl" if chat else "cmpl")
            obj = "chat.completion.chunk" if chat else "text_completion"

            def ev(choice, **extra):
                d = {"id": rid, "object": obj, "created": CREATED, "model": model, "choices": [choice]}
                d.update(extra)
                return d

            if chat:
                self.event(ev({"index": 0, "delta": {"role": "assistant", "content": ""},
                               "logprobs": None, "finish_reason": None}))
            for i, w in enumerate(words):
                piece = w if i == 0 else " " + w
                if chat:
                    self.event(ev({"index": 0, "delta": {"content": piece}, "logprobs": None, "finish_reason": None}))
                else:
                    self.event(ev({"index": 0, "text": piece, "logprobs": None, "finish_reason": None}))
                if args.token_ms:
                    time.sleep(args.token_ms / 1000.0)
            last = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish} if chat else \
                {"index": 0, "text": "", "logprobs": None, "finish_reason": finish}
            opts = req.get("stream_options") or {}
            if opts.get("include_usage"):
                self.event(ev(last))
                self.event({"id": rid, "object": obj, "created": CREATED, "model": model, "choices": [],
                            "usage": usage(text, words)})
            else:
                self.event(ev(last))
            self.event("[DONE]")
            self.chunk(b"")

    return Handler


class Listener(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", action="append",
                   help="a model name to serve (repeatable; default $MODEL_NAME or 'tiny-llm')")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    p.add_argument("--token-ms", type=float, default=0.0, help="pause between streamed words (ms)")
    p.add_argument("--latency-ms", type=float, default=0.0, help="pause before each answer (ms)")
    p.add_argument("--unready-file")
    p.add_argument("--start-delay", type=float, default=0.0)
    p.add_argument("--drain-s", type=float, default=10.0)
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)
    if not args.model:
        args.model = [os.environ.get("MODEL_NAME", "tiny-llm")]
    if args.start_delay > 0:
        time.sleep(args.start_delay)
    st = State(args)
    httpd = Listener((args.host, args.port), make_handler(st))
    done = threading.Event()

    def stop(signum, frame):
        st.stopping = True
        done.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    print(f"openai stand-in serving {', '.join(args.model)} on {args.host}:{httpd.server_address[1]} "
          f"(pid {os.getpid()})", flush=True)
    done.wait()
    httpd.shutdown()
    httpd.server_close()
    deadline = time.time() + args.drain_s
    while st.in_flight > 0 and time.time() < deadline:
        time.sleep(0.02)
    os._exit(0)


if __name__ == "__main__":
    main()
