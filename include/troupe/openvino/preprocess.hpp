#pragma once
/// ov::preprocess: troupe's PrePostProcessor (troupe/preprocess.hpp) with OpenVINO's
/// std::shared_ptr<ov::Model> in and out. The step classes are troupe's own; ov::element types,
/// ov::Layout and ov::PartialShape go into them unchanged.
#include <memory>
#include <string>

#include <troupe/export.hpp>
#include <troupe/preprocess.hpp>
#include <troupe/openvino/exception.hpp>
#include <troupe/openvino/model.hpp>

namespace ov::preprocess {

using troupe::preprocess::ColorFormat;
using troupe::preprocess::InputInfo;
using troupe::preprocess::InputModelInfo;
using troupe::preprocess::InputTensorInfo;
using troupe::preprocess::OutputInfo;
using troupe::preprocess::OutputModelInfo;
using troupe::preprocess::OutputTensorInfo;
using troupe::preprocess::PostProcessSteps;
using troupe::preprocess::PreProcessSteps;
using troupe::preprocess::ResizeAlgorithm;

class PrePostProcessor {
public:
  TROUPE_API explicit PrePostProcessor(const std::shared_ptr<Model>& model);
  TROUPE_API ~PrePostProcessor();
  PrePostProcessor(const PrePostProcessor&) = delete;
  PrePostProcessor& operator=(const PrePostProcessor&) = delete;
  InputInfo& input() { return ppp_.input(); }
  InputInfo& input(std::size_t index) { return ppp_.input(index); }
  InputInfo& input(const std::string& name) { return ppp_.input(name); }
  OutputInfo& output() { return ppp_.output(); }
  OutputInfo& output(std::size_t index) { return ppp_.output(index); }
  OutputInfo& output(const std::string& name) { return ppp_.output(name); }
  /// Changes the model itself (as OpenVINO's) and returns it.
  TROUPE_API std::shared_ptr<Model> build();

private:
  std::shared_ptr<Model> model_;
  troupe::preprocess::PrePostProcessor ppp_;
};

} // namespace ov::preprocess
