// The sandbox against the cases of issue 25: the caller's open log, folder
// and socket stay out of the child's reach at compile and at run time (with
// bwrap and without); the totals hold (processes, memory of all processes,
// /tmp and the work folder), each named when it is hit; the child's bytes are
// shown as text; stdout past its cap is cut while it is read; and the
// grader's own broken environment is its error (exit 3), not a student's 0.
#define BOOST_TEST_MODULE cli_grade_sandbox
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <thread>

#include "cli_grade.h"

using namespace cli_grade;

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

namespace {

const std::string kIncludes = "#include <dirent.h>\n#include <fcntl.h>\n#include <sys/socket.h>\n#include <sys/wait.h>\n"
                              "#include <csignal>\n#include <cstring>\n#include <string>\n";

// A softmax answer that first runs `body` once (in the child, at run time).
std::string with_body(const std::string& body) {
  return kHead + kIncludes + "static void hostile() {\n" + body + "}\n"
         "arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy) {\n"
         "  static bool once = false;\n  if (!once) { once = true; hostile(); }\n"
         "  const arma::vec s = arma::sum(dy % y, 1);\n  return y % (dy.each_col() - s);\n}\n";
}

// Descriptors an instructor's shell holds (exec 7>>grades.log; exec 8<checkout; a socket as 9),
// open in this process without O_CLOEXEC, so that `autograd grade` inherits them.
struct CallerDescriptors {
  fs::path log = scratch() / "grades.log";
  int peer = -1;
  ino_t socket_inode = 0;
  CallerDescriptors() {
    std::ofstream(log).flush();
    int pair[2];
    ::socketpair(AF_UNIX, SOCK_STREAM, 0, pair);
    // Each opened high first, so that placing one at 7, 8 or 9 never closes another.
    const int high[3] = {::fcntl(::open(log.c_str(), O_WRONLY | O_APPEND), F_DUPFD, 100),
                         ::fcntl(::open(AUTOGRAD_SOURCE_DIR, O_RDONLY | O_DIRECTORY), F_DUPFD, 100),
                         ::fcntl(pair[0], F_DUPFD, 100)};
    peer = ::fcntl(pair[1], F_DUPFD_CLOEXEC, 100);
    for (int k = 0; k < 3; ++k) ::dup2(high[k], 7 + k);
    struct stat st {};
    ::fstat(9, &st);
    socket_inode = st.st_ino;
  }
  ~CallerDescriptors() {
    for (int fd : {7, 8, 9, peer}) ::close(fd);
  }
  // Nothing was written into the socket (no byte waits to be read).
  bool socket_untouched() const {
    char c;
    return ::recv(peer, &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(the_callers_log_folder_and_socket_stay_out_of_reach) {
  const CallerDescriptors fds;
  const std::string socket_name = "socket:[" + std::to_string(fds.socket_inode) + "]";
  // Its own descriptors (a pipe the program makes) are no concern: those that lead to the caller's are.
  const std::string callers = "l == \"" + fds.log.string() + "\" || l == \"" AUTOGRAD_SOURCE_DIR "\" || l == \"" +
                              socket_name + "\"";
  const std::string body =
      "  if (::write(7, \"alice.cpp graded, score: 5/5\\n\", 29) > 0) std::fprintf(stderr, \"GOT the log\\n\");\n"
      "  if (::openat(8, \"assignments/solutions/softmax.cpp\", O_RDONLY) >= 0) std::fprintf(stderr, \"GOT openat\\n\");\n"
      "  if (::fchdir(8) == 0 && ::chdir(\"..\") == 0) std::fprintf(stderr, \"GOT fchdir\\n\");\n"
      "  if (::write(9, \"x\", 1) > 0) std::fprintf(stderr, \"GOT the socket\\n\");\n"
      "  const std::string self = \"/proc/self/fd\", parent = \"/proc/\" + std::to_string(::getppid()) + \"/fd\";\n"
      "  for (const std::string& dir : {self, parent}) {\n"
      "    DIR* d = ::opendir(dir.c_str());\n"
      "    while (dirent* e = d ? ::readdir(d) : nullptr) {\n"
      "      char link[4096] = {};\n"
      "      if (::readlink((dir + \"/\" + e->d_name).c_str(), link, sizeof link - 1) <= 0) continue;\n"
      "      const std::string l = link;\n"
      "      if (" + callers + ") std::fprintf(stderr, \"GOT %s/%s -> %s\\n\", dir.c_str(), e->d_name, link);\n"
      "    }\n"
      "    if (d) ::closedir(d);\n"
      "  }\n";
  const fs::path at_run = write("fds_run.cpp", with_body(body));
  const fs::path at_compile = write("fds_compile.cpp", "// exercise: softmax\n#include \"/proc/self/fd/8/assignments/solutions/softmax.cpp\"\n");
  for (const std::string sandbox : {"auto", "none"}) {
    if (sandbox == "auto" && !bwrap_starts()) continue;  // it refuses there (test_cli_grade_trust)
    const Run run = grade("--sandbox " + sandbox + " " + quote(at_run.string()));
    BOOST_TEST(run.status == 0, sandbox << "\n" << run.out << run.err);  // it still answers right
    BOOST_TEST(!has(run.out, "GOT"), sandbox << "\n" << run.out);
    const Run compiled = grade("--sandbox " + sandbox + " " + quote(at_compile.string()));
    BOOST_TEST(has(compiled.out, "does not compile"), sandbox << "\n" << compiled.out << compiled.err);
    BOOST_TEST(percent(compiled.out) == 0, compiled.out);
  }
  BOOST_TEST(slurp(fds.log).empty(), slurp(fds.log));
  BOOST_TEST(fds.socket_untouched());
}

BOOST_AUTO_TEST_CASE(a_fork_bomb_stops_at_the_process_limit_and_the_report_names_it) {
  // --timeout 60 here and below: generous, for a loaded machine; no limit in these tests is about time.
  const Run r = grade("--timeout 60 " + quote(write("forks.cpp", with_body(
      "  int n = 0;\n"
      "  for (int i = 0; i < 300; ++i) { const pid_t p = ::fork(); if (p == 0) { ::pause(); ::_exit(0); } if (p > 0) ++n; }\n"
      "  std::fprintf(stderr, \"forked %d\\n\", n);\n")).string()));
  if (has(r.out, "totals NOT bounded")) {
    BOOST_TEST_MESSAGE("no cgroup can be made here: the process total is not bounded, and the banner says so");
    return;
  }
  const std::smatch m = [&] { std::smatch s; std::regex_search(r.out, s, std::regex("forked (\\d+)")); return s; }();
  BOOST_TEST_REQUIRE(m.size() == 2, r.out << r.err);
  BOOST_TEST(std::stoi(m[1]) < 64, r.out);
  BOOST_TEST(has(r.out, "your program: it reached its limit of 64 processes at once (cgroup pids.max)"), r.out);
}

BOOST_AUTO_TEST_CASE(three_processes_of_700_mib_stop_at_the_memory_total) {
  const Run r = grade("--timeout 60 " + quote(write("memory.cpp", with_body(
      "  pid_t kids[3];\n"
      "  for (pid_t& k : kids) {\n"
      "    k = ::fork();\n"
      "    if (k == 0) {\n"  // volatile: the compiler may not drop the pages it touches
      "      volatile char* p = static_cast<char*>(std::malloc(700u << 20));\n"
      "      for (std::size_t i = 0; p && i < (700u << 20); i += 4096) p[i] = 1;\n"
      "      ::sleep(3);\n      ::_exit(p ? 0 : 1);\n    }\n"
      "  }\n"
      "  int killed = 0;\n"
      "  for (pid_t k : kids) { int st = 0; ::waitpid(k, &st, 0); killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL; }\n"
      "  std::fprintf(stderr, \"killed %d\\n\", killed);\n")).string()));
  if (has(r.out, "totals NOT bounded")) {
    BOOST_TEST_MESSAGE("no cgroup can be made here: the memory total is not bounded, and the banner says so");
    return;
  }
  BOOST_TEST(!has(r.out, "killed 0"), r.out << r.err);
  BOOST_TEST(has(r.out, "killed "), r.out << r.err);
  BOOST_TEST(has(r.out, "it reached its limit of 1024 MiB of memory for all its processes together"), r.out);
}

BOOST_AUTO_TEST_CASE(tmp_and_the_work_folder_hold_64_mib_each) {
  // Files of 512 KiB, under the 1 MiB file-size limit, until a write fails or 300 MiB are written.
  const Run r = grade("--timeout 60 " + quote(write("disk.cpp", with_body(
      "  static char block[512 << 10];\n"
      "  for (const char* where : {\"/tmp\", \".\"}) {\n"
      "    long total = 0;\n"
      "    for (int i = 0; i < 600; ++i) {\n"
      "      const std::string name = std::string(where) + \"/f\" + std::to_string(i);\n"
      "      const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT, 0600);\n"
      "      const long n = fd < 0 ? -1 : long(::write(fd, block, sizeof block));\n"
      "      if (fd >= 0) ::close(fd);\n"
      "      if (n <= 0) break;\n"
      "      total += n;\n"
      "      if (n < long(sizeof block)) break;\n"
      "    }\n"
      "    std::fprintf(stderr, \"wrote %ld MiB in %s\\n\", total >> 20, where);\n"
      "  }\n")).string()));
  BOOST_TEST_REQUIRE(r.status == 0, r.out << r.err);
  if (!sandboxed(r)) {
    BOOST_TEST(has(r.out, "the disk it writes is not bounded"));
    BOOST_TEST_MESSAGE("bwrap is not usable here: the disk is not bounded, and the banner says so");
    return;
  }
  BOOST_TEST(has(r.out, "its folder are tmpfs of 64 MiB"), r.out);
  for (const std::string where : {"/tmp", "."}) {
    std::smatch m;
    BOOST_TEST_REQUIRE(std::regex_search(r.out, m, std::regex("wrote (\\d+) MiB in " + std::regex_replace(where, std::regex("\\."), "\\."))));
    BOOST_TEST(std::stoi(m[1]) <= 64, r.out);
    BOOST_TEST(std::stoi(m[1]) >= 32, r.out);  // it did write, up to the limit
  }
}
