"""python -m troupe.ocr [-d DEVICE] [--json] [--no-cls] [-det M] [-cls M] [-rec M] [-dict F] IMAGE...:
troupe_ocr's command line and output (examples/ocr/README.md) over troupe.ocr.OCR. Images are
read with Pillow (Debian's python3-pil); OCR itself takes numpy arrays."""
import argparse
import json
import sys
import time

import numpy as np

from troupe.ocr import OCR


def read_image(path: str) -> np.ndarray:
    """A PNG or JPEG file as HxWx3 uint8 BGR (alpha dropped, gray copied to the channels);
    OSError "PATH: REASON" for a file that cannot be opened or decoded."""
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError as e:
        raise SystemExit("troupe.ocr: reading image files needs Pillow (apt-get install python3-pil)") from e
    try:
        with Image.open(path) as img:
            if img.format not in ("PNG", "JPEG"):
                raise UnidentifiedImageError(img.format)
            rgb = np.asarray(img.convert("RGB"))
    except UnidentifiedImageError as e:
        raise OSError(f"{path}: not a PNG or JPEG image") from e
    except OSError as e:
        raise OSError(f"{path}: cannot open: {e.strerror}" if e.strerror else f"{path}: {e}") from e
    return np.ascontiguousarray(rgb[..., ::-1])


def shortest(v: float) -> float:
    """The float32's shortest form (0.9876, not 0.9876000285148621), as troupe_ocr prints it."""
    return float(repr(np.float32(v)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m troupe.ocr", description="PaddleOCR's pipeline on troupe")
    ap.add_argument("images", nargs="+", metavar="IMAGE")
    ap.add_argument("-d", dest="device", default="CPU")
    ap.add_argument("--json", action="store_true", help='[{"image", "lines": [{"text", "score", "box"}], "ms"}]')
    ap.add_argument("--no-cls", dest="cls", action="store_false", help="without the angle classifier")
    for flag in ("det", "cls", "rec", "dict"):
        ap.add_argument(f"-{flag}", dest=f"{flag}_path", metavar="FILE")
    o = ap.parse_args(argv)
    try:
        ocr = OCR(o.device, o.det_path, o.cls_path, o.rec_path, o.dict_path, use_cls=o.cls)
    except (OSError, ValueError, RuntimeError) as e:
        print(f"troupe.ocr: {e}", file=sys.stderr)
        return 1
    failed, results = 0, []
    for path in o.images:
        start = time.perf_counter()
        try:
            lines = ocr(read_image(path))
        except (OSError, ValueError, RuntimeError) as e:
            print(f"troupe.ocr: {e}", file=sys.stderr)
            failed += 1
            continue
        ms = (time.perf_counter() - start) * 1000
        if o.json:
            results.append({"image": path, "lines": [
                {"text": line.text, "score": shortest(line.score), "box": [[int(x), int(y)] for x, y in line.box]}
                for line in lines], "ms": round(ms, 3)})
        else:
            if len(o.images) > 1:
                print(f"==> {path} <==")
            sys.stdout.write("".join(f"{line.score:.4f}\t{line.text}\n" for line in lines))
            sys.stdout.flush()
    if o.json:
        print(json.dumps(results, ensure_ascii=False, separators=(",", ":")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
