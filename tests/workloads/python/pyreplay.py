# Parks two threads in known Python frames (the main thread through
# recursion, a second one through a bound method) and prints them, innermost
# first, as the interpreter sees them (co_qualname, f_lineno), for
# tests/record/python_replay.c: "THREAD native_id", "qualname line" lines,
# and at the end READY; it exits when its stdin closes.
import os
import sys
import threading
import time

parked = threading.Semaphore(0)


def frames(f):
    out = []
    while f is not None:
        out.append(f"{f.f_code.co_qualname} {f.f_lineno}")
        f = f.f_back
    return out


def park(depth):
    if depth:
        return park(depth - 1)
    parked.release()
    os.read(0, 1)


class Helper:
    def run(self):
        park(2)


def report():
    parked.acquire()
    parked.acquire()
    time.sleep(0.3)  # both are in os.read by now
    current = sys._current_frames()
    for t in (threading.main_thread(), helper):
        print(f"THREAD {t.native_id}")
        print("\n".join(frames(current[t.ident])))
    print("READY", flush=True)


helper = threading.Thread(target=Helper().run, daemon=True)
helper.start()
threading.Thread(target=report).start()
park(3)
