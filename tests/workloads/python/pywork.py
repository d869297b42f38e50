# A deterministic Python workload for the Python frame tests and bench
# (tests/record/python.sh, tools/bench part 14): known functions on known
# lines, recursion, a generator, a callback from C (sorted's key) and a
# thread.  pycheck.py reads this file's syntax tree for the truth, so
# functions may move; keep one call per line.
import sys
import threading
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def recurse(depth, n):
    if depth == 0:
        return leaf(n)
    return recurse(depth - 1, n)


def gen(n):
    for i in range(n):
        yield i * i


def run_gen(n):
    total = 0
    for v in gen(n):
        total += v
    return total


def keyfunc(x):
    return leaf(40) - x


def run_callback(n):
    return sorted(range(n), key=keyfunc)


class Worker:
    def spin(self, stop):
        while not stop.is_set():
            leaf(20000)


def main(seconds, rounds):
    stop = threading.Event()
    t = threading.Thread(target=Worker().spin, args=(stop,))
    t.start()
    start = time.monotonic()
    # SECONDS of the process's CPU time, not of wall time: a busy machine
    # makes the run longer, not poorer in samples (the sampler counts CPU
    # time); with the GIL, about the wall time of an idle machine
    end = time.process_time() + seconds
    done = 0
    while (time.process_time() < end) if rounds is None else (done < rounds):
        recurse(5, 20000)
        run_gen(20000)
        run_callback(300)
        done += 1
    stop.set()
    t.join()
    if rounds is not None:
        print(f"{time.monotonic() - start:.3f}")


if __name__ == "__main__":
    # SECONDS of work, or n=ROUNDS of the main loop (then its time printed)
    arg = sys.argv[1] if len(sys.argv) > 1 else "2"
    if arg.startswith("n="):
        main(0, int(arg[2:]))
    else:
        main(float(arg), None)
