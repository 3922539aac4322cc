// frame_impl.h — for_each_in_frame's template body (included by messages.h only).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "common/check.h"

namespace sweep::cluster {

template <class Each>
void for_each_in_frame(std::string_view frame, Each&& each) {
  std::size_t at = 0;
  while (at < frame.size()) {
    std::uint64_t size = 0;
    if (frame.size() - at < sizeof size) throw Error("cluster: a damaged frame (a cut length)");
    std::memcpy(&size, frame.data() + at, sizeof size);
    at += sizeof size;
    if (size > frame.size() - at) throw Error("cluster: a damaged frame (a cut message)");
    each(frame.substr(at, size));
    at += size;
  }
}

}  // namespace sweep::cluster
