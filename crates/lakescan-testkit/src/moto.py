"""moto's S3 on 127.0.0.1 (port chosen by the kernel) with armable faults and added latency.

Started by lakescan_testkit::S3Server: prints "port NNNNN" once listening, exits when its
standard input closes (the test process ended, however it ended).

Control routes (plain HTTP, no signature):
  POST   /_fault?kind=K&count=N[&method=GET][&path_contains=x][&ranged=1][&secs=S]
         K = 503 | 500 | 429 | 403 | delay | truncate; the next N matching requests get it
  DELETE /_fault                      disarm
  POST   /_latency?ms=N               add N ms before every S3 request (0: none)
  GET    /_stats                      JSON: requests by kind (GET, HEAD, LIST, PUT, …), bytes
                                      of GET answers, injected faults
"""
import json, logging, os, sys, threading, time
from urllib.parse import parse_qs

try:
    from werkzeug.serving import make_server
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
except Exception as e:  # reported on stdout, which the harness reads
    print(f"error: moto is not importable ({e}); install it with: pip install 'moto[server]'", flush=True)
    sys.exit(1)

logging.getLogger("werkzeug").setLevel(logging.ERROR)
moto_app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()
fault = {}
latency = {"ms": 0}
stats = {"requests": {}, "bytes": 0, "injected": 0}

ERRORS = {
    "503": ("503 Service Unavailable", "SlowDown"),
    "500": ("500 Internal Server Error", "InternalError"),
    "429": ("429 Too Many Requests", "TooManyRequests"),
    "403": ("403 Forbidden", "AccessDenied"),
}


def request_kind(environ):
    """GET, HEAD, PUT, … and LIST: a GET of a bucket (ListObjects)."""
    method = environ["REQUEST_METHOD"]
    bucket_only = environ.get("PATH_INFO", "").strip("/").count("/") == 0
    if method == "GET" and ("list-type" in environ.get("QUERY_STRING", "") or bucket_only):
        return "LIST"
    return method


def take_fault(environ):
    with lock:
        method = environ["REQUEST_METHOD"]
        kind = request_kind(environ)
        stats["requests"][kind] = stats["requests"].get(kind, 0) + 1
        f = fault
        if not f or f["count"] <= 0:
            return None
        if f.get("method") and method != f["method"]:
            return None
        if f.get("path_contains") and f["path_contains"] not in environ.get("PATH_INFO", ""):
            return None
        if f.get("ranged") and "HTTP_RANGE" not in environ:
            return None
        f["count"] -= 1
        stats["injected"] += 1
        return dict(f)


def reply(start_response, status, body, content_type="application/json"):
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return [body]


def control(environ, start_response, path):
    method = environ["REQUEST_METHOD"]
    q = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
    with lock:
        if path == "/_fault" and method == "POST":
            fault.clear()
            fault.update(kind=q["kind"], count=int(q.get("count", 1)), method=q.get("method"),
                         path_contains=q.get("path_contains"), ranged=q.get("ranged") == "1",
                         secs=float(q.get("secs", 5)))
        elif path == "/_fault" and method == "DELETE":
            fault.clear()
        elif path == "/_latency":
            latency["ms"] = int(q.get("ms", 0))
        body = json.dumps({"fault": fault, "latency_ms": latency["ms"], **stats}).encode()
    return reply(start_response, "200 OK", body)


def app(environ, start_response):
    path = environ.get("PATH_INFO", "")
    if path in ("/_fault", "/_latency", "/_stats"):
        return control(environ, start_response, path)
    if latency["ms"]:
        time.sleep(latency["ms"] / 1000.0)
    f = take_fault(environ)
    if f is None:
        return moto_app(environ, counting(environ, start_response))
    kind = f["kind"]
    if kind in ERRORS:
        status, code = ERRORS[kind]
        body = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
                f'<Message>injected</Message></Error>').encode()
        return reply(start_response, status, body, "application/xml")
    if kind == "delay":
        time.sleep(f["secs"])
        return moto_app(environ, start_response)
    if kind == "truncate":
        # The real headers (full Content-Length), half the body, then the connection closes.
        captured = {}

        def keep(status, headers, exc_info=None):
            captured["status"], captured["headers"] = status, headers

        data = b"".join(moto_app(environ, keep))
        start_response(captured["status"], captured["headers"])
        return [data[: len(data) // 2]]
    raise ValueError(kind)


def counting(environ, start_response):
    """start_response, adding the Content-Length of GET answers to the byte count."""
    if environ["REQUEST_METHOD"] != "GET":
        return start_response

    def wrapped(status, headers, exc_info=None):
        for name, value in headers:
            if name.lower() == "content-length":
                with lock:
                    stats["bytes"] += int(value)
        return start_response(status, headers, exc_info)

    return wrapped


def watch_stdin():
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=watch_stdin, daemon=True).start()
    print(f"port {server.server_port}", flush=True)
    server.serve_forever()
