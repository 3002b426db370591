"""openvino.preprocess's counterpart: troupe's PrePostProcessor (docs/preprocess.md), whose
steps become ops of the model, so every device runs them.

    from troupe.preprocess import ColorFormat, PrePostProcessor
    ppp = PrePostProcessor(model)
    ppp.input().tensor().set_element_type(Type.u8).set_layout(Layout("NHWC")).set_color_format(ColorFormat.BGR)
    ppp.input().preprocess().convert_element_type(Type.f32).mean(127.5).scale(127.5)
    ppp.input().model().set_layout(Layout("NCHW"))
    model = ppp.build()
"""
from troupe._troupe import preprocess as _pp

ColorFormat = _pp.ColorFormat
ResizeAlgorithm = _pp.ResizeAlgorithm
PrePostProcessor = _pp.PrePostProcessor
InputInfo = _pp.InputInfo
InputTensorInfo = _pp.InputTensorInfo
PreProcessSteps = _pp.PreProcessSteps
InputModelInfo = _pp.InputModelInfo
OutputInfo = _pp.OutputInfo
OutputTensorInfo = _pp.OutputTensorInfo
PostProcessSteps = _pp.PostProcessSteps
OutputModelInfo = _pp.OutputModelInfo

__all__ = ["ColorFormat", "InputInfo", "InputModelInfo", "InputTensorInfo", "OutputInfo", "OutputModelInfo",
           "OutputTensorInfo", "PostProcessSteps", "PrePostProcessor", "PreProcessSteps", "ResizeAlgorithm"]
