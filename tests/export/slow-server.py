# A TCP server that accepts connections and never answers: a debuginfod that
# hangs.  Usage: python3 slow-server.py PORT  (prints "ready" once listening)
import socket, sys, threading, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
print("ready", flush=True)
held = []
while True:
    c, _ = s.accept()
    held.append(c)  # keep it open, say nothing
