"""Threads: the GIL is released while troupe works, callbacks take it, a callback's exception
comes back from wait/wait_all, queues hand their slots back, and tearing down with requests in
flight neither deadlocks nor crashes. Timeouts here only catch a deadlock; no test passes or
fails by how fast something ran."""
import threading

import numpy as np
import pytest

import troupe as ov
from conftest import run_python

DEADLOCK = 60  # seconds: only a deadlock takes this long


def test_a_thread_keeps_running_while_another_infers(models):
    """Thread T runs infer(); the request's callback (run inside infer, before it returns) waits
    for the main thread to run Python code. Were the GIL held inside infer(), neither could run:
    the subprocess would hang (and fail here at the deadlock timeout)."""
    code = f"""
import threading, numpy as np, troupe as ov
compiled = ov.Core().compile_model({models['add']!r}, "CPU")
request = compiled.create_infer_request()
entered, go = threading.Event(), threading.Event()
def callback(userdata):
    entered.set()
    assert go.wait({DEADLOCK})
request.set_callback(callback, None)
a = np.ones((1, 8), np.float32)
result = {{}}
t = threading.Thread(target=lambda: result.setdefault("y", request.infer([a, a])[0].copy()))
t.start()
assert entered.wait({DEADLOCK}), "the callback never ran"
assert t.is_alive()  # infer() waits for its callback
go.set()  # the main thread ran Python code while T was inside infer()
t.join({DEADLOCK})
assert (result["y"] == 2 * a).all()
print("ran while another thread inferred", flush=True)
"""
    p = run_python(code, timeout=DEADLOCK)
    assert p.returncode == 0 and "ran while another thread inferred" in p.stdout, p.stderr


