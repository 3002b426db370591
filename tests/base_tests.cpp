// base/'s internal helpers: the f16 and bf16 conversions (troupe/float16.hpp), exhaustively over
// the 16-bit patterns and at every rounding boundary.
#define BOOST_TEST_MODULE base_tests
#include <boost/test/unit_test.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <troupe/float16.hpp>

#include <string>
#include <thread>
#include <vector>

#include "base/rate_limited_log.hpp"

using namespace troupe;

namespace {

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

/// A half's value by its definition (sign, 5-bit exponent biased by 15, 10-bit fraction): an
/// oracle independent of the bit manipulation under test. NaN for every NaN pattern.
double half_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 31) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (e == 0) v = std::ldexp(m, -24);
  else v = std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

/// The float halfway between two adjacent floats `lo` < `hi` (exact: it has one bit more).
float midpoint(float lo, float hi) { return static_cast<float>((double(lo) + double(hi)) / 2); }

} // namespace

BOOST_AUTO_TEST_SUITE(float16)

BOOST_AUTO_TEST_CASE(half_widens_exactly_and_every_pattern_round_trips) {
  int wrong_value = 0, wrong_trip = 0;
  for (uint32_t i = 0; i < 0x10000; ++i) {
    const auto h = static_cast<uint16_t>(i);
    const float f = half_bits_to_float(h);
    const double want = half_value(h);
    const bool same = std::isnan(want) ? std::isnan(f) && std::signbit(f) == bool(h & 0x8000)
                                       : double(f) == want && std::signbit(f) == bool(h & 0x8000);
    if (!same && wrong_value++ < 5) BOOST_ERROR("half 0x" << std::hex << i << " widened to " << f);
    // NaNs included: sign and payload survive, sNaN stays sNaN.
    if (float_to_half_bits(f) != h && wrong_trip++ < 5)
      BOOST_ERROR("half 0x" << std::hex << i << " came back as 0x" << float_to_half_bits(f));
  }
  BOOST_TEST(wrong_value == 0);
  BOOST_TEST(wrong_trip == 0);
}

BOOST_AUTO_TEST_CASE(float_narrows_to_the_nearest_half_ties_to_even) {
  // Between every two adjacent finite halves of one sign (subnormals, the subnormal/normal
  // boundary and exponent carries included): the midpoint goes to the even one, a float ulp
  // either side to the nearer one.
  int wrong = 0;
  for (uint32_t sign : {0x0000u, 0x8000u})
    for (uint32_t lo = 0; lo < 0x7bff; ++lo) {
      const auto a = static_cast<uint16_t>(sign | lo), b = static_cast<uint16_t>(sign | (lo + 1));
      const float fa = half_bits_to_float(a), fb = half_bits_to_float(b);
      const float mid = midpoint(fa, fb);
      const uint16_t even = (lo & 1) ? b : a;
      const uint16_t got_mid = float_to_half_bits(mid);
      const uint16_t got_below = float_to_half_bits(std::nextafter(mid, fa));
      const uint16_t got_above = float_to_half_bits(std::nextafter(mid, fb));
      if ((got_mid != even || got_below != a || got_above != b) && wrong++ < 5)
        BOOST_ERROR("between halves 0x" << std::hex << a << " and 0x" << b << ": midpoint -> 0x" << got_mid
                                        << ", below -> 0x" << got_below << ", above -> 0x" << got_above);
    }
  BOOST_TEST(wrong == 0);
}

