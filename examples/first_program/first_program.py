"""troupe's first program in Python: PP-OCR's text-direction classifier on one 48x192 text-line
image (raw float32, CHW, values in [0,1)), on the device given (CPU by default). The same
program as main.cpp beside it, with OpenVINO's Python API (`import openvino as ov` -> troupe).

usage: python3 first_program.py ch_ppocr_mobile_v2.0_cls_infer.onnx image.f32 [DEVICE]
"""
import sys

import numpy as np

import troupe as ov


def main(argv):
    if len(argv) < 3:
        print(f"usage: {argv[0]} ch_ppocr_mobile_v2.0_cls_infer.onnx image.f32 [DEVICE]", file=sys.stderr)
        return 2
    device = argv[3] if len(argv) > 3 else "CPU"
    try:
        core = ov.Core()
        model = core.read_model(argv[1])
        model.reshape([1, 3, 48, 192])
        compiled = core.compile_model(model, device)

        image = np.fromfile(argv[2], dtype=np.float32)
        if image.size != 3 * 48 * 192:
            raise ValueError(f"{argv[2]}: expected {3 * 48 * 192 * 4} bytes of float32")
        probs = compiled(image.reshape(1, 3, 48, 192))[0]  # or create_infer_request(), start_async(), wait()
        print(f"troupe {ov.__version__}, {device}: 0 degrees {probs[0, 0]:.6f}, 180 degrees {probs[0, 1]:.6f}")
        return 0
    except (RuntimeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
