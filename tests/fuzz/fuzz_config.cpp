/*
 * fuzz_config.cpp — fuzzes the YAML config reader: load_config_text on arbitrary text.
 *
 * A ConfigError (with at least one message) or another sweep::Error is the expected answer to a
 * bad config; a config that loads is also asked for what `sweep` prints and stores of it (trial
 * count, shape, effective YAML). Anything else is a finding.
 */
#include <string>

#include "fuzz_target.h"
#include "sweep/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kFuzzMaxLen) return -1;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const sweep::config::SweepConfig config = sweep::config::load_config_text(text, "fuzz.yaml");
    fuzz_require(config.trial_count() > 0, "a loaded config has at least one trial");
    fuzz_require(!config.shape().empty(), "a loaded config has a shape");
    fuzz_require(sweep::config::effective_yaml(config) == text,
                 "with no --set, the effective YAML is the file's text");
  } catch (const sweep::config::ConfigError& e) {
    fuzz_require(!e.messages().empty(), "a ConfigError says what is wrong");
  } catch (const sweep::Error&) {
  }
  return 0;
}
