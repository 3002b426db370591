#!/usr/bin/env python3
"""A streaming frame pipeline on troupe's async API, in Python (main.cpp beside it is the C++
one): a producer makes frames at a given rate, a pool of inference requests runs them on any
device string (AUTO with CUMULATIVE_THROUGHPUT by default), and a consumer takes the results in
frame order. `--reprioritize-at K:PRIORITIES` gives a MULTI/AUTO model new device priorities
once frame K is submitted, while the frames before it are still running.

usage: frame_pipeline.py -m MODEL [-d DEVICE] [-n FRAMES] [-shape 1x3x48x192] [-fps RATE]
                         [-nireq N] [--reprioritize-at K:PRIORITIES]...
The last line reads: frames: N submitted, N completed, 0 lost, 0 out of order; served by: ...
"""
import argparse
import sys
import threading
import time
from collections import deque

import numpy as np

import troupe as ov


def whole(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"takes a whole number >= 0, got '{text}'")
    return int(text)


def reprioritization(text: str):
    frame, colon, priorities = text.partition(":")
    if not colon or not frame.isdigit():
        raise argparse.ArgumentTypeError("takes K:PRIORITIES, as 50:CPU,GPU")
    return int(frame), priorities


def parse(argv):
    ap = argparse.ArgumentParser(prog="frame_pipeline.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("-m", dest="model", required=True)
    ap.add_argument("-d", dest="device", default="AUTO")
    ap.add_argument("-n", dest="frames", type=whole, default=100)
    ap.add_argument("-shape", default="")
    ap.add_argument("-fps", type=float, default=0.0, help="0: as fast as the requests free up")
    ap.add_argument("-nireq", type=whole, default=0, help="0: the compiled model's optimal number")
    ap.add_argument("--reprioritize-at", dest="reprioritize", type=reprioritization, action="append", default=[],
                    metavar="K:PRIORITIES", help="after frame K is submitted: DEVICE_PRIORITIES")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    o = parse(argv)
    reprioritize = dict(o.reprioritize)
    core = ov.Core()
    model = core.read_model(o.model)
    if o.shape:
        model.reshape([int(d) for d in o.shape.split("x")])
    in_shape = model.input().partial_shape
    if not in_shape.is_static:
        raise RuntimeError(f"the model's input is {in_shape}: give -shape")
    spreads = o.device.startswith(("AUTO", "MULTI"))
    config = {"PERFORMANCE_HINT": "CUMULATIVE_THROUGHPUT"} if spreads else {}
    compiled = core.compile_model(model, o.device, config)
    nireq = o.nireq or compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")

    # The pool: idle requests, and finished ones waiting for the consumer (request r, its frame).
    cv = threading.Condition()
    idle, finished = deque(range(nireq)), deque()
    frame_of = [-1] * nireq
    requests = [compiled.create_infer_request() for _ in range(nireq)]

    def on_done(r: int) -> None:  # troupe's callback thread: hand the request over, nothing more
        with cv:
            finished.append((r, frame_of[r]))
            idle.append(r)
            cv.notify_all()

    for r, request in enumerate(requests):
        request.set_callback(on_done, r)

    # The consumer: results in frame order (a frame that finishes early waits for those before it).
    counts = {"completed": 0, "failed": 0, "out_of_order": 0}
    early, next_expected = {}, [0]

    def consume(r: int, frame: int) -> None:
        try:
            requests[r].wait()  # done already; raises the inference's error
            early[frame] = None
        except RuntimeError as e:
            early[frame] = str(e)
        while next_expected[0] in early:
            error = early.pop(next_expected[0])
            if error is not None:
                counts["failed"] += 1
                print(f"frame {next_expected[0]} failed: {error}", file=sys.stderr)
            next_expected[0] += 1
            counts["completed"] += 1
        if early and min(early) < next_expected[0]:
            counts["out_of_order"] += 1  # a frame seen twice

    rng = np.random.default_rng(12345)
    shape = list(in_shape.to_shape())
    t0 = time.monotonic()
    submitted = 0
    for f in range(o.frames):
        if o.fps > 0:
            time.sleep(max(0.0, t0 + f / o.fps - time.monotonic()))
        with cv:
            cv.wait_for(lambda: idle)
            r = idle.popleft()
            done = list(finished)
            finished.clear()
        for item in done:
            consume(*item)
        frame_of[r] = f
        requests[r].start_async(rng.random(shape, dtype=np.float32))  # an array of its own per frame
        submitted += 1
        if f in reprioritize:
            compiled.set_property({"DEVICE_PRIORITIES": reprioritize[f]})
            print(f"after frame {f}: DEVICE_PRIORITIES {reprioritize[f]}", flush=True)
    with cv:
        cv.wait_for(lambda: len(idle) == nireq)  # every request back: every frame finished
        done = list(finished)
        finished.clear()
    for item in done:
        consume(*item)
    secs = time.monotonic() - t0

    try:
        served = compiled.get_property("REQUESTS_SERVED")  # MULTI, AUTO with CUMULATIVE_THROUGHPUT
    except RuntimeError:
        served = ",".join(compiled.get_property("EXECUTION_DEVICES")) + f":{counts['completed']}"
    by = ", ".join(s.replace(":", "=") for s in served.split(",") if s)
    completed = counts["completed"]
    print(f"{completed} frames in {secs:.2f} s ({completed / secs:.1f} frames/s) on {o.device} with {nireq} requests; "
          f"{counts['failed']} failed")
    print(f"frames: {submitted} submitted, {completed} completed, {submitted - completed} lost, "
          f"{counts['out_of_order']} out of order; served by: {by}")
    return 0 if submitted == completed and counts["out_of_order"] == 0 and counts["failed"] == 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, ValueError, OSError) as e:
        print(f"frame_pipeline: error: {e}", file=sys.stderr)
        sys.exit(1)
