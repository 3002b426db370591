#include "lines.hpp"

#include <algorithm>
#include <cmath>

namespace troupe::ocr {

std::vector<text_line> group_lines(const std::vector<text_line>& lines, float drop_score) {
  std::vector<const text_line*> kept;
  for (const text_line& l : lines)
    if (l.score >= drop_score) kept.push_back(&l);
  if (kept.empty()) return {};
  // Box height as ocr-common measures it: bottom-right y minus top-left y.
  auto top = [](const text_line* l) { return l->box[0][1]; };
  auto middle = [](const text_line* l) { return (l->box[0][1] + l->box[2][1]) / 2; };
  double height = 0;
  for (const text_line* l : kept) height += l->box[2][1] - l->box[0][1];
  height /= static_cast<double>(kept.size());

  std::vector<std::vector<const text_line*>> groups;
  for (const text_line* l : kept) {
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& group) { return std::abs(middle(group[0]) - middle(l)) < height / 2; });
    if (g != groups.end()) g->push_back(l);
    else groups.push_back({l});
  }
  for (auto& g : groups)
    std::stable_sort(g.begin(), g.end(), [](const text_line* a, const text_line* b) { return a->box[0][0] < b->box[0][0]; });
  std::stable_sort(groups.begin(), groups.end(), [&](const auto& a, const auto& b) { return top(a[0]) < top(b[0]); });

  std::vector<text_line> out;
  for (const auto& g : groups) {
    text_line merged;
    double score = 0;
    for (const text_line* l : g) {
      if (l != g.front()) merged.text += ' ';
      merged.text += l->text;
      score += l->score;
    }
    merged.score = static_cast<float>(score / static_cast<double>(g.size()));
    merged.box = {g.front()->box[0], g.back()->box[1], g.back()->box[2], g.front()->box[3]};
    out.push_back(std::move(merged));
  }
  return out;
}

} // namespace troupe::ocr
