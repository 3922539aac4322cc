/*
 * fuzz_target.h — what every harness in tests/fuzz shares: the libFuzzer entry point it defines,
 * its input bound, and a check for invariants of what a reader returned.
 *
 * A harness (fuzz_NAME.cpp) defines LLVMFuzzerTestOneInput and treats the errors the code under
 * test throws on purpose (sweep::Error) as the expected way to refuse bad input; anything else —
 * a crash, a sanitizer report, another exception escaping, a hang, unbounded memory, a broken
 * invariant (fuzz_require) — is a finding. The same file is linked with libFuzzer (scripts/fuzz)
 * or with replay_main.cpp (the ctest replay test).
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifndef SWEEP_FUZZ_MAX_LEN
#error "SWEEP_FUZZ_MAX_LEN comes from the target's MAX_LEN in tests/fuzz/CMakeLists.txt"
#endif

// The longest input the target takes: MAX_LEN in tests/fuzz/CMakeLists.txt, which scripts/fuzz
// also passes to libFuzzer as -max_len. Harnesses ignore longer inputs; the replay test fails on
// a longer file (it would test nothing).
inline constexpr std::size_t kFuzzMaxLen = SWEEP_FUZZ_MAX_LEN;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// Aborts (a finding) when a result the code under test returned breaks `what`.
inline void fuzz_require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz: invariant broken: %s\n", what);
  std::abort();
}
