/*
 * command_check.cpp — see command_check.h.
 */
#include "sweep/config/command_check.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace sweep::config {

namespace {

namespace fs = std::filesystem;

bool has_placeholder(const std::string& word) { return word.find('{') != std::string::npos; }

bool is_executable_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const auto colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    if (is_executable_file(fs::path(dir.empty() ? "." : std::string(dir)) / name)) return true;
    if (colon == std::string_view::npos) return false;
    rest.remove_prefix(colon + 1);
  }
}

// Interpreters whose first argument that is not an option is a script file, and the options
// after which no script follows (the program is inline or a module).
struct Interpreter {
  std::string_view name;  // a basename, or a prefix ending in '*'
  std::vector<std::string_view> no_script_options;
};
const std::vector<Interpreter>& interpreters() {
  static const std::vector<Interpreter> table = {{"python*", {"-c", "-m", "-"}},
                                                 {"bash", {"-c", "-s", "-"}},
                                                 {"sh", {"-c", "-s", "-"}},
                                                 {"zsh", {"-c", "-s"}},
                                                 {"Rscript", {"-e"}},
                                                 {"node", {"-e", "-p", "-"}},
                                                 {"perl", {"-e", "-E"}},
                                                 {"ruby", {"-e"}},
                                                 {"julia", {"-e", "-E"}},
                                                 {"lua", {"-e", "-"}}};
  return table;
}

const Interpreter* interpreter_of(const std::string& program) {
  const std::string base = fs::path(program).filename().string();
  for (const Interpreter& i : interpreters()) {
    const bool prefix = i.name.back() == '*';
    const std::string_view stem = prefix ? i.name.substr(0, i.name.size() - 1) : i.name;
    if (prefix ? base.rfind(stem, 0) == 0 : base == stem) return &i;
  }
  return nullptr;
}

std::string from_where(const fs::path& working_dir) {
  return " (paths in the command are resolved from the directory sweep runs in, " +
         working_dir.string() + ": give an absolute path, or run sweep from that directory)";
}

}  // namespace

std::string check_command_files(const std::vector<std::string>& argv, const fs::path& working_dir) {
  std::size_t i = 0;
  // `env [-i] [NAME=VALUE]... program`: the program is the first other word.
  if (!argv.empty() && fs::path(argv[0]).filename() == "env" && !has_placeholder(argv[0])) {
    ++i;
    while (i < argv.size() && (argv[i].find('=') != std::string::npos || argv[i].front() == '-'))
      ++i;
  }
  if (i >= argv.size() || has_placeholder(argv[i])) return "";
  const std::string& program = argv[i];
  if (program.find('/') != std::string::npos) {
    const fs::path path =
        fs::path(program).is_absolute() ? fs::path(program) : working_dir / program;
    std::error_code error;
    if (!fs::exists(path, error))
      return "program '" + program + "' does not exist" + from_where(working_dir);
    if (!is_executable_file(path))
      return "program '" + program +
             "' is not an executable file (chmod +x, or name its "
             "interpreter: python3 " +
             program + ")";
  } else if (!on_path(program)) {
    return "program '" + program + "' is not on PATH (give its path, or install it)";
  }
  const Interpreter* interpreter = interpreter_of(program);
  if (!interpreter) return "";
  for (++i; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (has_placeholder(word)) return "";
    for (std::string_view option : interpreter->no_script_options)
      if (word == option) return "";
    if (word.size() > 1 && word.front() == '-') continue;  // an option of the interpreter
    const fs::path script = fs::path(word).is_absolute() ? fs::path(word) : working_dir / word;
    std::error_code error;
    if (!fs::is_regular_file(script, error))
      return "script '" + word + "' does not exist" + from_where(working_dir);
    return "";
  }
  return "";
}

}  // namespace sweep::config
