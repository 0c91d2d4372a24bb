// Issue 37: in class mode one submission found the class folder through
// /proc/PPID/cwd (the grader was run from it) and overwrote a classmate's file,
// whose row became "does not compile, 0/9". Each submission must be graded in a
// private copy that can see neither the class folder, nor the other
// submissions, nor the caller's working folder: with bwrap, and with
// --sandbox user (its own user, for containers without user namespaces).
//
// The attacker reports through its score: it answers right only when every
// attempt failed. --sandbox none shows the same attacker succeed (the issue's
// row, reproduced), so a pass elsewhere is the sandbox's, not a broken attack's.
#define BOOST_TEST_MODULE cli_grade_isolation
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include "cli_grade.h"

using namespace cli_grade;

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

namespace {

// Reads and writes through the grader's cwd (/proc/PPID/cwd), the class folder and the
// caller's folder by their paths, and the grading folder's siblings (the other private
// copies). Writes that land in the sandbox's own throwaway view (bwrap's tmpfs) are no gain.
const std::string kAttack = R"(#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <cstdlib>
#include <cstring>
#include <string>
namespace {
int gains = 0;
std::string own_path, own_name;
void try_write(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0 && ::write(fd, "int broken =\n", 13) == 13) ++gains;
  if (fd >= 0) ::close(fd);
}
// A gain only when it is the classmate's file that comes back.
void try_read(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  char text[4096] = {0};
  if (fd >= 0 && ::read(fd, text, sizeof text - 1) > 0 && std::strstr(text, "softmax_backward")) ++gains;
  if (fd >= 0) ::close(fd);
}
// A folder that is its own (with bwrap, the parent is bwrap's init, whose cwd is the submission's folder).
bool is_own(const std::string& dir) {
  char there[4096] = {0};
  return ::realpath(dir.c_str(), there) != nullptr && own_path == there;
}
// Every entry of `dir` but its own folder is a gain, and gets overwritten.
void try_list(const std::string& dir) {
  DIR* d = is_own(dir) ? nullptr : ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || name == own_name) continue;
    ++gains;
    try_write(dir + "/" + name + "/submission.cpp");
  }
  ::closedir(d);
}
void attack() {
  char self[4096] = {0};
  if (::getcwd(self, sizeof self - 1) == nullptr) return;
  own_path = self;
  own_name = std::strrchr(self, '/') + 1;
  const std::string cwd = "/proc/" + std::to_string(::getppid()) + "/cwd";
  if (!is_own(cwd)) {
    try_read(cwd + "/zoe/softmax.cpp");
    try_write(cwd + "/zoe/softmax.cpp");
    try_write(cwd + "/pwned");
    try_list(cwd);
  }
  try_read(CLASS "/zoe/softmax.cpp");
  try_write(CLASS "/zoe/softmax.cpp");
  try_write(CLASS "/pwned");
  try_write(CALLER "/pwned");
  for (int round = 0; round < 10; ++round) {  // the classmate's copy may be made while this runs (--jobs 2)
    try_list("..");
    for (int i = 0; i < 4; ++i) {
      if ("sub-" + std::to_string(i) != own_name) try_write("../sub-" + std::to_string(i) + "/submission.cpp");
    }
    ::usleep(100000);
  }
}
}  // namespace
arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy) {
  static const bool once = (attack(), true);
  (void)once;
  const arma::vec s = arma::sum(dy % y, 1);
  return gains == 0 ? arma::mat(y % (dy.each_col() - s)) : arma::mat(arma::zeros(y.n_rows, y.n_cols));
}
)";

struct ClassRun {
  Run run;
  fs::path dir;
  std::string zoe_before, zoe_after;
};

