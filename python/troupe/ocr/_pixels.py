"""The pixel work of troupe_ocr (examples/ocr/resize.cpp, crop.cpp) in numpy on HxWx3 u8 BGR
arrays, step for step in the same float32/float64 arithmetic, so the crops are the C++
ones to the bit and both programs read the same text."""
import numpy as np


def round_half_up(v: np.ndarray) -> np.ndarray:
    """std::lround of values >= 0 (halves away from zero), exact where floor(v + 0.5) is not."""
    r = np.floor(v)
    return r + (v - r >= 0.5)


def _catmull_rom(x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    return np.where(x < 1, (1.5 * x - 2.5) * x * x + 1, np.where(x < 2, ((-0.5 * x + 2.5) * x - 4) * x + 2, 0.0))


def _cubic_filter(src: int, dst: int):
    """Per destination index: the first source index and the float32 weights from there on
    (zero past the last tap), the kernel widened by the factor when shrinking."""
    scale = src / dst
    stretch = max(scale, 1.0)
    support = 2 * stretch
    center = (np.arange(dst) + 0.5) * scale - 0.5
    lo = np.floor(center - support).astype(np.int64) + 1
    hi = np.ceil(center + support).astype(np.int64) - 1
    taps = lo[:, None] + np.arange(int((hi - lo).max()) + 1)[None, :]
    k = np.where(taps <= hi[:, None], _catmull_rom((taps - center[:, None]) / stretch), 0.0)
    total = np.zeros(dst)
    for t in range(k.shape[1]):  # summed in tap order, as the C++ loop does
        total += k[:, t]
    w = (k.astype(np.float32).astype(np.float64) / total[:, None]).astype(np.float32)
    return lo, w


def resize_cubic(img: np.ndarray, width: int, height: int) -> np.ndarray:
    """Separable Catmull-Rom resize (sharp's "cubic"), edges repeated (resize.cpp)."""
    h, w = img.shape[:2]
    first, wx = _cubic_filter(w, width)
    mid = np.zeros((h, width, 3), np.float32)
    for t in range(wx.shape[1]):
        cols = np.clip(first + t, 0, w - 1)
        mid += wx[None, :, t, None] * img[:, cols, :].astype(np.float32)
    first, wy = _cubic_filter(h, height)
    out = np.zeros((height, width, 3), np.float32)
    for t in range(wy.shape[1]):
        rows = np.clip(first + t, 0, h - 1)
        out += wy[:, t, None, None] * mid[rows]
    return np.clip(round_half_up(out.astype(np.float64)), 0, 255).astype(np.uint8)


def fit_height(img: np.ndarray, height: int, max_width: int, pad: int) -> np.ndarray:
    """Resized to `height`, aspect kept (at most max_width wide), padded right with `pad`."""
    used = int(min(max(np.ceil(height * (img.shape[1] / img.shape[0])), 1), max_width))
    out = np.full((height, max_width, 3), pad, np.uint8)
    out[:, :used] = resize_cubic(img, used, height)
    return out


def _homography(src, dst) -> np.ndarray:
    """getPerspectiveTransform by Gaussian elimination with partial pivoting (crop.cpp)."""
    a = np.zeros((8, 9))
    for i, ((u, v), (x, y)) in enumerate(zip(src, dst)):
        a[2 * i, [0, 1, 2, 6, 7, 8]] = [u, v, 1, -u * x, -v * x, x]
        a[2 * i + 1, [3, 4, 5, 6, 7, 8]] = [u, v, 1, -u * y, -v * y, y]
    for c in range(8):
        pivot = c + int(np.argmax(np.abs(a[c:, c])))
        if abs(a[pivot, c]) < 1e-12:
            raise ValueError("crop_box: the box is degenerate")
        a[[c, pivot]] = a[[pivot, c]]
        for r in range(8):
            if r != c:
                a[r, c:] -= (a[r, c] / a[c, c]) * a[c, c:]
    return a[:, 8] / np.diag(a[:, :8])


def crop_box(img: np.ndarray, box: np.ndarray) -> np.ndarray:
    """The box (4x2 float32, clockwise from the top-left) warped upright, bilinear, edges
    replicated; turned 90 degrees counter-clockwise when it is 1.5 times taller than wide."""
    p = box.astype(np.float32)
    dist = lambda i, j: np.hypot(p[i, 0] - p[j, 0], p[i, 1] - p[j, 1])  # noqa: E731 (hypotf, as C++)
    w = max(1, int(max(dist(0, 1), dist(2, 3))))
    h = max(1, int(max(dist(0, 3), dist(1, 2))))
    m = _homography([(0, 0), (w, 0), (w, h), (0, h)], [(float(x), float(y)) for x, y in p])
    x, y = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    q = m[6] * x + m[7] * y + 1
    sx, sy = (m[0] * x + m[1] * y + m[2]) / q, (m[3] * x + m[4] * y + m[5]) / q
    fx, fy = np.floor(sx), np.floor(sy)
    ax, ay = (sx - fx)[..., None], (sy - fy)[..., None]
    ih, iw = img.shape[:2]
    x0, x1 = np.clip(fx, 0, iw - 1).astype(np.int64), np.clip(fx + 1, 0, iw - 1).astype(np.int64)
    y0, y1 = np.clip(fy, 0, ih - 1).astype(np.int64), np.clip(fy + 1, 0, ih - 1).astype(np.int64)
    src = img.astype(np.float64)
    v = (src[y0, x0] * (1 - ax) + src[y0, x1] * ax) * (1 - ay) + (src[y1, x0] * (1 - ax) + src[y1, x1] * ax) * ay
    out = np.clip(round_half_up(v), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(np.rot90(out)) if h / w >= 1.5 else out
