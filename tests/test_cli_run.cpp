#define BOOST_TEST_MODULE cli_run
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "tests/cli_run.h"

// The one runner of the command-line tests (tests/cli_run.h): what each of
// them reads as "the program's exit status", stdout and stderr.
namespace fs = std::filesystem;
using cli_test::run;
using cli_test::run_shell;

BOOST_AUTO_TEST_CASE(the_exit_status_is_the_programs) {
  BOOST_TEST(run_shell("exit 0").status == 0);
  BOOST_TEST(run_shell("exit 3").status == 3);
  BOOST_TEST(run("no-such-command").status == 2);
  BOOST_TEST(run("--help").status == 0);
}

// Before: one runner read a command ended by a signal as -1, the two others as
// 128 + N, so a crash and "could not run" looked alike in one suite only.
BOOST_AUTO_TEST_CASE(a_command_ended_by_a_signal_is_128_plus_the_signal) {
  // The shell itself killed (std::system sees a signalled shell) ...
  BOOST_TEST(run_shell("kill -KILL $$").status == 128 + 9);
  // ... and a command that the shell runs as its child (the shell reports it).
  BOOST_TEST(run_shell("sh -c 'kill -USR1 $$'; exit $?").status == 128 + 10);
  BOOST_TEST(run_shell("sh -c 'kill -TERM $$'").status == 128 + 15);
}

BOOST_AUTO_TEST_CASE(stdout_and_stderr_are_captured_apart) {
  const cli_test::Run r = run_shell("echo out; echo err >&2; printf 'no newline'");
  BOOST_TEST(r.out == "out\nno newline");
  BOOST_TEST(r.err == "err\n");
  const cli_test::Run cli = run("no-such-command");
  BOOST_TEST(cli.out.empty());
  BOOST_TEST(cli.err == "autograd: unknown command 'no-such-command' (autograd --help lists the commands)\n");
}

BOOST_AUTO_TEST_CASE(stdin_is_empty_and_the_folder_is_the_callers) {
  BOOST_TEST(run_shell("wc -c").out == "0\n");
  const fs::path here = fs::temp_directory_path();
  BOOST_TEST(run_shell("pwd -P", here).out == fs::canonical(here).string() + "\n");
  BOOST_TEST(run_shell("cd /nonexistent-folder-of-the-runner-test", {}).status != 0);
}
