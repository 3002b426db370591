#pragma once
/// OpenVINO 2.0's C++ API spelled over troupe's (namespace ov): change
/// `#include <openvino/openvino.hpp>` to this include and link troupe. A bindings layer: every
/// call goes to troupe's public API; what differs and what is missing is in
/// docs/porting-openvino.md.
#include <troupe/openvino/any.hpp>
#include <troupe/openvino/compiled_model.hpp>
#include <troupe/openvino/core.hpp>
#include <troupe/openvino/element_type.hpp>
#include <troupe/openvino/exception.hpp>
#include <troupe/openvino/infer_request.hpp>
#include <troupe/openvino/layout.hpp>
#include <troupe/openvino/model.hpp>
#include <troupe/openvino/preprocess.hpp>
#include <troupe/openvino/properties.hpp>
#include <troupe/openvino/shape.hpp>
#include <troupe/openvino/tensor.hpp>
