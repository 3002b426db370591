/// troupe inside a CAF application (troupe/caf.hpp): the application runs its own actor system,
/// makes a troupe Core on it, and gets the compiled model as an actor. A frame source actor
/// keeps a window of inference requests in flight with request(...).then (no thread waits), and
/// a consumer actor takes every frame's outputs or error. Nothing here blocks but main, which
/// waits for the consumer's summary.
///
/// usage: caf_embedding -m MODEL [-d DEVICE] [-n N] [-shape 1x3x48x192] [-window W] [-timeout-s S]
/// The last line reads: N requests, N replies, 0 errors (a request with no reply within S
/// seconds counts as an error, "lost"); the exit status is 0 only then.
#include <troupe/caf.hpp>
#include <troupe/troupe.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using start_atom = caf::atom_constant<caf::atom("start")>;
using frame_atom = caf::atom_constant<caf::atom("frame")>;
using failed_atom = caf::atom_constant<caf::atom("failed")>;
using summary_atom = caf::atom_constant<caf::atom("summary")>;

struct options {
  std::string model, device = "CPU", shape;
  long requests = 100;
  long window = 16;    ///< requests in flight at once
  long timeout_s = 60; ///< a request without a reply by then is lost
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "caf_embedding: %s\nusage: caf_embedding -m MODEL [-d DEVICE] [-n N] [-shape 1x3x48x192] "
               "[-window W] [-timeout-s S]\n",
               why.c_str());
  std::exit(2);
}

long number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || v < 0) usage(flag + " takes a whole number >= 0, got '" + text + "'");
  return v;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "-m") o.model = v;
    else if (a == "-d") o.device = v;
    else if (a == "-n") o.requests = number(a, v);
    else if (a == "-shape") o.shape = v;
    else if (a == "-window") o.window = std::max(1L, number(a, v));
    else if (a == "-timeout-s") o.timeout_s = std::max(1L, number(a, v));
    else usage("unknown flag " + a);
  }
  if (o.model.empty()) usage("-m MODEL is required");
  return o;
}

troupe::Shape parse_shape(const std::string& text) {
  troupe::Shape s;
  std::size_t at = 0;
  while (at <= text.size()) {
    auto x = text.find('x', at);
    if (x == std::string::npos) x = text.size();
    s.push_back(number("-shape", text.substr(at, x - at)));
    at = x + 1;
  }
  return s;
}

/// "y [1,2]: 0.9123 0.0877" -- the first values of a frame's first output.
std::string describe(const troupe::Port& port, const troupe::Tensor& t) {
  std::string s = port.get_any_name() + " " + troupe::to_string(t.get_shape()) + ":";
  if (t.get_element_type() != troupe::element_type::f32) return s + " (" + troupe::to_string(t.get_element_type()) + ")";
  for (int64_t i = 0; i < std::min<int64_t>(t.get_size(), 4); ++i) {
    char v[32];
    std::snprintf(v, sizeof v, " %.4f", t.data<float>()[i]);
    s += v;
  }
  return s + (t.get_size() > 4 ? " ..." : "");
}

/// Takes every frame's result; tells main once all of them are in.
struct consumer_state {
  long replies = 0, errors = 0, lost = 0;
  static inline const char* name = "consumer";
};

caf::behavior consumer(caf::stateful_actor<consumer_state>* self, long requests, caf::actor report_to,
                       troupe::Port first_output) {
  auto report_when_done = [=] {
    auto& st = self->state;
    if (st.replies + st.errors < requests) return;
    self->send(report_to, summary_atom::value, st.replies, st.errors, st.lost);
    self->quit();
  };
  report_when_done(); // -n 0
  return {
    [=](frame_atom, long frame, std::vector<troupe::Tensor>& outputs) {
      if (frame < 3) std::printf("frame %ld: %s\n", frame, describe(first_output, outputs.at(0)).c_str());
      ++self->state.replies;
      report_when_done();
    },
    [=](failed_atom, long frame, bool lost, const std::string& why) {
      std::fprintf(stderr, "frame %ld: %s\n", frame, why.c_str());
      ++self->state.errors;
      self->state.lost += lost ? 1 : 0;
      report_when_done();
    },
  };
}

