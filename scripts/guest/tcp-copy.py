#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Copy a file over one TCP connection (IPv4 or IPv6, link-local scopes).

  tcp-copy.py recv PORT OUT [READY]  accept one connection on PORT, write
                                     what arrives to OUT; touch READY once
                                     listening
  tcp-copy.py send ADDR PORT IN      connect to ADDR (a %scope allowed),
                                     send IN, close

The selftest (guest/selftest-ipoib.sh) runs it across the IPoIB
interfaces of two network namespaces and compares the files.
"""
import socket
import sys


def recv(port, out, ready=None):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # IPv4 too (mapped), whatever the namespace's bindv6only says
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", port))
    s.listen(1)
    if ready:
        open(ready, "w").close()
    c, _ = s.accept()
    with open(out, "wb") as f:
        while True:
            d = c.recv(1 << 16)
            if not d:
                break
            f.write(d)
    c.close()
    s.close()


def send(addr, port, path):
    info = socket.getaddrinfo(addr, port, type=socket.SOCK_STREAM)[0]
    c = socket.socket(info[0], socket.SOCK_STREAM)
    c.settimeout(60)
    c.connect(info[4])
    with open(path, "rb") as f:
        c.sendall(f.read())
    c.shutdown(socket.SHUT_WR)
    c.close()


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "recv":
        recv(int(sys.argv[2]), sys.argv[3],
             sys.argv[4] if len(sys.argv) > 4 else None)
    elif len(sys.argv) == 5 and sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
