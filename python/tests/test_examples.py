"""The README's first program in Python (examples/first_program/first_program.py) on the model
and seeded image the C++ tests use: its output against onnxruntime's."""
import pathlib
import re
import subprocess
import sys

import numpy as np

from conftest import CLS, data_file

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_first_program_matches_onnxruntime(cls_path):
    case = f"ort/{CLS}_1x3x48x192"
    image = data_file(f"{case}/input_x.f32")
    want = np.fromfile(data_file(f"{case}/output_softmax_0.tmp_0.f32"), dtype=np.float32)
    p = subprocess.run([sys.executable, str(EXAMPLES / "first_program" / "first_program.py"), str(cls_path), str(image),
                        "CPU"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    m = re.search(r"0 degrees ([0-9.]+), 180 degrees ([0-9.]+)", p.stdout)
    assert m, p.stdout
    np.testing.assert_allclose([float(m.group(1)), float(m.group(2))], want, atol=2e-5)


def test_first_program_names_a_bad_image(cls_path, tmp_path):
    bad = tmp_path / "short.f32"
    bad.write_bytes(b"\0" * 16)
    p = subprocess.run([sys.executable, str(EXAMPLES / "first_program" / "first_program.py"), str(cls_path), str(bad)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and "short.f32" in p.stderr


def test_benchmark_module_reports_its_iterations(models):
    for api in ("sync", "async"):
        p = subprocess.run([sys.executable, "-m", "troupe.benchmark", "-m", models["add"], "-api", api, "-niter", "40",
                            "-nireq", "2"], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        assert "[ INFO ] Count:               40 iterations" in p.stdout, p.stdout
        assert re.search(r"Throughput: +[0-9.]+ FPS", p.stdout), p.stdout
    p = subprocess.run([sys.executable, "-m", "troupe.benchmark", "-m", models["dyn"], "-niter", "4"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode != 0 and "input 'x' has the dynamic shape [batch,4]: give -shape" in p.stderr
