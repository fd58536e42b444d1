"""Hardening of storage waits (issue #17, findings 3 and 4).

Every storage request has a timeout and retries transient failures; every
library call that can block on storage is interrupted by Ctrl-C; I/O
failures are ``OSError`` subclasses; a directory or a FIFO at a chunk key is
an error naming the key. The hostile cases run in a child process with a
time limit, so that a hang fails the test instead of blocking the suite.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.parse
from pathlib import Path

import numpy as np
import pytest

import cubego

DATA = np.arange(24, dtype="f8")
#: How an error names a chunk of the served array.
CHUNK_KEY = r'"c/\d+" in s3://bucket/a\.zarr'


# ----------------------------------------------------------------------------- servers


class _SilentServer:
    """A TCP server on 127.0.0.1 that accepts connections and never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.conns: list[socket.socket] = []
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def close(self) -> None:
        self.stopped = True
        self.sock.close()
        for c in self.conns:
            c.close()


class _FakeS3(http.server.ThreadingHTTPServer):
    """An S3 endpoint on 127.0.0.1 serving the files under ``root`` as bucket
    ``bucket`` (GET and HEAD of objects, path-style), with injected faults:
    chunk requests (keys with ``/c/``) that stall or are forbidden, and
    ``fail_first`` 503 SlowDown answers to the first requests of every key."""

    daemon_threads = True

    def __init__(self, root: Path, *, stall_chunks=False, forbid_chunks=False, fail_first=0):
        super().__init__(("127.0.0.1", 0), _FakeS3Handler)
        self.root = root
        self.stall_chunks = stall_chunks
        self.forbid_chunks = forbid_chunks
        self.fail_first = fail_first
        self.requests: dict[str, int] = {}
        self.lock = threading.Lock()
        self.released = threading.Event()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.released.set()
        self.shutdown()
        self.server_close()


class _FakeS3Handler(http.server.BaseHTTPRequestHandler):
    server: _FakeS3

    def log_message(self, *args) -> None:
        pass

    def _error(self, status: int, code: str) -> None:
        body = f"<Error><Code>{code}</Code><Message>{code}</Message></Error>".encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _serve(self) -> None:
        srv = self.server
        path = urllib.parse.urlsplit(self.path).path
        with srv.lock:
            srv.requests[path] = srv.requests.get(path, 0) + 1
            n = srv.requests[path]
        key = path.removeprefix("/bucket/")
        if n <= srv.fail_first:
            return self._error(503, "SlowDown")
        if "/c/" in key and srv.stall_chunks:
            srv.released.wait()
            return
        if "/c/" in key and srv.forbid_chunks:
            return self._error(403, "AccessDenied")
        file = srv.root / key
        if not path.startswith("/bucket/") or not file.is_file():
            return self._error(404, "NoSuchKey")
        data = file.read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Last-Modified", "Thu, 01 Jan 1970 00:00:00 GMT")
        self.send_header("ETag", '"etag"')
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(data)

    do_GET = _serve
    do_HEAD = _serve


@pytest.fixture
def bucket(tmp_path):
    """A local directory holding ``a.zarr`` (DATA in chunks of 4), served as S3."""
    root = tmp_path / "bucket"
    cubego.to_zarr(cubego.asarray(DATA, chunks=4), str(root / "a.zarr"))
    return root


@pytest.fixture
def silent():
    server = _SilentServer()
    yield server
    server.close()


def _options(endpoint: str, **extra) -> dict:
    return {"endpoint_url": endpoint, "anon": True, "region": "us-east-1", **extra}


# ----------------------------------------------------------------------------- child processes

_PRELUDE = """
import json, sys, time
import numpy as np
import cubego
spec = cubego.Spec(work_dir={work!r}, allowed_mem="100MB")

def report(**kw):
    print(json.dumps(kw), flush=True)
"""


def _env() -> dict:
    env = dict(os.environ)
    # No request of the AWS SDK may leave the machine.
    env.update(
        AWS_EC2_METADATA_DISABLED="true",
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
    )
    return env


def _child(tmp_path: Path, body: str) -> subprocess.Popen:
    script = _PRELUDE.format(work=str(tmp_path / "work")) + textwrap.dedent(body)
    return subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def _finish_all(proc: subprocess.Popen, limit: float) -> list[dict]:
    """The child's JSON lines; kills it and fails if it runs past *limit* seconds."""
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the child process hung for more than {limit} s\n{out}\n{err}")
    lines = [line for line in out.splitlines() if line.startswith("{")]
    assert lines, f"the child printed no result (exit {proc.returncode})\n{out}\n{err}"
    return [json.loads(line) for line in lines]


def _finish(proc: subprocess.Popen, limit: float) -> dict:
    return _finish_all(proc, limit)[-1]


