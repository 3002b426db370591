"""The PP-OCR cls model on every kind of device string, from Python: each output against the
CPU's for the same input. GPU cases need a Vulkan device (scripts/test.sh sets up two lavapipe
ones and TROUPE_REQUIRE_GPU=1, which makes a missing GPU fail instead of skip)."""
import os
import re
import signal
import subprocess

import numpy as np
import pytest

import troupe as ov
from conftest import BIN_DIR


def require_gpu(core):
    if "GPU.0" not in core.available_devices:
        if os.environ.get("TROUPE_REQUIRE_GPU") == "1" or os.environ.get("CI") == "true":
            pytest.fail(f"no GPU.0 (devices: {core.available_devices}) and TROUPE_REQUIRE_GPU=1")
        pytest.skip("no Vulkan device (GPU.0)")


@pytest.fixture(scope="module")
def cls_case(cls_path):
    core = ov.Core()
    model = core.read_model(cls_path)
    model.reshape([1, 3, 48, 192])
    image = np.random.default_rng(11).random((1, 3, 48, 192), dtype=np.float32)
    want = core.compile_model(model, "CPU")(image)[0]
    return core, model, image, want


@pytest.mark.parametrize("device", ["REFERENCE", "HETERO:REFERENCE,CPU", "MULTI:CPU,REFERENCE", "AUTO",
                                    "GPU.0", "HETERO:GPU.0,CPU", "MULTI:GPU.0,CPU"])
def test_cls_on(device, cls_case):
    core, model, image, want = cls_case
    if "GPU" in device:
        require_gpu(core)
    compiled = core.compile_model(model, device)
    queue = ov.AsyncInferQueue(compiled, 3)
    got = {}
    queue.set_callback(lambda request, i: got.__setitem__(i, request.results[0].copy()))
    for i in range(6):
        queue.start_async(image, userdata=i)
    queue.wait_all()
    for i in range(6):
        np.testing.assert_allclose(got[i], want, rtol=1e-3, atol=1e-4, err_msg=device)


def test_cls_on_a_remote_worker(cls_case):
    core, model, image, want = cls_case
    exe = BIN_DIR / "troupe"
    assert exe.exists(), f"{exe} is missing: build the troupe_cli target"
    worker = subprocess.Popen([str(exe), "worker", "-listen", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
    try:
        line = worker.stdout.readline()
        m = re.search(r"listening on (\S+), devices", line)
        assert m, f"the worker said: {line!r}"
        address = m.group(1)
        remote = ov.Core()
        remote.add_node(address)
        assert f"CPU@{address}" in remote.available_devices
        compiled = remote.compile_model(model, f"CPU@{address}")
        np.testing.assert_allclose(compiled(image)[0], want, rtol=1e-5, atol=1e-6)
        with pytest.raises(RuntimeError, match="127.0.0.1:1"):
            remote.add_node("127.0.0.1:1", {"NODE_TIMEOUT_MS": 2000})
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)