def test_callback_gets_userdata_and_its_exception_is_raised_by_wait(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    request = compiled.create_infer_request()
    seen = []
    request.set_callback(lambda userdata: seen.append(userdata), "first")
    a = np.ones((1, 8), np.float32)
    request.start_async([a, a])
    request.wait()
    assert seen == ["first"]

    def bad(userdata):
        raise ValueError(f"boom {userdata}")

    request.set_callback(bad, 7)
    request.start_async([a, a])
    with pytest.raises(ValueError, match="boom 7"):
        request.wait()
    request.start_async([a, a])  # the request is usable again
    with pytest.raises(ValueError, match="boom 7"):
        request.wait()
    request.set_callback(lambda u: None)
    np.testing.assert_array_equal(request.infer([a, a])[0], 2 * a)


def test_queue_with_more_jobs_than_requests(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    queue = ov.AsyncInferQueue(compiled, 2)
    assert len(queue) == 2 and queue.is_ready()
    assert [type(r) for r in queue] == [ov.InferRequest, ov.InferRequest]
    out = {}
    lock = threading.Lock()

    def done(request, userdata):
        with lock:
            out[userdata] = request.results["y"].copy()

    queue.set_callback(done)
    for i in range(20):
        queue.start_async({"a": np.full((1, 8), i, np.float32), "b": np.ones((1, 8), np.float32)}, userdata=i)
    queue.wait_all()
    assert sorted(out) == list(range(20))
    for i in range(20):
        np.testing.assert_array_equal(out[i], np.full((1, 8), i + 1, np.float32))
    assert queue.is_ready() and queue.get_idle_request_id() in (0, 1)
    assert queue.userdata[0] in range(20) and queue[0].latency >= 0
    # A queue's request used on its own is no job of the queue: its slot is not handed back twice.
    a, b = np.ones((1, 8), np.float32), np.ones((1, 8), np.float32)
    for request in queue:
        np.testing.assert_array_equal(request.infer([a, b])[0], a + b)
    out.clear()
    for i in range(6):
        queue.start_async([a, b], userdata=i)
    queue.wait_all()
    assert sorted(out) == list(range(6))


def test_queue_takes_a_job_while_its_requests_are_busy_and_runs_it_next(models):
    """start_async queues up to len(queue) jobs beside the running ones and returns; the
    callback thread starts each when a request's callback has returned. One more blocks."""
    compiled = ov.Core().compile_model(models["add"], "CPU")
    queue = ov.AsyncInferQueue(compiled, 1)
    release = threading.Event()
    out = {}

    def done(request, userdata):
        if userdata == 0:
            assert release.wait(DEADLOCK)
        out[userdata] = request.results["y"].copy()

    queue.set_callback(done)
    b = np.ones((1, 8), np.float32)
    queue.start_async([np.zeros((1, 8), np.float32), b], userdata=0)  # runs; its callback waits
    queued = threading.Thread(target=lambda: queue.start_async([np.full((1, 8), 1, np.float32), b], userdata=1))
    queued.start()
    queued.join(DEADLOCK)
    assert not queued.is_alive(), "start_async waited for a request although the queue had room"
    assert not queue.is_ready()
    third = threading.Thread(target=lambda: queue.start_async([np.full((1, 8), 2, np.float32), b], userdata=2))
    third.start()
    third.join(0.5)
    assert third.is_alive(), "start_async queued more jobs than the queue has requests"
    with pytest.raises(ValueError, match="no input named 'nope'"):  # a bad job is refused at once
        queue.start_async({"nope": b})
    release.set()
    third.join(DEADLOCK)
    queue.wait_all()
    assert sorted(out) == [0, 1, 2]
    for i in range(3):
        np.testing.assert_array_equal(out[i], np.full((1, 8), i + 1, np.float32))
    assert queue.userdata == [2] and queue.is_ready()


def test_queue_callback_exception_is_raised_by_wait_all_and_slots_come_back(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    queue = ov.AsyncInferQueue(compiled, 2)

    def done(request, userdata):
        if userdata == 3:
            raise RuntimeError("callback failed on job 3")

    queue.set_callback(done)
    a = np.ones((1, 8), np.float32)
    for i in range(8):
        queue.start_async([a, a], userdata=i)
    with pytest.raises(RuntimeError, match="job 3"):
        queue.wait_all()
    queue.wait_all()  # raised once; every slot is idle again
    for i in range(4):
        queue.start_async([a, a], userdata=10 + i)
    queue.wait_all()


def test_queue_bad_input_keeps_the_slot(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    queue = ov.AsyncInferQueue(compiled, 1)
    with pytest.raises(ValueError, match="no input named 'nope'"):
        queue.start_async({"nope": np.ones((1, 8), np.float32)})
    assert queue.is_ready()
    a = np.ones((1, 8), np.float32)
    queue.start_async([a, a])
    queue.wait_all()


def test_wait_all_and_get_idle_request_id_release_the_gil(models):
    code = f"""
import threading, numpy as np, troupe as ov
compiled = ov.Core().compile_model({models['add']!r}, "CPU")
queue = ov.AsyncInferQueue(compiled, 1)
entered, go = threading.Event(), threading.Event()
def callback(request, userdata):
    entered.set()
    assert go.wait({DEADLOCK})
queue.set_callback(callback)
a = np.ones((1, 8), np.float32)
queue.start_async([a, a])
t = threading.Thread(target=queue.wait_all)
t2 = threading.Thread(target=queue.get_idle_request_id)
t.start(); t2.start()  # both block until the callback returns
assert entered.wait({DEADLOCK})
go.set()  # needs the GIL, which both waiting threads must have released
t.join({DEADLOCK}); t2.join({DEADLOCK})
assert not t.is_alive() and not t2.is_alive()
print("wait_all and get_idle_request_id released the GIL", flush=True)
"""
    p = run_python(code, timeout=DEADLOCK)
    assert p.returncode == 0 and "released the GIL" in p.stdout, p.stderr


def test_teardown_with_requests_in_flight(models):
    """Dropping everything, then leaving the interpreter, with inferences and callbacks in flight.
    Repeated: before the exit hook (close_python_gate) 5 runs in 20 crashed."""
    code = f"""
import gc, time, numpy as np, troupe as ov
x = np.ones((512, 512), np.float32)
core = ov.Core()
compiled = core.compile_model({models['matmul']!r}, "CPU")
queue = ov.AsyncInferQueue(compiled, 3)
queue.set_callback(lambda r, u: r.results[0].sum())
for i in range(3):
    queue.start_async(x, userdata=i)
req = compiled.create_infer_request()
req.set_callback(lambda u: None, None)
req.start_async(x, share_inputs=True)
del queue, req, compiled, core
gc.collect()
core2 = ov.Core()
c2 = core2.compile_model({models['matmul']!r}, "CPU", {{"NUM_STREAMS": 2}})
q2 = ov.AsyncInferQueue(c2, 4)
def slow(r, u):
    time.sleep(0.002)
    r.results[0].sum()
q2.set_callback(slow)
for i in range(12):
    q2.start_async(x, userdata=i, share_inputs=(i % 2 == 0))
r2 = c2.create_infer_request()
r2.set_callback(lambda u: time.sleep(0.01), None)
r2.start_async(x)
print("exiting with requests in flight", flush=True)
"""
    for _ in range(8):
        p = run_python(code)
        assert p.returncode == 0, f"exit code {p.returncode}: {p.stderr}"
        assert "exiting with requests in flight" in p.stdout


def test_request_outlives_its_compiled_model(models):
    compiled = ov.Core().compile_model(models["add"], "CPU")
    request = compiled.create_infer_request()
    del compiled
    import gc
    gc.collect()
    a = np.ones((1, 8), np.float32)
    np.testing.assert_array_equal(request.infer([a, a])[0], 2 * a)
