// The one way the tests run a command line (the built `autograd`, as a user
// runs it): through /bin/sh, in a folder of the caller's choice, stdin from
// /dev/null, stdout and stderr captured, the status as the shell reports it.
#pragma once

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace cli_test {

namespace fs = std::filesystem;

struct Run {
  int status = -1;  // the exit status, or 128 + N when a signal N ended the command
  std::string out, err;
  double seconds = 0;  // wall time, for a report (never asserted)
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A string as one /bin/sh word, whatever it holds.
inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// std::system's wait status as a shell's $? says it: the exit status, or
// 128 + N for a command that signal N ended. (Whether sh runs the command as
// its child, and reports 128 + N itself, or execs it, and is ended by the
// signal, depends on the shell; both read the same here.) -1: no shell ran.
inline int shell_status(int raw) {
  if (raw == -1) return -1;
  if (WIFEXITED(raw)) return WEXITSTATUS(raw);
  if (WIFSIGNALED(raw)) return 128 + WTERMSIG(raw);
  return -1;
}

// Runs the shell command line `command` (its words quoted by the caller) in
// `cwd` (empty: this process's folder), stdin from /dev/null.
inline Run run_shell(const std::string& command, const fs::path& cwd = {}) {
  static std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("ag_cli_run_" + std::to_string(rd()));
  fs::create_directories(dir);
  const std::string into = cwd.empty() ? "" : "cd " + quote(cwd.string()) + " && ";
  const std::string cmd = "(" + into + command + ") </dev/null >" + quote((dir / "out").string()) + " 2>" +
                          quote((dir / "err").string());
  const auto start = std::chrono::steady_clock::now();
  const int raw = std::system(cmd.c_str());
  Run r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.status = shell_status(raw);
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  fs::remove_all(dir);
  return r;
}

// Runs `autograd ARGS` (ARGS quoted by the caller); `env` is put before the
// program ("OPENBLAS_NUM_THREADS=1").
inline Run run(const std::string& args, const std::string& env = "", const fs::path& cwd = {}) {
  return run_shell(env + " " + quote(AUTOGRAD_CLI) + " " + args, cwd);
}

}  // namespace cli_test
