"""Drive a llama-server for the tests and the bench: start it on 127.0.0.1 on a free port with a
time limit, talk to it over HTTP, always stop it. Python 3 standard library only."""
import ctypes
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

SKIP = 77  # CTest SKIP_RETURN_CODE


class ServerError(Exception):
    pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child_setup():
    # Own process group (so the whole group is stopped), and killed by the kernel if this driver
    # dies without running its cleanup (e.g. CTest killing it at its timeout).
    os.setsid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class Server:
    """One llama-server process. Use as a context manager: it is stopped on every way out."""

    def __init__(self, binary, model, args, log_path, env=None, start_timeout=60):
        self.binary = binary
        self.model = model
        self.args = list(args)
        self.log_path = log_path
        self.env = env or {}
        self.start_timeout = start_timeout
        self.proc = None
        self.port = None
        self._log = None

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        # A port found free can be taken before the server binds it: retry a few times.
        for attempt in range(3):
            self.port = free_port()
            cmd = [self.binary, "-m", self.model, "--host", "127.0.0.1", "--port", str(self.port)]
            cmd += self.args
            env = dict(os.environ)
            env.update(self.env)
            self._log = open(self.log_path, "ab")
            self._log.write(("$ %s\n" % " ".join(cmd)).encode())
            self._log.flush()
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log,
                                         stderr=subprocess.STDOUT, env=env,
                                         preexec_fn=_child_setup)
            if self._wait_healthy():
                return
            self.stop()
            if "couldn't bind" not in self.log_text() and "bind" not in self.log_text()[-400:]:
                break
        raise ServerError("llama-server did not become healthy; log %s:\n%s"
                          % (self.log_path, self.log_text()[-3000:]))

    def _wait_healthy(self):
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return True
            except (urllib.error.URLError, ConnectionError, socket.timeout, OSError):
                pass
            time.sleep(0.05)
        return False

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def request(self, method, path, body=None, timeout=120):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read().decode())
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            raise ServerError("%s %s -> HTTP %d: %s" % (method, path, e.code, text[:1000]))
        except (urllib.error.URLError, ConnectionError, socket.timeout) as e:
            state = "exited with %s" % self.proc.poll() if not self.alive() else "running"
            raise ServerError("%s %s failed (%s; server %s); log tail:\n%s"
                              % (method, path, e, state, self.log_text()[-2000:]))

    def get(self, path, timeout=60):
        return self.request("GET", path, timeout=timeout)

    def post(self, path, body, timeout=120):
        return self.request("POST", path, body, timeout=timeout)

    def tokenize(self, text, add_special=False):
        return self.post("/tokenize", {"content": text, "add_special": add_special})["tokens"]

    def complete(self, prompt, n_predict=12, n_probs=10, seed=1234, **extra):
        body = {"prompt": prompt, "n_predict": n_predict, "cache_prompt": True,
                "temperature": 0.0, "seed": seed, "n_probs": n_probs, "stream": False}
        body.update(extra)
        return self.post("/completion", body)

    def prompt_cache(self):
        """The patched server's GET /props "prompt_cache" object (None when absent)."""
        return self.get("/props").get("prompt_cache")


def server_args(kv, fa, cache_ram_mib, ctx=512, extra=()):
    """The flags every test and the bench share: one slot, fixed context, one KV type."""
    args = ["-c", str(ctx), "-np", "1", "-ctk", kv, "-ctv", kv, "-fa", "on" if fa else "off",
            "--cache-ram", str(cache_ram_mib), "-t", "1", "-tb", "1", "-lv", "4", "--no-warmup",
            "--seed", "1234"]
    return args + list(extra)


def answer(resp):
    """What must be identical between two servers: the text and every token's probabilities."""
    return {"content": resp.get("content"), "tokens": resp.get("tokens"),
            "completion_probabilities": resp.get("completion_probabilities")}


def cache_n(resp):
    return resp["timings"]["cache_n"]


def first_difference(a, b, path="answer"):
    """A readable description of where two JSON values differ, or None when they are equal."""
    if type(a) is not type(b):
        return "%s: %r != %r" % (path, a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s present in only one" % (path, k)
            d = first_difference(a[k], b[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: length %d != %d" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r != %r" % (path, a, b)
