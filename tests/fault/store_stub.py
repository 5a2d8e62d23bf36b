#!/usr/bin/env python3
"""A listener on the store's port that is not this build's store, for
store_stub.sh. It answers one client's CHALLENGE, then logs how many bytes the
client sent after it.

  store_stub.py impostor V PORTFILE LOG  speaks wire version V, acknowledges any
                                         HELLO with a proof of zeros: it does not
                                         know the job token
  store_stub.py old PORTFILE LOG         a build before wire version 3: the bare
                                         16-byte nonce answers CHALLENGE
"""
import os
import socket
import struct
import sys

mode = sys.argv[1]
version = int(sys.argv[2]) if mode == "impostor" else 2
portfile, log = sys.argv[-2], sys.argv[-1]

srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.bind(("127.0.0.1", 0))
srv.listen(4)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
srv.settimeout(60)
conn, _ = srv.accept()
conn.settimeout(30)


def read_exact(n):
    buf = b""
    while len(buf) < n:
        got = conn.recv(n - len(buf))
        if not got:
            raise EOFError
        buf += got
    return buf


def frame():
    (n,) = struct.unpack(">I", read_exact(4))
    return read_exact(n)


notes = []
try:
    req = frame()
    notes.append("challenge=%d" % (req == b"\x07"))
    nonce = os.urandom(16)
    if mode == "old":
        conn.sendall(struct.pack(">I", 16) + nonce)
    else:
        conn.sendall(struct.pack(">II", 20, version) + nonce)
        hello = frame()
        notes.append("hello=%d" % (hello[:1] == b"\x01"))
        conn.sendall(struct.pack(">I", 32) + bytes(32))
    after = 0
    while True:  # until the client hangs up
        got = conn.recv(4096)
        if not got:
            break
        after += len(got)
    notes.append("after=%d" % after)
except (EOFError, OSError) as e:
    notes.append("error=%s" % type(e).__name__)
with open(log, "w") as f:
    f.write(" ".join(notes) + "\n")