BOOST_AUTO_TEST_CASE(half_range_ends_infinities_and_nans) {
  // 65504 is the largest half; 65520 is halfway to 2^16 and ties to even: infinity.
  BOOST_TEST(float_to_half_bits(65504.0f) == 0x7bff);
  BOOST_TEST(float_to_half_bits(std::nextafter(65520.0f, 0.0f)) == 0x7bff);
  BOOST_TEST(float_to_half_bits(65520.0f) == 0x7c00);
  BOOST_TEST(float_to_half_bits(-65520.0f) == 0xfc00);
  BOOST_TEST(float_to_half_bits(std::numeric_limits<float>::max()) == 0x7c00);
  BOOST_TEST(float_to_half_bits(std::numeric_limits<float>::infinity()) == 0x7c00);
  BOOST_TEST(float_to_half_bits(-std::numeric_limits<float>::infinity()) == 0xfc00);
  // 2^-25 is halfway between 0 and the smallest subnormal 2^-24: even is zero; above it, 2^-24.
  BOOST_TEST(float_to_half_bits(std::ldexp(1.0f, -25)) == 0x0000);
  BOOST_TEST(float_to_half_bits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
  BOOST_TEST(float_to_half_bits(-std::ldexp(1.0f, -25)) == 0x8000);
  BOOST_TEST(float_to_half_bits(std::ldexp(3.0f, -25)) == 0x0002); // 1.5 units: ties to even 2
  BOOST_TEST(float_to_half_bits(std::numeric_limits<float>::denorm_min()) == 0x0000);
  BOOST_TEST(float_to_half_bits(-0.0f) == 0x8000);
  BOOST_TEST(float_to_half_bits(1.0f) == 0x3c00);
  BOOST_TEST(float_to_half_bits(-2.5f) == 0xc100);
  // numpy's float16(nan); a NaN whose payload lies below the half's 10 bits stays a NaN.
  BOOST_TEST(float_to_half_bits(std::numeric_limits<float>::quiet_NaN()) == 0x7e00);
  BOOST_TEST(float_to_half_bits(std::bit_cast<float>(0x7f800001u)) == 0x7e00);
  BOOST_TEST(float_to_half_bits(std::bit_cast<float>(0xff800001u)) == 0xfe00);
  BOOST_TEST(float_to_half_bits(std::bit_cast<float>(0x7f802000u)) == 0x7c01); // sNaN payload kept
}

BOOST_AUTO_TEST_CASE(float_narrows_to_half_as_the_nearest_in_a_sweep) {
  // Every 65521st float bit pattern (a prime stride: all exponents, mantissas and both signs):
  // the half chosen is no farther than its neighbours, and the even one on a tie.
  int wrong = 0;
  for (uint64_t i = 0; i <= 0xffffffffu; i += 65521) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(i));
    const uint16_t h = float_to_half_bits(f);
    if (std::isnan(f)) {
      if (!std::isnan(half_bits_to_float(h)) && wrong++ < 5) BOOST_ERROR("NaN 0x" << std::hex << i << " lost");
      continue;
    }
    const double x = std::fabs(double(f));
    const uint16_t mag = h & 0x7fff;
    if (x >= 65520.0) {
      if (mag != 0x7c00 && wrong++ < 5) BOOST_ERROR(f << " -> 0x" << std::hex << h << ", not infinity");
      continue;
    }
    // Distances to this half and its neighbours (half_value(0x7c00) is infinity: never nearer).
    const double d = std::fabs(half_value(mag) - x);
    const double below = mag == 0 ? INFINITY : std::fabs(half_value(static_cast<uint16_t>(mag - 1)) - x);
    const double above = std::fabs(half_value(static_cast<uint16_t>(mag + 1)) - x);
    const bool nearest = mag < 0x7c00 && d <= below && d <= above;
    const bool tie_even = (d != below && d != above) || (mag & 1) == 0;
    const bool sign_kept = bool(h & 0x8000) == std::signbit(f);
    if (!(nearest && tie_even && sign_kept) && wrong++ < 5)
      BOOST_ERROR(f << " (0x" << std::hex << i << ") -> 0x" << h);
  }
  BOOST_TEST(wrong == 0);
}

BOOST_AUTO_TEST_CASE(bf16_widens_exactly_and_every_pattern_round_trips) {
  int wrong = 0;
  for (uint32_t i = 0; i < 0x10000; ++i) {
    const auto b = static_cast<uint16_t>(i);
    const float f = bf16_bits_to_float(b);
    if ((bits(f) != i << 16 || float_to_bf16_bits(f) != b) && wrong++ < 5)
      BOOST_ERROR("bf16 0x" << std::hex << i << " -> 0x" << bits(f) << " -> 0x" << float_to_bf16_bits(f));
  }
  BOOST_TEST(wrong == 0);
}

