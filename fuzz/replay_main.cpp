/// A fuzz target's entry point run once on every file of the folders given: the regression test
/// that keeps a corpus (fuzz/corpus/KIND: what the fuzzer grew, minimized, plus the inputs that
/// once crashed it) running in every build, with gcc and without libFuzzer, under CTest and under
/// the sanitizer builds. An argument that is not a readable file or folder fails, and so does a
/// replay that found no input at all: a regression test without its data passes nothing.
#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size);
/// Defined by the targets that write seeds or set up once (weak: most do not).
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));

namespace {

namespace fs = std::filesystem;

/// The input running now, for the last words of a crash (written with write(2) only).
char current[4096];

void say_current() {
  static const char head[] = "\nwhile replaying ";
  [[maybe_unused]] auto a = ::write(2, head, sizeof head - 1);
  [[maybe_unused]] auto b = ::write(2, current, std::char_traits<char>::length(current));
  [[maybe_unused]] auto c = ::write(2, "\n", 1);
}

void on_fatal_signal(int sig) {
  say_current();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

/// A crash names its input without a line per input before it (CTest keeps a failed test's
/// output only up to a size): a signal handler, or the sanitizer's death callback.
void name_input_on_crash() {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_set_death_callback(say_current);
#endif
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
#if defined(__SANITIZE_ADDRESS__)
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE) continue; // the sanitizer reports these
#endif
    std::signal(sig, on_fatal_signal);
  }
}

/// Sorted, so that a failing input is the same one on every run.
std::vector<fs::path> inputs_of(const fs::path& arg) {
  std::vector<fs::path> files;
  if (fs::is_regular_file(arg)) {
    files.push_back(arg);
  } else if (fs::is_directory(arg)) {
    for (const auto& e : fs::directory_iterator(arg))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
  }
  return files;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FOLDER_OR_FILE...\n", argv[0]);
    return 2;
  }
  name_input_on_crash();
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::size_t count = 0, bytes = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    if (!fs::exists(arg)) {
      std::fprintf(stderr, "%s: no such file or folder\n", argv[i]);
      return 1;
    }
    for (const auto& file : inputs_of(arg)) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "%s: cannot read\n", file.c_str());
        return 1;
      }
      const std::vector<char> data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      const std::string name = file.string();
      name.copy(current, sizeof current - 1);
      current[std::min(name.size(), sizeof current - 1)] = '\0';
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
      ++count;
      bytes += data.size();
    }
  }
  if (count == 0) {
    std::fprintf(stderr, "no input found in the folders given: nothing was replayed\n");
    return 1;
  }
  std::printf("replayed %zu inputs (%zu bytes), none crashed\n", count, bytes);
  return 0;
}
