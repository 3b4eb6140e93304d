// Format strings: every spelling in format_string.hpp's header comment parses to the descriptor
// its words describe; to_string and parse_format round-trip over many descriptors of every
// family (all options included); malformed strings throw mase::error naming the string.
#include <mase/format/format.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace mase;

namespace {

// The descriptor a string must parse to, written from the format's words.
struct spelled {
  const char* text;
  format expected;
};

template <class D>
void check_round_trip(const D& d) {
  const std::string text = to_string(d);
  INFO("format string " << text);
  format parsed = [&]() -> format {
    try {
      return parse_format(text);
    } catch (const error& e) {
      FAIL("parse_format threw: " << e.what());
    }
    return d;
  }();
  REQUIRE(parsed.holds<D>());
  CHECK(parsed.get<D>() == d);
  CHECK(to_string(parsed) == text);  // one spelling per format
}

template <class D>
bool valid(const D& d) {
  try {
    check(d);
    return true;
  } catch (const error&) {
    return false;
  }
}

void check_rejected(const std::string& text, const std::string& also = {}) {
  INFO("format string \"" << text << "\"");
  try {
    (void)parse_format(text);
    FAIL_CHECK("parse_format accepted \"" << text << "\"");
  } catch (const error& e) {
    const std::string message = e.what();
    INFO("message: " << message);
    CHECK(message.find(text) != std::string::npos);
    if (!also.empty()) CHECK(message.find(also) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("the spellings in the header comment parse to the formats they name") {
  const block_shape cols16{.rows = block_shape::full, .cols = 16, .skip_first_dim = true};
  const std::vector<spelled> names = {
      {"fixed<8,3>", fixed_fmt{.width = 8, .frac = 3}},
      {"ufixed<8,3>", fixed_fmt{.width = 8, .frac = 3, .is_signed = false}},
      {"fixed<8,3,floor,wrap>", fixed_fmt{.width = 8, .frac = 3, .round = rounding::floor, .ovf = overflow::wrap}},
      {"minifloat<8,4,7>", minifloat_fmt{.exp_bits = 4, .man_bits = 3, .bias = 7,
                                         .specials = special_values::finite, .saturating = true}},
      {"minifloat<8,4,7,ieee>", minifloat_fmt{.exp_bits = 4, .man_bits = 3, .bias = 7,
                                              .specials = special_values::ieee, .saturating = false}},
      {"minifloat<8,4,7,nan_only,saturating,no_subnormals>",
       minifloat_fmt{.exp_bits = 4, .man_bits = 3, .bias = 7, .subnormals = false,
                     .specials = special_values::nan_only, .saturating = true}},
      // IEEE 754 binary16 and bfloat16, OCP OFP8 and MX element formats
      {"float16", minifloat_fmt{.exp_bits = 5, .man_bits = 10, .bias = 15, .specials = special_values::ieee,
                                .saturating = false}},
      {"bfloat16", minifloat_fmt{.exp_bits = 8, .man_bits = 7, .bias = 127, .specials = special_values::ieee,
                                 .saturating = false}},
      {"e5m2", minifloat_fmt{.exp_bits = 5, .man_bits = 2, .bias = 15, .specials = special_values::ieee,
                             .saturating = false}},
      {"e4m3", minifloat_fmt{.exp_bits = 4, .man_bits = 3, .bias = 7, .specials = special_values::nan_only,
                             .saturating = false}},
      {"e3m2", minifloat_fmt{.exp_bits = 3, .man_bits = 2, .bias = 3, .specials = special_values::finite}},
      {"e2m3", minifloat_fmt{.exp_bits = 2, .man_bits = 3, .bias = 1, .specials = special_values::finite}},
      {"e2m1", minifloat_fmt{.exp_bits = 2, .man_bits = 1, .bias = 1, .specials = special_values::finite}},
      {"log<8,63>", log_fmt{.width = 8, .bias = 63}},
      {"binary", binary_fmt{}},
      {"ternary<0.5>", ternary_fmt{.threshold = 0.5}},
      {"residual_sign<2,0.9,0.35>", residual_sign_fmt{.levels = 2, .means = {0.9, 0.35, 0.0, 0.0}}},
      {"block_fp<8,8,127,[16]>", block_fp_fmt{.width = 8, .exp_bits = 8, .bias = 127, .block = cols16}},
      {"block_fp<8,8,127,[4,4],weight>",
       block_fp_fmt{.width = 8, .exp_bits = 8, .bias = 127, .block = {.rows = 4, .cols = 4, .skip_first_dim = false}}},
      {"block_minifloat<8,4,8,[16]>", block_minifloat_fmt{.width = 8, .exp_bits = 4, .bias_bits = 8, .block = cols16}},
      {"block_log<8,8,[16]>", block_log_fmt{.width = 8, .bias_bits = 8, .block = cols16}},
      {"mxint<8,8,[1,32]>",
       mxint_fmt{.width = 8, .exp_bits = 8, .block = {.rows = 1, .cols = 32, .skip_first_dim = false}}},
      {"mxint8", mx_fmt{.element = mx_element::int8, .block_size = 32}},
      {"mxfp8_e4m3", mx_fmt{.element = mx_element::fp8_e4m3, .block_size = 32}},
      {"mxfp4_e2m1<16>", mx_fmt{.element = mx_element::fp4_e2m1, .block_size = 16}},
  };
  for (const spelled& s : names) {
    INFO(s.text);
    const format parsed = parse_format(s.text);
    CHECK(parsed == s.expected);
    CHECK(to_string(parsed) == s.text);  // the comment shows canonical spellings
  }
  // the named descriptors are the ones these strings spell
  CHECK(parse_format("float32") == format(formats::float32));
  CHECK(parse_format("float16") == format(formats::float16));
  CHECK(parse_format("bfloat16") == format(formats::bfloat16));
  CHECK(parse_format("e5m2") == format(formats::e5m2));
  CHECK(parse_format("e4m3") == format(formats::e4m3));
  CHECK(parse_format("e3m2") == format(formats::e3m2));
  CHECK(parse_format("e2m3") == format(formats::e2m3));
  CHECK(parse_format("e2m1") == format(formats::e2m1));
  CHECK(parse_format("mxint8") == format(formats::mxint8));
  CHECK(parse_format("mxfp8_e4m3") == format(formats::mxfp8_e4m3));
  CHECK(parse_format("mxfp8_e5m2") == format(formats::mxfp8_e5m2));
  CHECK(parse_format("mxfp6_e3m2") == format(formats::mxfp6_e3m2));
  CHECK(parse_format("mxfp6_e2m3") == format(formats::mxfp6_e2m3));
  CHECK(parse_format("mxfp4_e2m1") == format(formats::mxfp4));
}

TEST_CASE("non-canonical spellings parse and print canonically") {
  CHECK(to_string(parse_format(" fixed < 8 , 3 > ")) == "fixed<8,3>");
  CHECK(to_string(parse_format("fixed<8,3,half_even,saturate>")) == "fixed<8,3>");
  CHECK(to_string(parse_format("fixed<8,3,wrap,floor>")) == "fixed<8,3,floor,wrap>");
  CHECK(to_string(parse_format("minifloat<8,5,15,ieee>")) == "e5m2");
  CHECK(to_string(parse_format("minifloat<16,5,15,ieee>")) == "float16");
  CHECK(to_string(parse_format("minifloat<32,8,127,ieee>")) == "float32");
  CHECK(to_string(parse_format("minifloat<6,3,3>")) == "e3m2");
  CHECK(to_string(parse_format("minifloat<8,4,7,saturating>")) == "minifloat<8,4,7>");  // finite formats saturate
  CHECK(to_string(parse_format("minifloat<8,4,7,saturating,nan_only>")) == "minifloat<8,4,7,nan_only,saturating>");
  CHECK(to_string(parse_format("block_fp<8,8,127,[-1,16]>")) == "block_fp<8,8,127,[16]>");
  CHECK(to_string(parse_format("block_fp<8,8,127,[16],activation>")) == "block_fp<8,8,127,[16]>");
  CHECK(to_string(parse_format("mxint<8,8,[1,32],weight>")) == "mxint<8,8,[1,32]>");
  CHECK(to_string(parse_format("mxint8<32,half_away>")) == "mxint8<half_away>");
  CHECK(to_string(parse_format("mxfp6_e2m3<half_away,8>")) == "mxfp6_e2m3<8,half_away>");
  CHECK(to_string(parse_format("mxfp8_e5m2<32>")) == "mxfp8_e5m2");
  CHECK(to_string(parse_format("ternary<0.50>")) == "ternary<0.5>");
}

TEST_CASE("to_string and parse_format round-trip every family with every option") {
  // fixed: widths, fractions (negative, zero, beyond the width), signedness, every mode
  for (int width : {1, 2, 7, 8, 16, 31, 63})
    for (int frac : {-512, -9, -1, 0, 3, 8, 70, 512})
      for (bool is_signed : {true, false})
        for (rounding r : all_roundings)
          for (overflow o : all_overflows)
            check_round_trip(fixed_fmt{.width = width, .frac = frac, .is_signed = is_signed, .round = r, .ovf = o});

  // minifloat: every valid combination of widths, biases, specials, saturation, subnormals, rounding
  int minifloats = 0;
  for (int e = 1; e <= 8; ++e)
    for (int m : {0, 1, 2, 3, 7, 10, 23})
      for (int bias : {-3, 0, 1, (1 << (e - 1)) - 1, 15, 127})
        for (special_values sv : {special_values::finite, special_values::ieee, special_values::nan_only})
          for (bool saturating : {true, false})
            for (bool subnormals : {true, false})
              for (rounding r : {rounding::half_even, rounding::floor, rounding::half_away}) {
                const minifloat_fmt f{.exp_bits = e, .man_bits = m, .bias = bias, .subnormals = subnormals,
                                      .specials = sv, .saturating = saturating, .round = r};
                if (!valid(f)) continue;
                ++minifloats;
                check_round_trip(f);
              }
  CHECK(minifloats > 1000);
  for (const minifloat_fmt& f : {formats::float16, formats::bfloat16, formats::e5m2, formats::e4m3, formats::e3m2,
                                 formats::e2m3, formats::e2m1})
    check_round_trip(f);

  for (int width = 2; width <= 8; ++width)
    for (int bias : {-100, -1, 0, 3, default_log_bias(width), 100, 127})
      if (valid(log_fmt{.width = width, .bias = bias})) check_round_trip(log_fmt{.width = width, .bias = bias});

  check_round_trip(binary_fmt{});
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (double t : {0.0, 0.5, 0.25, std::nextafter(1.0, 0.0), 1e-300, 0.1, 1.0 / 3.0, 2.0 / 3.0})
    check_round_trip(ternary_fmt{.threshold = t});
  for (int k = 0; k < 200; ++k) check_round_trip(ternary_fmt{.threshold = unit(rng) * std::pow(10.0, -(k % 20))});
  for (int levels = 1; levels <= 4; ++levels)
    for (int k = 0; k < 20; ++k) {
      residual_sign_fmt f{.levels = levels, .means = {0, 0, 0, 0}};
      for (int l = 0; l < levels; ++l) f.means[static_cast<std::size_t>(l)] = (k % 2 ? -1 : 1) * unit(rng);
      check_round_trip(f);
    }

  const std::vector<block_shape> blocks = {
      {.rows = block_shape::full, .cols = 16, .skip_first_dim = true},
      {.rows = block_shape::full, .cols = 16, .skip_first_dim = false},
      {.rows = block_shape::full, .cols = block_shape::full, .skip_first_dim = true},
      {.rows = 4, .cols = 4, .skip_first_dim = false},
      {.rows = 4, .cols = 4, .skip_first_dim = true},
      {.rows = 1, .cols = 32, .skip_first_dim = false},
      {.rows = 8, .cols = block_shape::full, .skip_first_dim = false},
      {.rows = 3, .cols = 1, .skip_first_dim = true},
  };
  for (const block_shape& b : blocks) {
    for (rounding r : all_roundings) {
      check_round_trip(block_fp_fmt{.width = 8, .exp_bits = 8, .bias = 127, .block = b, .round = r});
      check_round_trip(block_fp_fmt{.width = 4, .exp_bits = 5, .bias = 3, .block = b, .round = r});
      check_round_trip(mxint_fmt{.width = 8, .exp_bits = 8, .block = b, .round = r});
      check_round_trip(mxint_fmt{.width = 3, .exp_bits = 2, .block = b, .round = r});
    }
    check_round_trip(block_fp_fmt{.width = 24, .exp_bits = 1, .bias = -5, .block = b});
    check_round_trip(block_minifloat_fmt{.width = 8, .exp_bits = 4, .bias_bits = 8, .block = b});
    check_round_trip(block_minifloat_fmt{.width = 6, .exp_bits = 5, .bias_bits = 3, .block = b});
    check_round_trip(block_log_fmt{.width = 8, .bias_bits = 8, .block = b});
    check_round_trip(block_log_fmt{.width = 2, .bias_bits = 1, .block = b});
  }
  for (mx_element e : all_mx_elements)
    for (int size : {1, 2, 16, 32, 33, 1024})
      for (rounding r : all_roundings) check_round_trip(mx_fmt{.element = e, .block_size = size, .round = r});
}

TEST_CASE("malformed format strings throw mase::error naming the string") {
  // unknown names
  check_rejected("fixd<8,3>", "unknown format name");
  check_rejected("FIXED<8,3>", "unknown format name");
  check_rejected("float64", "unknown format name");
  check_rejected("float32<1>");
  check_rejected("mxfp5_e2m2", "unknown format name");
  check_rejected("mxint", "unknown format name");
  check_rejected("e4m3<1>");
  check_rejected("binary<1>");
  // wrong argument counts
  check_rejected("fixed<8>", "arguments");
  check_rejected("fixed<8,3,floor,wrap,half_up>", "arguments");
  check_rejected("minifloat<8,4>", "arguments");
  check_rejected("log<8>", "arguments");
  check_rejected("log<8,63,1>", "arguments");
  check_rejected("ternary<0.5,0.5>", "arguments");
  check_rejected("residual_sign<2,0.5>", "means");
  check_rejected("residual_sign<1,0.5,0.5>", "means");
  check_rejected("block_fp<8,8,127>", "arguments");
  check_rejected("block_log<8,[16]>", "arguments");
  check_rejected("mxint<8,[1,32]>", "arguments");
  check_rejected("mxfp8_e4m3<16,floor,3>", "arguments");
  // bad blocks
  check_rejected("block_fp<8,8,127,16>", "block shape");
  check_rejected("block_fp<8,8,127,[]>", "block shape");
  check_rejected("block_fp<8,8,127,[a]>", "integer");
  check_rejected("block_fp<8,8,127,[4,4,4]>", "integer");
  check_rejected("block_fp<8,8,127,[0]>", "block width");
  check_rejected("block_log<8,8,[0,16]>", "block height");
  check_rejected("mxint<8,8,[1,-2]>", "block width");
  // bad options
  check_rejected("fixed<8,3,round>", "unknown option");
  check_rejected("fixed<8,3,nan_only>", "unknown option");
  check_rejected("minifloat<8,4,7,ieeee>", "unknown option");
  check_rejected("minifloat<8,4,7,wrap>", "unknown option");
  check_rejected("block_fp<8,8,127,[16],tile>", "unknown option");
  check_rejected("block_minifloat<8,4,8,[16],floor>", "unknown option");
  check_rejected("block_log<8,8,[16],half_even>", "unknown option");
  // bad numbers
  check_rejected("fixed<8.5,3>", "integer");
  check_rejected("fixed<x,3>", "integer");
  check_rejected("fixed<99999999999,3>", "out of range");
  check_rejected("ternary<half>", "number");
  check_rejected("mxfp8_e4m3<abc>", "integer");
  // bad syntax
  check_rejected("fixed<8,3", "missing '>'");
  check_rejected("fixed<8,3>x", "after '>'");
  check_rejected("fixed<8,,3>", "empty");
  check_rejected("fixed(8,3)");
  check_rejected("<8,3>");
  check_rejected("block_fp<8,8,127,[16]]>", "unbalanced");
  check_rejected("block_fp<8,8,127,[16>", "missing '>'");
  // invalid descriptors: the rule's message and the format
  check_rejected("fixed<0,3>", "the width must be at least 1 bit");
  check_rejected("fixed<0, 3>", "the width must be at least 1 bit");  // as the user wrote it, not canonical
  check_rejected("minifloat<8, 9, 7>", "mantissa width cannot be negative");
  check_rejected("fixed<64,3>", "at most 63 bits");
  check_rejected("ufixed<8,600>", "[-512, 512]");
  check_rejected("minifloat<8,9,7>", "mantissa width cannot be negative");
  check_rejected("minifloat<8,0,7>", "at least one exponent bit");
  check_rejected("minifloat<32,9,127>", "at most 8 exponent");
  check_rejected("minifloat<3,1,0,ieee>", "no normal binade");
  check_rejected("minifloat<2,1,0,nan_only>", "no normal binade");
  check_rejected("minifloat<16,8,127>", "emax must be <= 127");
  check_rejected("minifloat<8,4,128>", "1 - bias must be >= -126");
  check_rejected("log<1,0>", "at least 2 bits");
  check_rejected("log<9,127>", "at most 8 bits");
  check_rejected("log<8,128>", "outside float32");
  check_rejected("ternary<-0.5>", "[0, 1)");
  check_rejected("ternary<nan>", "[0, 1)");
  check_rejected("ternary<1>", "[0, 1)");
  check_rejected("residual_sign<5,1,1,1,1,1>", "arguments");
  check_rejected("block_fp<1,8,127,[16]>", "between 2 and 24");
  check_rejected("block_fp<8,9,127,[16]>", "1 to 8 bits");
  check_rejected("block_fp<8,8,200,[16]>", "outside float32");
  check_rejected("block_minifloat<8,8,8,[16]>", "mantissa");
  check_rejected("block_minifloat<8,4,9,[16]>", "1 to 8 bits");
  check_rejected("block_log<9,8,[16]>", "between 2 and 8");
  check_rejected("mxint<1,8,[1,32]>", "between 2 and 24");
  check_rejected("mxint<8,1,[1,32]>", "2 to 8 bits");
  check_rejected("mxfp8_e4m3<0>", "at least 1");
  check_rejected("mxint8<-4>", "at least 1");
}

TEST_CASE("runtime formats are validated when they are made, naming the format and the rule") {
  using Catch::Contains;
  CHECK_THROWS_AS(format(fixed_fmt{.width = 0, .frac = 3}), error);
  CHECK_THROWS_WITH(format(fixed_fmt{.width = 0, .frac = 3}), Contains("fixed<0,3>") && Contains("at least 1 bit"));
  CHECK_THROWS_WITH(format(minifloat_fmt{.exp_bits = 9, .man_bits = 3, .bias = 7}),
                    Contains("minifloat<13,9,7>") && Contains("at most 8 exponent"));
  CHECK_THROWS_WITH(format(mx_fmt{.element = mx_element::fp4_e2m1, .block_size = 0}),
                    Contains("mxfp4_e2m1<0>") && Contains("block size"));
  CHECK_NOTHROW(format(formats::e4m3));
  CHECK(format(formats::e4m3).is_elementwise());
  CHECK_FALSE(format(formats::mxfp4).is_elementwise());
}
