#include "ctc_decode.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace troupe::ocr {

std::vector<std::string> load_dictionary(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the dictionary: " + std::strerror(errno));
  std::vector<std::string> dict;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    dict.push_back(line);
  }
  if (in.bad()) throw std::runtime_error(path + ": cannot read the dictionary");
  if (dict.empty()) throw std::runtime_error(path + ": the dictionary is empty");
  dict.emplace_back(" ");
  return dict;
}

decoded ctc_greedy(const float* probs, std::size_t steps, std::size_t classes, const std::vector<std::string>& dict) {
  if (classes != dict.size() + 1)
    throw std::invalid_argument("the recognizer gives " + std::to_string(classes) + " classes but the dictionary has " +
                                std::to_string(dict.size()) + " entries (with the space), which needs " +
                                std::to_string(dict.size() + 1) + " (with CTC's blank)");
  decoded out;
  double sum = 0;
  std::size_t kept = 0, previous = 0;
  for (std::size_t t = 0; t < steps; ++t) {
    const float* row = probs + t * classes;
    std::size_t best = 0;
    for (std::size_t c = 1; c < classes; ++c)
      if (row[c] > row[best]) best = c;
    if (best != 0 && !(t > 0 && best == previous)) {
      out.text += dict[best - 1];
      sum += row[best];
      ++kept;
    }
    previous = best;
  }
  out.score = kept ? static_cast<float>(sum / kept) : 0.0f;
  return out;
}

} // namespace troupe::ocr
