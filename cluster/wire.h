/*
 * wire.h — the byte layout every cluster message is written in: little helpers that append and
 * read fixed-size numbers and length-prefixed strings.
 *
 * Binary, not JSON, because metric points are the bulk of the traffic (200,000 a second from a
 * few ranks must cost rank 0 little more than the store's own insert): a point is ~40 bytes and
 * decodes with memcpy. Every rank runs the same binary on the same kind of machine (an MPI job),
 * so numbers are written in the host's own byte order. A Reader that runs past its end throws
 * sweep::Error: a damaged message is refused, never read out of bounds.
 */
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/check.h"

namespace sweep::cluster {

class Writer {
 public:
  template <class T>
  requires std::is_arithmetic_v<T> Writer& put(T value) {
    const char* bytes = reinterpret_cast<const char*>(&value);
    out_.append(bytes, sizeof value);
    return *this;
  }
  template <class E>
  requires std::is_enum_v<E> Writer& put(E value) {
    return put(static_cast<std::underlying_type_t<E>>(value));
  }
  Writer& put(std::string_view text) {
    put(static_cast<std::uint64_t>(text.size()));
    out_.append(text.data(), text.size());
    return *this;
  }
  Writer& put(const char* text) { return put(std::string_view(text)); }
  Writer& put(const std::string& text) { return put(std::string_view(text)); }

  std::string take() { return std::move(out_); }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : in_(bytes) {}

  template <class T>
  requires std::is_arithmetic_v<T> T get() {
    need(sizeof(T));
    T value;
    std::memcpy(&value, in_.data() + at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::string get_string() {
    const auto size = get<std::uint64_t>();
    need(size);
    std::string text(in_.substr(at_, size));
    at_ += size;
    return text;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  void need(std::uint64_t size) const {
    if (size > in_.size() - at_)
      throw Error("cluster: a damaged message (it ends " +
                  std::to_string(size - (in_.size() - at_)) + " bytes early)");
  }

  std::string_view in_;
  std::size_t at_ = 0;
};

}  // namespace sweep::cluster
