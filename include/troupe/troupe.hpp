#pragma once
/// The whole public API.
#include <troupe/any.hpp>
#include <troupe/compiled_model.hpp>
#include <troupe/core.hpp>
#include <troupe/element_type.hpp>
#include <troupe/exception.hpp>
#include <troupe/infer_request.hpp>
#include <troupe/layout.hpp>
#include <troupe/model.hpp>
#include <troupe/partial_shape.hpp>
#include <troupe/preprocess.hpp>
#include <troupe/profiling_info.hpp>
#include <troupe/properties.hpp>
#include <troupe/tensor.hpp>
#include <troupe/version.hpp>
#include <troupe/worker.hpp>
