#pragma once
/// The recognizer's output to text: greedy CTC decoding over PaddleOCR's dictionary.
#include <cstddef>
#include <string>
#include <vector>

namespace troupe::ocr {

/// One UTF-8 entry per line (a trailing "\r" is dropped, a final newline makes no empty
/// entry), then " " appended: PaddleOCR's use_space_char, which ocr-node's dictionary also
/// appends. Class i > 0 of the recognizer is entry i - 1 (class 0 is CTC's blank). Throws
/// std::runtime_error naming the path when it cannot be read or is empty.
std::vector<std::string> load_dictionary(const std::string& path);

struct decoded {
  std::string text;
  float score = 0; ///< mean of the kept steps' probabilities; 0 for no text
};

/// Greedy CTC over `steps` rows of `classes` probabilities (row-major): each step's most
/// probable class (the first on ties), repeats of the previous step's class and blanks
/// (class 0) dropped. Throws std::invalid_argument naming both counts when classes is not
/// dict.size() + 1 (a recognizer and a dictionary that do not belong together).
decoded ctc_greedy(const float* probs, std::size_t steps, std::size_t classes, const std::vector<std::string>& dict);

} // namespace troupe::ocr
