/*
 * metric_line.cpp — a one-pass reader of a JSON object's top level.
 *
 * Only the top level matters (numeric members are metrics), so nested objects and arrays are
 * skipped by counting brackets outside strings, iteratively. Member names are decoded (escapes,
 * \uXXXX with surrogate pairs to UTF-8); string values are skipped. Anything that is not valid
 * JSON (plus the three bare tokens) makes the line "not a metric line", which the trial keeps as
 * a log line, as before.
 */
#include "scheduler/metric_line.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "common/format.h"

namespace sweep::scheduler {

namespace {

// The value of a JSON number too large or too small for a double (from_chars reports both the
// same way): ±infinity for 1e999, as JSON readers give, and ±0 for 1e-999 (a tiny learning rate
// must not read as an infinite one). Out of range means a decimal exponent past about +308 or
// below about -323, so the sign of the exponent of the first significant digit decides.
double out_of_range(std::string_view number) {
  const bool negative = !number.empty() && number.front() == '-';
  const std::size_t e = number.find_first_of("eE");
  const std::string_view mantissa = number.substr(0, e);
  std::int64_t exponent = 0;  // saturates: any exponent past 10^12 is out of range the same way
  if (e != std::string_view::npos) {
    std::size_t i = e + 1;
    const bool minus = i < number.size() && number[i] == '-';
    if (i < number.size() && (number[i] == '-' || number[i] == '+')) ++i;
    for (; i < number.size(); ++i)
      exponent = std::min<std::int64_t>(exponent * 10 + (number[i] - '0'), 1'000'000'000'000);
    if (minus) exponent = -exponent;
  }
  // Where the first significant digit sits: its power of ten is `exponent + place`.
  const std::size_t point = std::min(mantissa.find('.'), mantissa.size());
  const std::size_t first = mantissa.find_first_of("123456789");
  std::int64_t place = 0;
  if (first != std::string_view::npos)
    place = first < point ? static_cast<std::int64_t>(point - first - 1)
                          : -static_cast<std::int64_t>(first - point);
  const double magnitude = exponent + place > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  return negative ? -magnitude : magnitude;
}

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  bool at_end() const { return i_ >= s_.size(); }
  std::size_t position() const { return i_; }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  bool eat_word(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  void skip_space() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }

  // A JSON string at the cursor, decoded into `out` (when given). False when malformed. A \u
  // escape of half a surrogate pair with no other half names no character: it is decoded as
  // U+FFFD and lone_surrogate() says so, for the caller to decide (JSON's grammar allows it).
  bool string(std::string* out) {
    lone_surrogate_ = false;
    if (!eat('"')) return false;
    while (!at_end()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;  // raw control bytes: not JSON
      if (c != '\\') {
        if (out) *out += c;
        continue;
      }
      if (at_end()) return false;
      const char e = s_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          if (out) *out += e;
          break;
        case 'b':
          if (out) *out += '\b';
          break;
        case 'f':
          if (out) *out += '\f';
          break;
        case 'n':
          if (out) *out += '\n';
          break;
        case 'r':
          if (out) *out += '\r';
          break;
        case 't':
          if (out) *out += '\t';
          break;
        case 'u': {
          std::uint32_t code = 0;
          if (!hex4(code)) return false;
          if (code >= 0xD800 && code <= 0xDBFF) {  // a high surrogate wants its low half
            const std::size_t after_high = i_;
            std::uint32_t low = 0;
            if (eat_word("\\u") && hex4(low) && low >= 0xDC00 && low <= 0xDFFF) {
              code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            } else {
              i_ = after_high;  // what follows is read on its own
              code = kReplacement;
              lone_surrogate_ = true;
            }
          } else if (code >= 0xDC00 && code <= 0xDFFF) {
            code = kReplacement;
            lone_surrogate_ = true;
          }
          if (out) append_utf8(*out, code);
          break;
        }
        default:
          return false;
      }
    }
    return false;  // unterminated
  }

  // The last string() held a lone surrogate.
  bool lone_surrogate() const { return lone_surrogate_; }

  // A number, or NaN / Infinity / -Infinity. nullopt when there is none at the cursor.
  std::optional<double> number() {
    if (eat_word("NaN")) return std::numeric_limits<double>::quiet_NaN();
    if (eat_word("Infinity")) return std::numeric_limits<double>::infinity();
    if (eat_word("-Infinity")) return -std::numeric_limits<double>::infinity();
    // JSON's grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
    const std::size_t start = i_;
    eat('-');
    if (eat('0')) {
    } else if (digit()) {
      while (digit()) {
      }
    } else {
      i_ = start;
      return std::nullopt;
    }
    if (eat('.')) {
      if (!digit()) return fail_at(start);
      while (digit()) {
      }
    }
    if (eat('e') || eat('E')) {
      if (!eat('+')) eat('-');
      if (!digit()) return fail_at(start);
      while (digit()) {
      }
    }
    double value = 0;
    const auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + i_, value);
    if (end != s_.data() + i_) return fail_at(start);
    if (ec == std::errc::result_out_of_range) value = out_of_range(s_.substr(start, i_ - start));
    return value;
  }

  // Skips one JSON value that is not a number (string, literal, object, array). False when
  // malformed.
  bool skip_value() {
    const char c = peek();
    if (c == '"') return string(nullptr);
    if (eat_word("true") || eat_word("false") || eat_word("null")) return true;
    if (c != '{' && c != '[') return false;
    // Nested: count brackets, skipping strings; the inside is not checked in detail.
    std::size_t depth = 0;
    while (!at_end()) {
      const char d = s_[i_];
      if (d == '"') {
        if (!string(nullptr)) return false;
        continue;
      }
      ++i_;
      if (d == '{' || d == '[') ++depth;
      if (d == '}' || d == ']') {
        if (--depth == 0) return true;
      }
    }
    return false;
  }

 private:
  bool digit() {
    if (at_end() || s_[i_] < '0' || s_[i_] > '9') return false;
    ++i_;
    return true;
  }
  std::optional<double> fail_at(std::size_t start) {
    i_ = start;
    return std::nullopt;
  }
  bool hex4(std::uint32_t& out) {
    if (i_ + 4 > s_.size()) return false;
    out = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      out <<= 4;
      if (h >= '0' && h <= '9')
        out |= static_cast<std::uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f')
        out |= static_cast<std::uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        out |= static_cast<std::uint32_t>(h - 'A' + 10);
      else
        return false;
    }
    return true;
  }
  static void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  static constexpr std::uint32_t kReplacement = 0xFFFD;

  std::string_view s_;
  std::size_t i_ = 0;
  bool lone_surrogate_ = false;
};

