"""DB post-processing (examples/ocr/db_postprocess.cpp): the detector's probability map to
text boxes in reading order, with the C++ program's parameters and arithmetic."""
import math
from typing import List

import numpy as np

THRESH = np.float32(0.03)  # a pixel above is text (ocr-node's; PaddleOCR: 0.3)
UNCLIP_RATIO = 2.0         # boxes grow by area * ratio / perimeter
MIN_SIZE = 3
MAX_CANDIDATES = 1000


def _regions(mask: np.ndarray) -> List[List[tuple]]:
    """The 8-connected regions of `mask` in raster order of their first pixel (the first
    MAX_CANDIDATES), each as its rows' leftmost and rightmost pixels (x, y)."""
    h, w = mask.shape
    edges = np.diff(np.pad(mask.astype(np.int8), ((0, 0), (1, 1))), axis=1)
    ys, x0s = np.nonzero(edges == 1)
    x1s = np.nonzero(edges == -1)[1] - 1  # runs of text pixels, [x0, x1], in raster order
    parent = list(range(len(ys)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    row_start = np.searchsorted(ys, np.arange(h + 1))
    for y in range(h - 1):
        a, a_end, b, b_end = row_start[y], row_start[y + 1], row_start[y + 1], row_start[y + 2]
        while a < a_end and b < b_end:  # runs of rows y and y+1 that touch (diagonals too)
            if x0s[a] <= x1s[b] + 1 and x0s[b] <= x1s[a] + 1:
                ra, rb = find(a), find(b)
                parent[max(ra, rb)] = min(ra, rb)  # the root is the region's first run
            if x1s[a] < x1s[b]:
                a += 1
            else:
                b += 1
    regions = {}
    for i in range(len(ys)):
        root = find(i)
        if root not in regions and len(regions) == MAX_CANDIDATES:
            continue
        rows = regions.setdefault(root, {})
        y = int(ys[i])
        lo, hi = rows.get(y, (x0s[i], x1s[i]))
        rows[y] = (min(lo, x0s[i]), max(hi, x1s[i]))
    return [[p for y, (lo, hi) in rows.items() for p in ((float(lo), float(y)), (float(hi), float(y)))]
            for _, rows in sorted(regions.items())]


def _hull(points):
    """Andrew's monotone chain, no collinear points."""
    p = sorted(set(points))
    if len(p) < 3:
        return p
    cross = lambda o, a, b: (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])  # noqa: E731
    h = []
    for q in p:
        while len(h) >= 2 and cross(h[-2], h[-1], q) <= 0:
            h.pop()
        h.append(q)
    t = len(h) + 1
    for q in reversed(p[:-1]):
        while len(h) >= t and cross(h[-2], h[-1], q) <= 0:
            h.pop()
        h.append(q)
    return h[:-1]


def _order(corners):
    """PaddleOCR's get_mini_boxes order: top-left, top-right, bottom-right, bottom-left."""
    p = sorted(corners, key=lambda c: c[0])
    tl, bl = (p[0], p[1]) if p[1][1] > p[0][1] else (p[1], p[0])
    tr, br = (p[2], p[3]) if p[3][1] > p[2][1] else (p[3], p[2])
    return [tl, tr, br, bl]


def _f32(x: float, y: float):
    return (float(np.float32(x)), float(np.float32(y)))


def min_area_box(points):
    """The minimum-area rectangle (a side along a hull edge), ordered, and its short side."""
    hull = _hull(points)
    if len(hull) < 3:
        return None, 0.0
    best = None
    for i in range(len(hull)):
        ex, ey = hull[(i + 1) % len(hull)][0] - hull[i][0], hull[(i + 1) % len(hull)][1] - hull[i][1]
        r = 1 / float(np.hypot(ex, ey))
        ux, uy = ex * r, ey * r
        a = [px * ux + py * uy for px, py in hull]
        b = [px * -uy + py * ux for px, py in hull]
        area = (max(a) - min(a)) * (max(b) - min(b))
        if best is None or area < best[0] - 1e-9:
            best = (area, ux, uy, min(a), max(a), min(b), max(b))
    _, ux, uy, u0, u1, v0, v1 = best
    nx, ny = -uy, ux
    corners = [_f32(ux * u + nx * v, uy * u + ny * v) for u, v in ((u0, v0), (u1, v0), (u1, v1), (u0, v1))]
    return _order(corners), float(np.float32(min(u1 - u0, v1 - v0)))


def _norm(a, b) -> float:
    return float(np.hypot(a[0] - b[0], a[1] - b[1]))


def _grow(box, d: float):
    """The rectangle grown by d on every side (what the clipper unclip gives)."""
    p0, p1, p3 = box[0], box[1], box[3]
    w, h = _norm(p1, p0), _norm(p3, p0)
    u = ((p1[0] - p0[0]) * (1 / w), (p1[1] - p0[1]) * (1 / w)) if w > 0 else (1.0, 0.0)
    v = ((p3[0] - p0[0]) * (1 / h), (p3[1] - p0[1]) * (1 / h)) if h > 0 else (-u[1], u[0])
    a = (p0[0] - u[0] * d - v[0] * d, p0[1] - u[1] * d - v[1] * d)
    ww, hh = (u[0] * (w + 2 * d), u[1] * (w + 2 * d)), (v[0] * (h + 2 * d), v[1] * (h + 2 * d))
    return [_f32(*a), _f32(a[0] + ww[0], a[1] + ww[1]), _f32(a[0] + ww[0] + hh[0], a[1] + ww[1] + hh[1]),
            _f32(a[0] + hh[0], a[1] + hh[1])]


def _round(x: float) -> float:
    """std::round: halves away from zero."""
    r = math.floor(x)
    return float(r + 1 if x - r > 0.5 or (x - r == 0.5 and x > 0) else r)


def db_boxes(prob: np.ndarray, width: int, height: int) -> List[list]:
    """Boxes (4 corners, clockwise from the top-left) of an HxW map over a width x height image
    at its top-left, in reading order."""
    boxes = []
    for ends in _regions(prob > THRESH):
        box, side = min_area_box(ends)
        if side < MIN_SIZE:
            continue
        w, h = _norm(box[1], box[0]), _norm(box[3], box[0])
        d = w * h * UNCLIP_RATIO / (2 * (w + h))
        if min(w, h) + 2 * d < MIN_SIZE + 2:
            continue
        big = _order([(_round(x), _round(y)) for x, y in _grow(box, d)])
        big = [(min(max(x, 0.0), width - 1.0), min(max(y, 0.0), height - 1.0)) for x, y in big]
        if int(_norm(big[0], big[1])) <= 3 or int(_norm(big[0], big[3])) <= 3:
            continue
        boxes.append(big)
    boxes.sort(key=lambda b: (b[0][1], b[0][0]))
    for i in range(len(boxes) - 1):  # sorted_boxes: within 10 px vertically, left to right
        for j in range(i, -1, -1):
            a, b = boxes[j][0], boxes[j + 1][0]
            if abs(b[1] - a[1]) < 10 and b[0] < a[0]:
                boxes[j], boxes[j + 1] = boxes[j + 1], boxes[j]
            else:
                break
    return boxes