def _run(tmp_path: Path, body: str, limit: float = 60) -> dict:
    return _finish(_child(tmp_path, body), limit)


_CATCH = """
start = time.monotonic()
try:
    {call}
    report(type=None, elapsed=time.monotonic() - start)
except BaseException as e:
    report(type=type(e).__name__, mro=[c.__name__ for c in type(e).__mro__],
           message=str(e), elapsed=time.monotonic() - start)
"""


def _catch(call: str) -> str:
    return _CATCH.format(call=call)


# ----------------------------------------------------------------------------- timeouts


def test_from_zarr_against_a_silent_endpoint_times_out(tmp_path, silent):
    """An endpoint that accepts connections and never answers: from_zarr raises
    TimeoutError once every attempt has waited the configured timeout."""
    opts = _options(silent.endpoint, timeout=1, retries=1)
    r = _run(
        tmp_path,
        _catch(f"cubego.from_zarr('s3://bucket/a.zarr', spec=spec, storage_options={opts!r})"),
    )
    assert r["type"] == "TimeoutError", r
    assert "OSError" in r["mro"]
    assert "a.zarr" in r["message"] and "2 attempts" in r["message"], r["message"]
    assert 2 <= r["elapsed"] < 8, r


def test_to_zarr_against_a_silent_endpoint_times_out(tmp_path, silent):
    """Writes are bounded too: to_zarr into a store that never answers raises
    TimeoutError, and nothing is left half-written (there is nothing to write to)."""
    opts = _options(silent.endpoint, timeout=1, retries=0)
    r = _run(
        tmp_path,
        _catch(
            "cubego.to_zarr(cubego.asarray(np.arange(8.0), chunks=4, spec=spec), "
            f"'s3://bucket/out.zarr', storage_options={opts!r}, retries=0)"
        ),
    )
    assert r["type"] == "TimeoutError", r
    assert "out.zarr" in r["message"], r["message"]
    assert r["elapsed"] < 10, r


def test_stalled_chunk_reads_time_out_naming_the_chunk(tmp_path, bucket):
    server = _FakeS3(bucket, stall_chunks=True)
    try:
        opts = _options(server.endpoint, timeout=1, retries=0)
        r = _run(
            tmp_path,
            f"x = cubego.from_zarr('s3://bucket/a.zarr', spec=spec, storage_options={opts!r})\n"
            + _catch("x.compute()"),
        )
    finally:
        server.close()
    assert r["type"] == "TimeoutError", r
    assert re.search(CHUNK_KEY, r["message"]), r["message"]
    assert r["elapsed"] < 10, r


def test_connection_refused_is_connection_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    opts = _options(f"http://127.0.0.1:{port}", retries=1)
    r = _run(
        tmp_path,
        _catch(f"cubego.from_zarr('s3://bucket/a.zarr', spec=spec, storage_options={opts!r})"),
    )
    assert r["type"] == "ConnectionError", r
    assert "2 attempts" in r["message"], r["message"]
    assert r["elapsed"] < 10, r


def test_access_denied_is_permission_error_naming_the_chunk(tmp_path, bucket):
    server = _FakeS3(bucket, forbid_chunks=True)
    try:
        opts = _options(server.endpoint)
        r = _run(
            tmp_path,
            f"x = cubego.from_zarr('s3://bucket/a.zarr', spec=spec, storage_options={opts!r})\n"
            + _catch("x.compute()"),
        )
    finally:
        server.close()
    assert r["type"] == "PermissionError", r
    assert re.search(CHUNK_KEY, r["message"]), r["message"]
    # Access denied is not retried.
    assert all(n == 1 for k, n in server.requests.items() if "/c/" in k), server.requests


def test_transient_errors_are_retried(bucket):
    """Every request first answered 503 SlowDown twice: the reads are retried and
    the array computes correctly, three requests per key."""
    server = _FakeS3(bucket, fail_first=2)
    try:
        x = cubego.from_zarr(
            "s3://bucket/a.zarr", storage_options=_options(server.endpoint, retries=2)
        )
        np.testing.assert_array_equal(x.compute(), DATA)
        np.testing.assert_array_equal((x * 2).compute(), DATA * 2)
    finally:
        server.close()
    chunks = {k: n for k, n in server.requests.items() if "/c/" in k}
    assert len(chunks) == 6 and all(n >= 3 for n in chunks.values()), server.requests


def test_bad_request_policy_options_are_value_errors():
    for opts, word in [
        ({"timeout": -1}, "timeout"),
        ({"timeout": "soon"}, "timeout"),
        ({"connect_timeout": 0}, "connect_timeout"),
        ({"retries": 1.5}, "retries"),
        ({"retries": -1}, "retries"),
    ]:
        options = _options("http://127.0.0.1:9", **opts)
        with pytest.raises(ValueError, match=word):
            cubego.from_zarr("s3://bucket/a.zarr", storage_options=options)