// Why metrics were left out of a line: their names hold a lone surrogate.
std::string left_out_text(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return "a metric name holds a \\u escape of half a surrogate pair, which is no character (shown "
         "as U+FFFD): " +
         text;
}

// "step" and "epoch": whole numbers in [0, 2^53].
bool whole_in_range(double v) {
  return std::isfinite(v) && v >= 0 && v <= kMaxStep && v == std::floor(v);
}

}  // namespace

MetricLine parse_metric_line(std::string_view line) {
  MetricLine out;
  MetricLine not_metric;  // what every malformed line gives: it stays a log line
  // A UTF-8 byte order mark first (a Windows tool's first line, Python's utf-8-sig): skipped, as
  // JSON readers do (nlohmann's, Python's json with utf-8-sig). The fuzzer found it.
  if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  Reader r(line);
  r.skip_space();
  if (!r.eat('{')) return not_metric;
  std::unordered_map<std::string, std::size_t> index;                 // name → position in staged
  std::vector<std::pair<std::string, std::optional<double>>> staged;  // every member, by name
  std::optional<double> step, epoch;
  std::string_view step_text, epoch_text;  // as written, for a refusal's reason
  bool step_given = false, epoch_given = false;
  r.skip_space();
  if (!r.eat('}')) {
    for (;;) {
      r.skip_space();
      std::string name;
      if (!r.string(&name)) return not_metric;
      const bool unnamed = r.lone_surrogate();
      r.skip_space();
      if (!r.eat(':')) return not_metric;
      r.skip_space();
      const std::size_t value_at = r.position();
      const std::optional<double> number = r.number();
      const std::string_view written = line.substr(value_at, r.position() - value_at);
      if (!number && !r.skip_value()) return not_metric;
      if (unnamed) {
        // Its name is no Unicode text, so the store cannot keep it under that name: left out,
        // and said, while the line's other metrics are kept.
        if (number) out.left_out.push_back(name);
      } else if (name == "step" || name == "epoch") {
        (name == "step" ? step_given : epoch_given) = true;
        (name == "step" ? step : epoch) = number;
        (name == "step" ? step_text : epoch_text) = written;
      } else {
        // A repeated name keeps its first place and its last value, as JSON readers do; when
        // that last value is not a number ({"lr": 1, "lr": null}), the name is no metric.
        const auto [it, added] = index.emplace(name, staged.size());
        if (added)
          staged.emplace_back(std::move(name), number);
        else
          staged[it->second].second = number;
      }
      r.skip_space();
      if (r.eat(',')) continue;
      if (r.eat('}')) break;
      return not_metric;
    }
  }
  r.skip_space();
  if (!r.at_end()) return not_metric;
  for (auto& [name, value] : staged)
    if (value)
      out.values.emplace_back(std::move(name), *value);
    else
      out.not_numbers.push_back(std::move(name));
  if (out.values.empty()) {  // {"step": 3} or {"note": "x"}: nothing to record
    MetricLine none;
    none.not_numbers = std::move(out.not_numbers);
    if (!out.left_out.empty()) none.problem = left_out_text(out.left_out);
    return none;
  }

  // The store keeps a metric by its name: one without ({"": 1}, a program's f"{prefix}{name}"
  // with both empty) has nowhere to go.
  for (const auto& [name, value] : out.values)
    if (name.empty()) out.problem = "a metric name is empty";
  if (step_given && out.problem.empty()) {
    if (!step || !whole_in_range(*step))
      out.problem = "\"step\" must be a whole number from 0 to 2^53, got " +
                    (step ? std::string(step_text) : std::string("a value that is not a number"));
    else
      out.step = static_cast<std::int64_t>(*step);
  }
  if (epoch_given && out.problem.empty()) {
    if (!epoch || !std::isfinite(*epoch) || *epoch < 0 || *epoch > kMaxStep)
      out.problem = "\"epoch\" must be a number from 0 to 2^53, got " +
                    (epoch ? std::string(epoch_text) : std::string("a value that is not a number"));
    else if (*epoch == std::floor(*epoch))
      out.epoch = static_cast<std::int64_t>(*epoch);
    else
      out.epoch_position = *epoch;
  }
  if (!out.problem.empty()) {
    out.values.clear();
    out.step.reset();
    out.epoch.reset();
    out.epoch_position.reset();
    return out;
  }
  out.is_metric_line = true;
  if (!out.left_out.empty()) out.note = "left out " + left_out_text(out.left_out);
  return out;
}

}  // namespace sweep::scheduler
