#!/usr/bin/env python3
"""Bad clients of a TLS exporter on localhost, bounded in count and time:
slowloris-style slow senders, malformed and oversized requests, plain text
on the TLS port, and abrupt disconnects at every stage. Prints what the
server answered each kind with and exits 1 if any of them was served
metrics (none of them sends a password) or a slow client was held open
longer than the server's request timeout allows.
Usage: bad_clients.py PORT CA_FILE [START]
It prints "ready" once set up, and begins at START (seconds since the
epoch): started and ready before a load, it is not held up by it, as an
interpreter started on a loaded machine is, for tens of seconds."""
import os
import socket
import ssl
import struct
import sys
import threading
import time

port = int(sys.argv[1])
context = ssl.create_default_context(cafile=sys.argv[2])
failures = []
lock = threading.Lock()


def fail(what):
    with lock:
        failures.append(what)


def failing_on_error(target, *args):
    """A thread whose uncaught error fails the run, as it would without threads."""
    def run():
        try:
            target(*args)
        except Exception as e:  # noqa: BLE001 - any error is a failure of the run
            fail(f"{target.__name__}: {type(e).__name__}: {e}")
    return threading.Thread(target=run)


def tls_socket():
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    return context.wrap_socket(raw, server_hostname="localhost")


def answer(sock):
    """Everything the server sends until it closes; b"" if it just closes."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (OSError, ssl.SSLError):
        pass
    return data


def status_of(data):
    return data.split(b"\r\n", 1)[0].decode(errors="replace") if data else "closed"


def reset(sock):
    """Close with a TCP RST, as a crashed or killed client does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def slowloris(held):
    s = tls_socket()
    start = time.monotonic()
    s.sendall(b"GET /metrics HTTP/1.1\r\n")
    try:
        for i in range(40):  # one header byte a second, never the blank line
            s.sendall(b"X")
            time.sleep(1)
    except (OSError, ssl.SSLError):
        pass
    held.append(time.monotonic() - start)
    s.close()


def malformed(name, payload, statuses):
    try:
        s = tls_socket()
        s.sendall(payload)
        data = answer(s)
        s.close()
    except (OSError, ssl.SSLError) as e:
        data = ("error " + type(e).__name__).encode()
    if b"lockscope_" in data:
        fail(name + ": served metrics without a password")
    statuses.setdefault(name, set()).add(status_of(data))


requests = {
    "garbage request line": b"GARBAGE\r\n\r\n",
    "unknown HTTP version": b"GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n",
    "negative Content-Length": b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    "binary junk": os.urandom(4096),
    "100 KB URI": b"GET /" + b"A" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    "1 MiB header": b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"B" * (1 << 20) + b"\r\n\r\n",
    "10000 headers": b"GET /metrics HTTP/1.1\r\n" + b"X-H: 1\r\n" * 10000 + b"\r\n",
    "bad basic auth": b"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic !!!notbase64\r\n\r\n",
}

# Ready: whoever started us may now load the machine; we begin at START.
print("ready", flush=True)
if len(sys.argv) > 3:
    time.sleep(max(0.0, float(sys.argv[3]) - time.time()))

held = []
slow = [failing_on_error(slowloris, held) for _ in range(8)]
for t in slow:
    t.start()

statuses = {}


def malformed_rounds():
    for round_ in range(5):
        for name, payload in requests.items():
            malformed(name, payload, statuses)


plain = {}


def plain_text():
    for payload in (b"GET /metrics HTTP/1.0\r\n\r\n", os.urandom(512)):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(payload)
        data = answer(s)
        s.close()
        if b"lockscope_" in data or data.startswith(b"HTTP/"):
            fail("plain text on the TLS port got an HTTP answer: " + status_of(data))
        with lock:
            plain[len(plain)] = status_of(data)


disconnected = []


def disconnects(count):
    for i in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)  # connect, then go
        reset(s)
        s = socket.create_connection(("127.0.0.1", port), timeout=30)  # half a ClientHello
        s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
        reset(s)
        s = tls_socket()  # a handshake, then gone
        reset(s)
        s = tls_socket()  # a request, gone before the answer
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        reset(s)
        with lock:
            disconnected.append(4)


# Each kind in a thread of its own, the disconnects in four, beside the slow
# senders: all of them at the server at once, as its scrapers are, and done
# in about the slow senders' time rather than one after the other.
others = [failing_on_error(malformed_rounds), failing_on_error(plain_text)]
others += [failing_on_error(disconnects, 25) for _ in range(4)]
for t in others:
    t.start()
for t in others:
    t.join()

for t in slow:
    t.join()

for name, seen in statuses.items():
    print(f"  {name}: {', '.join(sorted(seen))}")
print(f"  plain text on the TLS port: {', '.join(plain.values())}")
print(f"  abrupt disconnects: {sum(disconnected)}")
if held:
    print(f"  slow clients closed by the server after {min(held):.1f}-{max(held):.1f} s")
# request_timeout_ms is 10 s: a slow client must not hold a thread much longer.
if held and max(held) > 20:
    fail(f"a slow client was held open {max(held):.0f} s")
for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
