"""troupe for Python: OpenVINO's Python API (the `openvino` module, API 2.0) over troupe's
engine. OpenVINO code runs with one changed import line:

    import troupe as ov
    core = ov.Core()
    compiled = core.compile_model("model.onnx", "CPU")
    result = compiled(image)[compiled.output(0)]
"""
from troupe._troupe import (ConstOutput, Dimension, Layout, Model, Node, PartialShape, ProfilingInfo, RTMap, Shape, Tensor,
                            Type, __version__, get_version)
from troupe._api import AsyncInferQueue, CompiledModel, Core, InferRequest, OVDict, compile_model
from troupe import preprocess, properties

Output = ConstOutput

__all__ = ["AsyncInferQueue", "CompiledModel", "ConstOutput", "Core", "Dimension", "InferRequest", "Layout", "Model",
           "Node", "OVDict", "Output", "PartialShape", "ProfilingInfo", "RTMap", "Shape", "Tensor", "Type",
           "__version__", "compile_model", "get_version", "preprocess", "properties"]
