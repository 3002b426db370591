"""The Python examples: the README's first program (examples/first_program/first_program.py) on
the model and seeded image the C++ tests use, its output against onnxruntime's; the frame
pipeline (examples/frame_pipeline/frame_pipeline.py) against the C++ one; python -m troupe.benchmark."""
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import BIN_DIR, CLS, data_file

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


def frame_pipeline_lines(out: str):
    """The output with its timings and per-device counts taken out, and the counts."""
    lines = out.strip().split("\n")
    m = re.fullmatch(r"frames: 60 submitted, 60 completed, 0 lost, 0 out of order; "
                     r"served by: CPU=(\d+), REFERENCE=(\d+)", lines[-1])
    assert m, out
    lines[-2] = re.sub(r"[0-9.]+ s \([0-9.]+ frames/s\)", "T s (R frames/s)", lines[-2])
    return lines[:-1], int(m.group(1)), int(m.group(2))


def test_frame_pipeline_says_what_the_cpp_one_says(cls_path):
    """examples/frame_pipeline in Python and in C++ on MULTI while DEVICE_PRIORITIES change: no
    frame lost, failed or out of order, and frames 21 to 40 on REFERENCE alone."""
    args = ["-m", str(cls_path), "-shape", "1x3x48x192", "-d", "MULTI:CPU,REFERENCE", "-n", "60",
            "--reprioritize-at", "20:REFERENCE", "--reprioritize-at", "40:CPU,REFERENCE"]
    p = subprocess.run([sys.executable, str(EXAMPLES / "frame_pipeline" / "frame_pipeline.py"), *args],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    lines, cpu, ref = frame_pipeline_lines(p.stdout)
    assert lines == ["after frame 20: DEVICE_PRIORITIES REFERENCE", "after frame 40: DEVICE_PRIORITIES CPU,REFERENCE",
                     "60 frames in T s (R frames/s) on MULTI:CPU,REFERENCE with 4 requests; 0 failed"], p.stdout
    assert cpu + ref == 60 and ref >= 15, p.stdout
    cpp = BIN_DIR / "frame_pipeline"
    if not cpp.exists():
        pytest.fail(f"missing {cpp}: build it (ninja -C build frame_pipeline)", pytrace=False)
    c = subprocess.run([str(cpp), *args], capture_output=True, text=True, timeout=300)
    assert c.returncode == 0, c.stdout + c.stderr
    assert frame_pipeline_lines(c.stdout)[0] == lines


def test_frame_pipeline_refuses_a_dynamic_input_and_bad_flags(cls_path):
    script = str(EXAMPLES / "frame_pipeline" / "frame_pipeline.py")
    p = subprocess.run([sys.executable, script, "-m", str(cls_path), "-n", "2"], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 1, p.stderr
    assert "frame_pipeline: error: the model's input is [" in p.stderr and "give -shape" in p.stderr
    p = subprocess.run([sys.executable, script, "-m", str(cls_path), "--reprioritize-at", "CPU"], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 2 and "K:PRIORITIES" in p.stderr