/// Makes frames and keeps `window` requests for them in flight at the model actor.
struct source_state {
  caf::actor model, consumer;
  std::vector<troupe::Port> inputs;
  long requests = 0, window = 1, next = 0, in_flight = 0;
  caf::timespan timeout{};
  std::mt19937 rng{12345};
  static inline const char* name = "frame_source";
};

/// One frame: every input filled with uniform [0, 1) values.
std::vector<troupe::Tensor> make_frame(source_state& st) {
  std::uniform_real_distribution<float> pixel(0, 1);
  std::vector<troupe::Tensor> frame;
  for (const auto& in : st.inputs) {
    troupe::Tensor t(in.get_element_type(), in.get_shape());
    for (int64_t i = 0; i < t.get_size(); ++i) t.data<float>()[i] = pixel(st.rng);
    frame.push_back(std::move(t));
  }
  return frame;
}

void send_next(caf::stateful_actor<source_state>* self) {
  auto& st = self->state;
  if (st.next == st.requests) {
    if (st.in_flight == 0) self->quit();
    return;
  }
  const long frame = st.next++;
  ++st.in_flight;
  self->request(st.model, st.timeout, troupe::infer_atom::value, make_frame(st))
    .then(
      [=](std::vector<troupe::Tensor>& outputs) {
        self->send(self->state.consumer, frame_atom::value, frame, std::move(outputs));
        --self->state.in_flight;
        send_next(self);
      },
      [=](caf::error& e) {
        const bool lost = e == caf::sec::request_timeout;
        self->send(self->state.consumer, failed_atom::value, frame, lost,
                   lost ? "lost: no reply within the timeout" : troupe::error_message(e));
        --self->state.in_flight;
        send_next(self);
      });
}

caf::behavior frame_source(caf::stateful_actor<source_state>* self, source_state init) {
  self->state = std::move(init);
  return {
    [=](start_atom) {
      for (long i = 0; i < self->state.window; ++i) send_next(self);
    },
  };
}

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  // The application's own actor system. It is declared first: troupe's Core, models and
  // model actors must be gone before it is destroyed.
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system system{cfg};
  try {
    auto core = troupe::make_core(system);
    troupe::Model model = core->read_model(o.model);
    if (!o.shape.empty()) model.reshape(troupe::PartialShape(parse_shape(o.shape)));
    for (const auto& in : model.inputs()) {
      if (!in.get_partial_shape().is_static())
        throw troupe::Exception("input '" + in.get_any_name() + "' is " + in.get_partial_shape().to_string() +
                                ": give -shape");
      if (in.get_element_type() != troupe::element_type::f32)
        throw troupe::Exception("input '" + in.get_any_name() + "' is " + troupe::to_string(in.get_element_type()) +
                                "; this example fills f32 inputs only");
    }
    troupe::CompiledModel compiled = core->compile_model(model, o.device);
    caf::actor model_actor = troupe::spawn_model_actor(system, compiled);

    caf::scoped_actor main_actor{system};
    auto sink = system.spawn(consumer, o.requests, caf::actor_cast<caf::actor>(main_actor), compiled.output(0));
    source_state init;
    init.model = model_actor;
    init.consumer = sink;
    init.inputs = compiled.inputs();
    init.requests = o.requests;
    init.window = o.window;
    init.timeout = std::chrono::seconds(o.timeout_s);
    auto source = system.spawn(frame_source, std::move(init));
    caf::anon_send(source, start_atom::value);

    long replies = 0, errors = 0, lost = 0;
    main_actor->receive([&](summary_atom, long r, long e, long l) {
      replies = r;
      errors = e;
      lost = l;
    });
    std::printf("%ld requests, %ld replies, %ld errors", o.requests, replies, errors);
    if (lost) std::printf(" (%ld lost: no reply within %ld s)", lost, o.timeout_s);
    std::printf("\n");
    return replies == o.requests && errors == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "caf_embedding: error: %s\n", e.what());
    return 1;
  }
}
