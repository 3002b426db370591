#include "tools/usage.hpp"

namespace troupe::cli {

namespace {

const char* overview =
    "usage: troupe <command> [flags]        (troupe <command> -h for its flags; troupe --version)\n"
    "  troupe devices                      lists devices and their properties\n"
    "  troupe query -m MODEL -d DEVICE     which ops of the model the device supports\n"
    "  troupe run -m MODEL -o DIR          one inference; writes each output as .npy and .f32\n"
    "  troupe bench -m MODEL               throughput and latency, as OpenVINO's benchmark_app\n"
    "  troupe worker [-listen HOST:PORT]   serves this machine's devices to other machines' troupe\n"
    "  troupe convert -m MODEL -o OUT.xml  writes the model as OpenVINO IR v11 (OUT.xml and OUT.bin)\n"
    "every command takes -nodes HOST:PORT,... and -node_token_file F: those workers' devices, as DEV@HOST:PORT;\n"
    "  -node_tls_cert C -node_tls_key K [-node_tls_ca CA] reach them over TLS (docs/remote.md)\n";

const char* bench_text =
    "usage: troupe bench -m MODEL [flags]   (OpenVINO benchmark_app's flags and meanings; docs/cli.md)\n"
    "\n"
    "Options:\n"
    "    -h, --help              This text.\n"
    "    -m <path>               Required. An .onnx model.\n"
    "    -i <path>               Input data: [NAME:]FILE|FOLDER[,FILE...] (also NAME=FILE), several after one -i.\n"
    "                            Raw binary files in the input's type (or -ip/-iop's), or .npy files (converted\n"
    "                            to the input's type); a folder gives its .npy/.bin/.raw/.f32 files in name order.\n"
    "                            Each file is one batch item; sets of files are used in turn across requests.\n"
    "                            Without -i: seeded random data (mulberry32, seed 12345, as scripts/reference/ort_reference.js).\n"
    "    -d <device>             CPU (default), GPU, GPU.<n>, HETERO:<devices>, MULTI:<devices>, AUTO[:<devices>].\n"
    "    -hint <hint>            throughput or tput (default; latency with -api sync): PERFORMANCE_HINT THROUGHPUT.\n"
    "                            cumulative_throughput or ctput: on MULTI and AUTO every device serves (the run\n"
    "                            prints how many requests each served); on one device it means THROUGHPUT.\n"
    "                            latency: LATENCY. none: no hint is set (the device default).\n"
    "                            -nstreams/-nthreads may be given with any hint (benchmark_app asks for -hint none).\n"
    "    -niter <integer>        Iterations (async: rounded up to a multiple of -nireq). -niter 0: compile only.\n"
    "    -max_irate <float>      At most this many inferences per second.\n"
    "    -t <seconds>            Time to run (default 60 when neither -t nor -niter is given).\n"
    "                            With both, the run lasts until both are reached.\n"
    "\n"
    "Input shapes:\n"
    "    -b <integer>            Batch size: sets the N dimension (from -layout) of every input that has one.\n"
    "    -shape <shapes>         Reshapes the model: x[1,3,48,192],y[1,4] or [1,3,48,192] ('?' or -1: dynamic).\n"
    "    -data_shape <shapes>    Shapes of the data for dynamic inputs: x[1,3,48,192][1,3,48,320] (several give\n"
    "                            several test configurations, used in turn).\n"
    "    -layout <layouts>       x[NCHW],y[NC] or [NCHW]; finds N for -b and the batch size. Default: NCHW/NHWC\n"
    "                            guessed for 4-d inputs, CHW/HWC for 3-d, none otherwise.\n"
    "\n"
    "Advanced options:\n"
    "    -load_from_file         Compile the file directly (no reshape).\n"
    "    -api <sync/async>       Default: async, or sync with -hint latency.\n"
    "    -nireq <integer>        Infer requests (default: the compiled model's OPTIMAL_NUMBER_OF_INFER_REQUESTS;\n"
    "                            1 with -api sync). Also sets PERFORMANCE_HINT_NUM_REQUESTS.\n"
    "    -nstreams <n>           NUM_STREAMS: a number or AUTO, or per device: CPU:2,GPU:1.\n"
    "    -inference_only         Set input tensors once per request (default for static models); =false sets\n"
    "                            them before every inference.\n"
    "    -infer_precision <t>    INFERENCE_PRECISION_HINT: f32, bf16 (a CPU with it), f16 (a GPU with it); or per\n"
    "                            device: CPU:bf16,GPU:f16.\n"
    "    -no_warmup              Skip the first (warm-up) inference.\n"
    "    -cache_dir <path>       CACHE_DIR for every device: a static-shaped model's compiled graph is kept\n"
    "                            there (and a GPU's Vulkan pipeline cache); LOADED_FROM_CACHE in step 8.\n"
    "\n"
    "Preprocessing options:\n"
    "    -ip <type>              Element type of all inputs' data (u8, f16, f32, i64, ...): the model takes that\n"
    "                            type and converts it on the device (PrePostProcessor), inside the measurement,\n"
    "                            as OpenVINO does (with -load_from_file the tool converts once, before measuring).\n"
    "    -mean_values [R,G,B]    Subtracted per channel in the model (needs the layout's C: -layout or the\n"
    "                            one guessed from the rank); NAME[...],NAME[...] per input.\n"
    "    -scale_values [R,G,B]   Divided per channel in the model, after the mean.\n"
    "    -op <type>              Element type of all outputs: bench measures the model's own types and says so;\n"
    "                            troupe run converts its outputs.\n"
    "    -iop \"x:f16, y:f32\"     -ip/-op per input or output, over -ip/-op.\n"
    "\n"
    "Device-specific performance options:\n"
    "    -nthreads <integer>     INFERENCE_NUM_THREADS (CPU; the GPU has none and ignores it with a warning).\n"
    "\n"
    "Statistics dumping options:\n"
    "    -latency_percentile <n> The latency percentile reported (1-100, default 50: the median).\n"
    "    -report_type <type>     no_counters, average_counters, detailed_counters or sort_detailed_counters.\n"
    "    -report_folder <path>   Where reports go: benchmark_report.csv (or .json) and, with counters,\n"
    "                            benchmark_<report_type>_report.csv (or .json). Default: the current folder.\n"
    "    -json_stats             Reports in JSON instead of CSV (benchmark_report.json). Given without -report_type,\n"
    "                            it and -report_folder write the no_counters report.\n"
    "    -pc                     Print each request's per-op counters.\n"
    "    -pcsort <how>           Print them sorted: sort, no_sort or simple_sort (executed ops only).\n"
    "    -pcseq                  Latencies per -data_shape configuration.\n"
    "    -exec_graph_path <path> Write the executed ops (IR-shaped XML from the profiling counters: op type,\n"
    "                            kernel, status and time in execution order; troupe has no runtime graph, so no edges).\n"
    "    -dump_config <path>     Write the device properties set, as JSON: {\"CPU\": {\"NUM_STREAMS\": \"2\", ...}}.\n"
    "    -load_config <path>     Read device properties from such a file; the command line wins over it.\n"
    "\n"
    "Not supported (an error says why): -pin, -extensions, -c, -use_device_mem.\n"
    "Flags also read as --flag and -flag=value; switches as -flag=true / -flag=false.\n";

const char* run_text =
    "usage: troupe run -m MODEL -o DIR [flags]\n"
    "One inference. Writes DIR/<output>.npy (the output's own element type; bf16 as float32), DIR/<output>.f32\n"
    "(raw little-endian float32) and DIR/outputs.json (names, files, shapes, element types). '/' and '\\' in\n"
    "output names become '_' in file names.\n"
    "    -m <path>               Required. An .onnx model.\n"
    "    -o <folder>             Required. Where the outputs go.\n"
    "    -d <device>             CPU (default), GPU or GPU.<n>.\n"
    "    -i <path>               Input data, as bench's -i (the first set of files is used).\n"
    "                            Without -i: seeded random data (mulberry32, seed 12345, as scripts/reference/ort_reference.js).\n"
    "    -shape, -data_shape, -layout, -b   As bench's.\n"
    "    -ip, -op, -iop          Element types of the input data and of the outputs written (converted by the tool).\n"
    "    -infer_precision <t>    INFERENCE_PRECISION_HINT (also per device: CPU:bf16,GPU:f16).\n"
    "    -load_config <path>     Device properties from a JSON file, as bench's.\n";

const char* query_text =
    "usage: troupe query -m MODEL -d DEVICE [-shape SHAPES]\n"
    "Prints each op of the model and whether DEVICE supports it (and why not).\n";

const char* worker_text =
    "usage: troupe worker [-listen HOST:PORT] [-token-file F] [-insecure] [-max-model-bytes N] [-max-request-bytes N]\n"
    "Serves this machine's devices to troupe clients on other machines (Core::add_node, -nodes,\n"
    "TROUPE_NODES), which name them DEV@HOST:PORT. -listen defaults to 127.0.0.1:7000 (this machine\n"
    "only; port 0 takes any free port); -token-file: clients must give the token on its first line.\n"
    "Beyond loopback a worker without a token refuses to start unless given -insecure (anyone who\n"
    "can reach the port may then run models on this machine).\n"
    "Prints 'listening on HOST:PORT, devices: ...' once it accepts clients, then a line per connect,\n"
    "disconnect, refusal and rejected message. A model larger than -max-model-bytes (2 GiB) or a\n"
    "request whose inputs exceed -max-request-bytes (1 GiB) is refused. TROUPE_EXCLUDED_OPS in its\n"
    "environment narrows what its devices take. SIGTERM or SIGINT: it finishes the requests in\n"
    "flight and exits 0.\n";

const char* convert_text =
    "usage: troupe convert -m MODEL -o OUT.xml [-shape SHAPES]\n"
    "Writes MODEL (.onnx, or an IR .xml) as OpenVINO IR v11: OUT.xml and its weights OUT.bin.\n"
    "-shape fixes input shapes first (as query's). An op with no IR equivalent is an error naming\n"
    "it, and nothing is written (docs/openvino-ir.md lists what maps).\n";

const char* devices_text =
    "usage: troupe devices\n"
    "Lists the devices and their properties.\n";

} // namespace

std::string usage(const std::string& command) {
  if (command == "bench") return bench_text;
  if (command == "run") return run_text;
  if (command == "query") return query_text;
  if (command == "devices") return devices_text;
  if (command == "worker") return worker_text;
  if (command == "convert") return convert_text;
  return overview;
}

} // namespace troupe::cli