# ----------------------------------------------------------------------------- Ctrl-C


def _interrupt(proc: subprocess.Popen, after: float = 1.0) -> float:
    """Wait for the child's "ready" line, send SIGINT *after* seconds later, and wait
    for the child to exit; return when SIGINT was sent (``time.monotonic``, a clock
    the child shares)."""
    line = proc.stdout.readline()
    assert line.strip() == "ready", line + proc.stderr.read()
    time.sleep(after)
    assert proc.poll() is None, "the call returned before it could be interrupted"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the child ignored SIGINT for 20 s")
    return sent


_INTERRUPTED = """
print("ready", flush=True)
try:
    {call}
    report(result="returned")
except KeyboardInterrupt:
    report(result="KeyboardInterrupt", at=time.monotonic())
"""


def test_ctrl_c_interrupts_from_zarr_against_a_silent_endpoint(tmp_path, silent):
    opts = _options(silent.endpoint)  # the default timeout: 60 s
    proc = _child(
        tmp_path,
        _INTERRUPTED.format(
            call=f"cubego.from_zarr('s3://bucket/a.zarr', spec=spec, storage_options={opts!r})"
        ),
    )
    sent = _interrupt(proc)
    r = _finish(proc, 5)
    assert r["result"] == "KeyboardInterrupt", r
    assert r["at"] - sent < 2, f"from_zarr took {r['at'] - sent:.1f} s to stop after SIGINT"


@pytest.mark.parametrize("expr", ["x", "x + 1"])
def test_ctrl_c_interrupts_compute_with_stalled_chunk_reads(tmp_path, bucket, expr):
    """``x.compute()`` blocks reading the result (cg_job_read), ``(x + 1)`` in its
    tasks: both stop promptly on SIGINT."""
    server = _FakeS3(bucket, stall_chunks=True)
    try:
        opts = _options(server.endpoint)
        proc = _child(
            tmp_path,
            f"x = cubego.from_zarr('s3://bucket/a.zarr', spec=spec, storage_options={opts!r})\n"
            + _INTERRUPTED.format(call=f"({expr}).compute()"),
        )
        sent = _interrupt(proc)
        r = _finish(proc, 5)
    finally:
        server.close()
    assert r["result"] == "KeyboardInterrupt", r
    assert r["at"] - sent < 2, f"compute took {r['at'] - sent:.1f} s to stop after SIGINT"


def test_the_library_stays_usable_after_an_interrupted_read(tmp_path, bucket):
    server = _FakeS3(bucket, stall_chunks=True)
    try:
        opts = _options(server.endpoint)
        proc = _child(
            tmp_path,
            f"x = cubego.from_zarr('s3://bucket/a.zarr', spec=spec, storage_options={opts!r})\n"
            + _INTERRUPTED.format(call="x.compute()").replace(
                "at=time.monotonic()",
                "after=cubego.sum(cubego.arange(10, spec=spec)).compute().item()",
            ),
        )
        _interrupt(proc)
        r = _finish(proc, 10)
    finally:
        server.close()
    assert r == {"result": "KeyboardInterrupt", "after": 45}, r


# ----------------------------------------------------------------------------- special files


def _local_array(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "local.zarr"
    cubego.to_zarr(cubego.asarray(DATA, chunks=4), str(path))
    key = "c/1"
    assert (path / key).is_file()
    (path / key).unlink()
    return path, key


def test_fifo_at_the_metadata_key_is_an_error_naming_it(tmp_path):
    path = tmp_path / "fifo.zarr"
    path.mkdir()
    os.mkfifo(path / "zarr.json")
    r = _run(tmp_path, _catch(f"cubego.from_zarr({str(path)!r}, spec=spec)"), limit=30)
    assert r["type"] == "OSError", r
    assert "zarr.json" in r["message"] and "named pipe" in r["message"], r["message"]
    assert r["elapsed"] < 5, r


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_special_file_at_a_chunk_key_is_an_error_naming_it(tmp_path, kind):
    """A FIFO at a chunk key used to hang compute() forever; a directory read as the
    fill value. Both are OSError naming the key, at once."""
    path, key = _local_array(tmp_path)
    if kind == "fifo":
        os.mkfifo(path / key)
    else:
        (path / key).mkdir()
    results = _finish_all(
        _child(
            tmp_path,
            f"x = cubego.from_zarr({str(path)!r}, spec=spec)\n"
            + _catch("x.compute(retries=0)")
            + _catch("(x + 1).compute(retries=0)"),
        ),
        30,
    )
    assert len(results) == 2, results
    for r in results:  # reading the result, then in a task
        assert r["type"] == "OSError", r
        assert key in r["message"], r["message"]
        assert ("named pipe" if kind == "fifo" else "directory") in r["message"], r["message"]
        assert r["elapsed"] < 5, r
