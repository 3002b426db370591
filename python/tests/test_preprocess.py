"""troupe.preprocess.PrePostProcessor on PP-OCR's classifier: the built model on u8 NHWC BGR
frames against the plain model on the same frames preprocessed by hand in numpy."""
import numpy as np
import pytest

import troupe as ov
from troupe.preprocess import ColorFormat, PrePostProcessor, ResizeAlgorithm

MEAN = [123.7, 116.3, 103.5]
SCALE = [58.4, 57.1, 57.4]


@pytest.fixture(scope="module")
def frame():
    return np.random.default_rng(7).integers(0, 256, (1, 48, 192, 3), dtype=np.uint8)  # u8 NHWC BGR


def read_cls(path):
    model = ov.Core().read_model(path)
    model.reshape([1, 3, 48, 192])
    return model


def plain(cls_path, x):
    return ov.Core().compile_model(read_cls(cls_path), "CPU")(x)[0]


def test_u8_nhwc_bgr_to_f32_nchw_rgb_with_mean_and_scale(cls_path, frame):
    model = read_cls(cls_path)
    ppp = PrePostProcessor(model)
    ppp.input().tensor().set_element_type(ov.Type.u8).set_layout(ov.Layout("NHWC")).set_color_format(ColorFormat.BGR)
    ppp.input().preprocess().convert_element_type(ov.Type.f32).convert_color(ColorFormat.RGB).mean(MEAN).scale(SCALE)
    ppp.input().model().set_layout(ov.Layout("NCHW"))
    built = ppp.build()
    x = built.input()
    assert x.element_type == ov.Type.u8 and x.shape == [1, 48, 192, 3] and x.get_any_name() == "x"
    assert model.input().element_type == ov.Type.u8  # as OpenVINO's: the model itself changed
    got = ov.Core().compile_model(built, "CPU")(frame)[0]

    rgb = frame[..., ::-1].astype(np.float32)
    by_hand = ((rgb - np.float32(MEAN)) / np.float32(SCALE)).transpose(0, 3, 1, 2)
    want = plain(cls_path, np.ascontiguousarray(by_hand))
    assert got.shape == want.shape == (1, 2)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)
    # The steps matter: without the color conversion the answer is another one.
    other = plain(cls_path, np.ascontiguousarray(((frame.astype(np.float32) - np.float32(MEAN)) / np.float32(SCALE))
                                                 .transpose(0, 3, 1, 2)))
    assert np.abs(other - want).max() > 1e-4


def test_resize_and_one_value_mean_scale(cls_path, frame):
    """A 96x384 frame resized (linear, half-pixel centres) to the model's 48x192: at exactly half
    size that is the mean of each 2x2 block."""
    big = np.random.default_rng(8).integers(0, 256, (1, 96, 384, 3), dtype=np.uint8)
    ppp = PrePostProcessor(read_cls(cls_path))
    info = ppp.input(0)
    info.tensor().set_element_type(ov.Type.u8).set_layout("NHWC").set_spatial_static_shape(96, 384)
    info.preprocess().convert_element_type(ov.Type.f32).resize(ResizeAlgorithm.RESIZE_LINEAR).mean(127.5).scale(127.5)
    info.model().set_layout("NCHW")
    built = ppp.build()
    assert built.input().shape == [1, 96, 384, 3]
    got = ov.Core().compile_model(built, "CPU")(big)[0]

    f = big.astype(np.float32)
    half = (f[:, 0::2, 0::2] + f[:, 0::2, 1::2] + f[:, 1::2, 0::2] + f[:, 1::2, 1::2]) / 4
    want = plain(cls_path, np.ascontiguousarray(((half - 127.5) / 127.5).transpose(0, 3, 1, 2)))
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)


def test_reverse_channels_layout_order_and_postprocess(cls_path, frame):
    ppp = PrePostProcessor(read_cls(cls_path))
    steps = ppp.input("x").tensor().set_element_type(ov.Type.u8).set_layout("NHWC")
    ppp.input("x").model().set_layout("NCHW")
    ppp.input("x").preprocess().convert_element_type(ov.Type.f32).reverse_channels().scale(255.0)
    out = ppp.output(0)
    out.postprocess().convert_layout([1, 0])
    out.tensor().set_element_type(ov.Type.f16)
    built = ppp.build()
    assert steps is ppp.input("x").tensor()
    assert built.output().element_type == ov.Type.f16 and str(built.output().partial_shape) == "[2,?]"
    got = ov.Core().compile_model(built, "CPU")(frame)[0]
    assert got.dtype == np.float16

    by_hand = (frame[..., ::-1].astype(np.float32) / 255.0).transpose(0, 3, 1, 2)
    want = plain(cls_path, np.ascontiguousarray(by_hand))
    np.testing.assert_allclose(got.astype(np.float32), want.T, rtol=0, atol=2e-3)


def test_calls_chain_and_return_the_same_objects(cls_path):
    ppp = PrePostProcessor(read_cls(cls_path))
    tensor = ppp.input().tensor()
    assert tensor.set_element_type(ov.Type.u8) is tensor and tensor.set_layout("NHWC") is tensor
    steps = ppp.input().preprocess()
    assert steps.convert_element_type(ov.Type.f32) is steps and steps.mean(1.0) is steps
    assert ppp.input().model().set_layout("NCHW") is ppp.input().model()
    assert ppp.input() is ppp.input(0) and ppp.input(0) is ppp.input("x")
    del ppp  # the infos keep their PrePostProcessor alive
    assert steps.scale(2.0) is steps


def test_errors_name_what_was_wrong(cls_path):
    ppp = PrePostProcessor(read_cls(cls_path))
    with pytest.raises(RuntimeError, match="nope"):
        ppp.input("nope")
    with pytest.raises(RuntimeError):
        ppp.output(3)
    with pytest.raises(ValueError, match="negative"):
        ppp.input(-1)
    with pytest.raises(TypeError, match="mean takes a number or a list"):
        ppp.input().preprocess().mean("abc")
    with pytest.raises(ValueError, match="set_spatial_static_shape: sizes are > 0"):
        ppp.input().tensor().set_spatial_static_shape(0, 4)
    with pytest.raises(TypeError, match="convert_layout takes"):
        ppp.input().preprocess().convert_layout(3.5)
    with pytest.raises(RuntimeError, match="not a numeric element type"):
        ppp.input().tensor().set_element_type(ov.Type.string)
    # A step that does not fit: build() names the input and the step, and the model is unchanged.
    model = read_cls(cls_path)
    ppp = PrePostProcessor(model)
    ppp.input().tensor().set_layout("NCHW")
    ppp.input().preprocess().mean([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(RuntimeError, match="input 'x', step mean: 4 values for 3 channels"):
        ppp.build()
    assert model.input().element_type == ov.Type.f32 and model.input().shape == [1, 3, 48, 192]
