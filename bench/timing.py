"""timing.py - CUDA event timings shared by the bench scripts (suite.py,
inductor_code.py, row_gap.py): per-call event pairs over back-to-back
calls (each time, or their median), and the time per call of a loop under
one event pair."""
import statistics
import time

import torch


def event_times(fn, warmup=5, iters=40):
    """ms of each of `iters` back-to-back calls, each between its own event pair."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(iters)]
    for s, e in ev:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in ev]


def median_ms(fn, warmup=5, iters=40):
    return statistics.median(event_times(fn, warmup, iters))


def loop_us(fn, n=1000):
    """End-to-end time per call of n back-to-back calls (host overhead included)."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    host = (time.perf_counter() - t0) / n * 1e6
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) / n * 1000.0, host
