"""Dimension (as ov.Dimension) and PartialShape's items: static, dynamic or bounded ("1..64"),
equal to ints for convenience."""
import numpy as np
import pytest

import troupe as ov


def test_static_and_dynamic():
    d = ov.Dimension(4)
    assert d.is_static and not d.is_dynamic
    assert d.get_length() == 4 and d.get_min_length() == 4 and d.get_max_length() == 4
    assert str(d) == "4" and repr(d) == "<Dimension: 4>"
    for dyn in (ov.Dimension(), ov.Dimension(-1), ov.Dimension("?"), ov.Dimension.dynamic(), ov.Dimension(0, -1)):
        assert dyn.is_dynamic and not dyn.is_static and str(dyn) == "?"
        assert dyn.get_min_length() == 0 and dyn.get_max_length() == -1
        assert dyn == ov.Dimension()
    with pytest.raises(RuntimeError, match="dynamic"):
        ov.Dimension().get_length()
    assert ov.Dimension("7") == 7 and ov.Dimension(3, 3) == 3


def test_equality_with_ints_and_hashing():
    assert ov.Dimension(4) == 4 and 4 == ov.Dimension(4) and ov.Dimension(4) != 5
    assert ov.Dimension() == -1 and ov.Dimension() != 4 and ov.Dimension(4) != ov.Dimension()
    assert ov.Dimension(4) != "4" and ov.Dimension(4) != None  # noqa: E711
    assert hash(ov.Dimension(4)) == hash(4) and len({ov.Dimension(4), ov.Dimension(4), 4}) == 1
    # A static dimension is an index; a dynamic one is not.
    assert list(range(ov.Dimension(3))) == [0, 1, 2] and int(ov.Dimension(3)) == 3
    with pytest.raises(TypeError, match="dynamic"):
        range(ov.Dimension())


def test_comparisons_of_schemes():
    s, dyn = ov.Dimension(4), ov.Dimension()
    assert s.compatible(dyn) and s.compatible(4) and not s.compatible(5)
    assert dyn.relaxes(s) and not s.relaxes(dyn) and s.refines(dyn) and not dyn.refines(s)
    assert s.same_scheme(ov.Dimension(4)) and dyn.same_scheme(ov.Dimension()) and not s.same_scheme(dyn)


def test_bounded_dimensions():
    d = ov.Dimension(1, 8)
    assert d.is_dynamic and not d.is_static and str(d) == "1..8" and repr(d) == "<Dimension: 1..8>"
    assert d.get_min_length() == 1 and d.get_max_length() == 8
    assert str(ov.Dimension(2, -1)) == "2.." and str(ov.Dimension(0, 8)) == "..8"
    assert ov.Dimension("1..8") == d and ov.Dimension("2..") == ov.Dimension(2, -1)
    assert d != ov.Dimension() and d != -1 and hash(d) == hash(ov.Dimension(1, 8))
    assert d.compatible(8) and not d.compatible(9) and d.compatible(ov.Dimension(8, -1))
    assert ov.Dimension().relaxes(d) and d.relaxes(ov.Dimension(2, 4)) and not d.relaxes(ov.Dimension(0, 9))
    assert ov.Dimension(2, 4).refines(d) and not ov.Dimension().refines(d)
    with pytest.raises(RuntimeError, match=r"1\.\.8"):
        d.get_length()
    with pytest.raises(TypeError, match=r"1\.\.8"):
        range(d)
    ps = ov.PartialShape([1, (112, 448), "1..64", ov.Dimension(3, -1)])
    assert str(ps) == "[1,112..448,1..64,3..]" and ps[1] == ov.Dimension(112, 448) and ps[3].get_max_length() == -1
    assert ov.PartialShape("[1,112..448,1..64,3..]") == ps and ps[1:3] == ov.PartialShape([(112, 448), (1, 64)])


def test_bounded_input_refuses_tensors_outside_its_range(models):
    core = ov.Core()
    m = core.read_model(models["dyn"])
    m.reshape([ov.Dimension(2, 5), 4])
    assert str(m.input().partial_shape) == "[2..5,4]"
    compiled = core.compile_model(m, "CPU")
    assert str(compiled.input().partial_shape) == "[2..5,4]"
    request = compiled.create_infer_request()
    with pytest.raises(RuntimeError, match=r"dimension 0 is 6, outside 2\.\.5"):
        request.infer({0: np.zeros((6, 4), np.float32)})
    assert request.infer({0: np.ones((5, 4), np.float32)})[0].shape == (5, 4)


def test_bad_values_are_refused():
    with pytest.raises(ValueError, match=r"Dimension\(9, 3\): an empty range"):
        ov.Dimension(9, 3)
    with pytest.raises(ValueError, match="-2"):
        ov.Dimension(-2)
    with pytest.raises(ValueError, match="'x'"):
        ov.Dimension("x")
    with pytest.raises(ValueError, match="'9..3'"):
        ov.Dimension("9..3")
    with pytest.raises(TypeError):
        ov.Dimension(2.5)
    with pytest.raises(ValueError, match="empty range"):
        ov.PartialShape([1, (448, 112)])
    with pytest.raises(TypeError, match="a dimension is an int"):
        ov.PartialShape([1, 2.5])


def test_partial_shape_items_are_dimensions():
    ps = ov.PartialShape([1, -1, ov.Dimension(3), "?", None, np.int64(5)])
    assert str(ps) == "[1,?,3,?,?,5]"
    items = list(ps)
    assert all(isinstance(d, ov.Dimension) for d in items)
    assert items == [1, -1, 3, -1, -1, 5] and [str(d) for d in items] == ["1", "?", "3", "?", "?", "5"]
    assert ps[0] == 1 and ps[1].is_dynamic and ps[-1] == 5 and ps.get_dimension(2) == 3
    assert ps[2:4] == ov.PartialShape([3, -1]) and isinstance(ps[2:4], ov.PartialShape)
    with pytest.raises(IndexError):
        ps[6]
    ps[1] = 7
    ps[3] = ov.Dimension(2)
    ps[4] = "8"
    assert ps == [1, 7, 3, 2, 8, 5] and ps.is_static
    assert ov.PartialShape(list(ps)) == ps  # Dimensions back into a shape
    assert ps.rank == 6 and isinstance(ps.rank, ov.Dimension)


def test_a_model_ports_shape_gives_dimensions(models):
    m = ov.Core().read_model(models["dyn"])
    ps = m.input().partial_shape
    assert str(ps) == "[batch,4]" and ps[0].is_dynamic and ps[1] == 4 and ps[1].get_length() == 4
    ps[0] = 2
    ps[0] = -1
    assert str(ps) == "[?,4]"  # setting an item forgets the dimension's ONNX name
    m.reshape([ov.Dimension(3), ov.Dimension(4)])
    assert m.input().partial_shape.is_static and list(m.input().partial_shape) == [3, 4]
    assert np.zeros(list(m.input().partial_shape)).shape == (3, 4)
