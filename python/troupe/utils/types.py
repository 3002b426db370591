"""Element types <-> numpy dtypes (as openvino.runtime.utils.types)."""
from __future__ import annotations

from typing import Any

import numpy as np

from troupe._troupe import Type


def get_dtype(openvino_type: Type) -> np.dtype:
    """numpy's dtype of an element type (bf16 is viewed as uint16, string as object)."""
    return np.dtype(openvino_type.to_dtype())


def get_element_type(data_type: Any) -> Type:
    """The element type of a numpy dtype (or anything np.dtype() takes: np.float32, "int64"; int: i32, float: f32)."""
    if data_type is int:  # as OpenVINO: an int of no stated width is i32
        return Type.i32
    if data_type is float:
        return Type.f32
    return Type.from_dtype(np.dtype(data_type))


def get_element_type_str(data_type: Any) -> str:
    """The element type's name ("f32") of a numpy dtype."""
    return get_element_type(data_type).get_type_name()


__all__ = ["get_dtype", "get_element_type", "get_element_type_str"]