BOOST_AUTO_TEST_CASE(float_narrows_to_the_nearest_bf16_ties_to_even) {
  int wrong = 0;
  for (uint32_t sign : {0x0000u, 0x8000u})
    for (uint32_t lo = 0; lo < 0x7f7f; ++lo) {
      const auto a = static_cast<uint16_t>(sign | lo), b = static_cast<uint16_t>(sign | (lo + 1));
      const uint32_t mid = (static_cast<uint32_t>(a) << 16) | 0x8000u; // exactly halfway
      const uint16_t even = (lo & 1) ? b : a;
      const uint16_t got_mid = float_to_bf16_bits(std::bit_cast<float>(mid));
      const uint16_t got_below = float_to_bf16_bits(std::bit_cast<float>(mid - 1));
      const uint16_t got_above = float_to_bf16_bits(std::bit_cast<float>(mid + 1));
      if ((got_mid != even || got_below != a || got_above != b) && wrong++ < 5)
        BOOST_ERROR("between bf16 0x" << std::hex << a << " and 0x" << b << ": midpoint -> 0x" << got_mid
                                      << ", below -> 0x" << got_below << ", above -> 0x" << got_above);
    }
  BOOST_TEST(wrong == 0);
  // Beyond the largest bf16 by half an ulp: infinity (float's largest is).
  BOOST_TEST(float_to_bf16_bits(std::bit_cast<float>(0x7f7f7fffu)) == 0x7f7f);
  BOOST_TEST(float_to_bf16_bits(std::bit_cast<float>(0x7f7f8000u)) == 0x7f80);
  BOOST_TEST(float_to_bf16_bits(std::numeric_limits<float>::max()) == 0x7f80);
  BOOST_TEST(float_to_bf16_bits(-std::numeric_limits<float>::infinity()) == 0xff80);
  BOOST_TEST(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()) == 0x7fc0);
  // A NaN whose payload lies in the dropped half stays a NaN (rounding would make it infinity).
  BOOST_TEST(float_to_bf16_bits(std::bit_cast<float>(0x7f80ffffu)) == 0x7fc0);
  BOOST_TEST(float_to_bf16_bits(std::bit_cast<float>(0xff800001u)) == 0xffc0);
  BOOST_TEST(float_to_bf16_bits(std::bit_cast<float>(0x7f810000u)) == 0x7f81); // sNaN payload kept
  BOOST_TEST(float_to_bf16_bits(1.0f) == 0x3f80);
}

BOOST_AUTO_TEST_CASE(conversions_are_constexpr) {
  static_assert(float_to_half_bits(1.0f) == 0x3c00);
  static_assert(half_bits_to_float(0x0001) == 0x1p-24f);
  static_assert(float_to_bf16_bits(1.0f) == 0x3f80);
  static_assert(bf16_bits_to_float(0xc000) == -2.0f);
  BOOST_TEST(true);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(rate_limited_log_suite)

BOOST_AUTO_TEST_CASE(each_kind_prints_its_share_a_second_and_says_what_it_left_out) {
  std::vector<std::string> lines;
  troupe::rate_limited_log log([&](const std::string& l) { lines.push_back(l); }, 3);
  for (int i = 0; i < 1000; ++i) log("flood from a", "a " + std::to_string(i));
  log("b", "b 0"); // another kind is not held back by a's flood
  BOOST_TEST_REQUIRE(lines.size() == 4u);
  BOOST_TEST(lines[0] == "a 0");
  BOOST_TEST(lines[2] == "a 2");
  BOOST_TEST(lines[3] == "b 0");
  BOOST_TEST(log.left_out() == 997u);
  // A second later the next line of the kind first says what was left out.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  log("flood from a", "a again");
  BOOST_TEST_REQUIRE(lines.size() == 6u);
  BOOST_TEST(lines[4].find("... and 997 more like it in 1.") == 0u, lines[4]);
  BOOST_TEST(lines[4].find("(flood from a)") != std::string::npos, lines[4]);
  BOOST_TEST(lines[5] == "a again");
  // flush() says what is left out now; a kind that left nothing out says nothing.
  for (int i = 0; i < 5; ++i) log("flood from a", "x");
  log.flush();
  BOOST_TEST_REQUIRE(lines.size() == 9u);
  BOOST_TEST(lines[8].find("... and 3 more like it") == 0u, lines[8]);
}

BOOST_AUTO_TEST_CASE(a_kind_gone_quiet_is_summed_up_when_any_kind_speaks_a_second_later) {
  std::vector<std::string> lines;
  troupe::rate_limited_log log([&](const std::string& l) { lines.push_back(l); }, 1);
  log("a", "a 0");
  log("a", "a 1");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  log("b", "b 0");
  BOOST_TEST_REQUIRE(lines.size() == 3u);
  BOOST_TEST(lines[1].find("... and 1 more like it") == 0u, lines[1]);
  BOOST_TEST(lines[2] == "b 0");
}

BOOST_AUTO_TEST_SUITE_END()
