// Running the built `autograd` program from a test, as a user runs it.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace cli_test {

namespace fs = std::filesystem;

struct Run {
  int status = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `autograd ARGS` through the shell (ARGS quoted by the caller), capturing
// stdout and stderr; `env` is put before the program ("OPENBLAS_NUM_THREADS=1").
inline Run run(const std::string& args, const std::string& env = "") {
  static std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("ag_cli_run_" + std::to_string(rd()));
  fs::create_directories(dir);
  const std::string cmd = env + " '" + AUTOGRAD_CLI + "' " + args + " >'" + (dir / "out").string() +
                          "' 2>'" + (dir / "err").string() + "'";
  const int raw = std::system(cmd.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  fs::remove_all(dir);
  return r;
}

// A string as one /bin/sh word, whatever it holds.
inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace cli_test