// A class of two, mallory (the attacker) graded first, from inside the class folder, as in the issue.
// --jobs 2 lets the classmate's copy exist while the attacker runs; --jobs 1 grades the
// classmate after the attack, as in the issue.
ClassRun attacked_class(const std::string& sandbox, int jobs) {
  ClassRun c;
  c.dir = scratch() / ("class-" + sandbox);
  const fs::path caller = scratch() / ("caller-" + sandbox);
  fs::create_directories(c.dir / "zoe");
  fs::create_directories(caller);
  c.zoe_before = kHead + kRight;
  std::ofstream(c.dir / "zoe" / "softmax.cpp") << c.zoe_before;
  std::ofstream(c.dir / "mallory.cpp") << kHead << "#define CLASS \"" << c.dir.string() << "\"\n#define CALLER \""
                                       << caller.string() << "\"\n" << kAttack;
  ::chmod(c.dir.c_str(), 0700);  // --sandbox user grades only a class folder closed to other users
  c.run = cli_test::run("grade --class . --exercise softmax --jobs " + std::to_string(jobs) + " --sandbox " + sandbox + " --csv " +
                            quote((scratch() / (sandbox + ".csv")).string()),
                        "", c.dir);
  c.zoe_after = slurp(c.dir / "zoe" / "softmax.cpp");
  return c;
}

void expect_nothing_reached(const ClassRun& c, const std::string& sandbox) {
  BOOST_TEST(c.run.status == 0, c.run.out << c.run.err);
  BOOST_TEST(has(c.run.out, "sandbox: " + sandbox), c.run.out);
  BOOST_TEST(has(c.run.out, "mallory.cpp: graded, 5/5 (100%)"), c.run.out);  // every attempt failed
  BOOST_TEST(has(c.run.out, "zoe/softmax.cpp: graded, 5/5 (100%)"), c.run.out);
  BOOST_TEST(c.zoe_after == c.zoe_before);
  BOOST_TEST(!fs::exists(c.dir / "pwned"));
  BOOST_TEST(!fs::exists(scratch() / ("caller-" + sandbox) / "pwned"));
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_attack_works_without_a_sandbox) {
  const ClassRun c = attacked_class("none", 1);
  BOOST_TEST(has(c.run.out, "NOT isolated"), c.run.out);
  BOOST_TEST(has(c.run.out, "mallory.cpp: graded, 0/5"), c.run.out);
  BOOST_TEST(has(c.run.out, "zoe/softmax.cpp: does not compile, 0/5"), c.run.out);  // the issue's row
  BOOST_TEST(c.zoe_after != c.zoe_before);
  BOOST_TEST(fs::exists(c.dir / "pwned"));
}

BOOST_AUTO_TEST_CASE(bwrap_keeps_each_submission_to_its_private_copy) {
  if (!bwrap_starts()) {
    BOOST_TEST_MESSAGE("skipped: bwrap cannot start here");
    return;
  }
  expect_nothing_reached(attacked_class("bwrap", 2), "bwrap");
}

BOOST_AUTO_TEST_CASE(its_own_user_keeps_each_submission_to_its_private_copy) {
  if (::geteuid() != 0) {
    BOOST_TEST_MESSAGE("skipped: --sandbox user needs root");
    return;
  }
  expect_nothing_reached(attacked_class("user", 2), "user");
}

BOOST_AUTO_TEST_CASE(its_own_user_refuses_a_class_folder_open_to_others) {
  if (::geteuid() != 0) {
    BOOST_TEST_MESSAGE("skipped: --sandbox user needs root");
    return;
  }
  const fs::path dir = scratch() / "open-class";
  fs::create_directories(dir);
  std::ofstream(dir / "ann.cpp") << kHead << kRight;
  ::chmod(dir.c_str(), 0755);
  const Run r = grade("--class " + quote(dir.string()) + " --exercise softmax --sandbox user --csv " +
                      quote((scratch() / "open.csv").string()));
  BOOST_TEST(r.status == 3, r.out << r.err);
  BOOST_TEST(has(r.err, "is open to other users (mode 755)"), r.err);
  BOOST_TEST(has(r.err, "chmod o-rwx"), r.err);
  BOOST_TEST(!fs::exists(scratch() / "open.csv"));
}
