// autograd: the command line of the teaching autograd framework.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "autograd/blas_threads.h"
#include "autograd/format.h"
#include "autograd/memory.h"
#include "autograd/tape.h"
#include "cli/cli.h"
#include "data/atomic_write.h"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>&);
};

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"demo", "a tiny expression, its tape and its gradients", cli::cmd_demo},
      {"gradcheck", "check every op's backward against finite differences", cli::cmd_gradcheck},
      {"train", "train an MLP (or a GPT on text); write metrics, curves and a checkpoint", cli::cmd_train},
      {"sample", "print new words (lines) from a GPT trained by autograd train --model gpt", cli::cmd_sample},
      {"compare", "train one model per --impl, --norm or --norm-placement value; overlay the curves", cli::cmd_compare},
      {"eval", "loss (and accuracy) of a saved model: an MLP on a dataset, a GPT on a text", cli::cmd_eval},
      {"fuzz", "check random expression graphs against finite differences", cli::cmd_fuzz},
      {"bench", "time LayerNorm, per-op overhead and training against PyTorch", cli::cmd_bench},
      {"notebook", "run the lessons and render them to Markdown/HTML", cli::cmd_notebook},
      {"grade", "build a student's assignment file and grade its backward", cli::cmd_grade},
      {"layernorm", "LayerNorm step by step; its backward composed, fused and numeric", cli::cmd_layernorm},
      {"graph", "draw a tape (LayerNorm composed or fused, or a demo) as Graphviz DOT/PNG", cli::cmd_graph},
  };
  return list;
}

void print_usage(std::ostream& os) {
  os << "usage: autograd <command> [options]    (autograd <command> --help for its options)\n\ncommands:\n";
  for (const Command& c : commands()) {
    os << "  " << c.name << std::string(14 - std::string(c.name).size(), ' ') << c.summary << "\n";
  }
}

// Runs one subcommand. Every error is one line on stderr: 2 for bad usage or
// input (including a path that cannot be read or written), 1 for anything else.
int run_command(const Command& c, const std::vector<std::string>& rest) {
  // A message may quote a file (a checkpoint's description, a CSV field, a
  // file name): escaped, so it cannot send the terminal escape sequences.
  auto fail = [&c](const std::exception& e, int status) {
    std::cerr << "autograd " << c.name << ": " << ag::printable(ag::one_line(e.what())) << "\n";
    return status;
  };
  try {
    const int status = c.run(rest);
    // Output that never arrived is not success: a full disk, /dev/full, a closed pipe.
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::cerr << "autograd " << c.name << ": cannot write the standard output ("
                << std::strerror(errno != 0 ? errno : EIO) << ")\n";
      return 1;
    }
    return status;
  } catch (const cli::UsageError& e) {
    return fail(e, 2);
  } catch (const ag::DataError& e) {
    return fail(e, 2);
  } catch (const cli::po::error& e) {
    return fail(e, 2);
  } catch (const std::filesystem::filesystem_error& e) {
    return fail(e, 2);
  } catch (const std::exception& e) {
    return fail(e, 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Past a file-size limit (ulimit -f) the kernel's default for SIGXFSZ kills
  // the program mid-write, with no message and a temporary left behind. Ignored,
  // the write fails with EFBIG instead, and write_file_atomic reports it,
  // removes its temporary and leaves the old file as it was.
  std::signal(SIGXFSZ, SIG_IGN);
  // The same for a reader that went away (`autograd gradcheck | head -1`): the
  // write fails with EPIPE, and the check after the command says so on stderr
  // instead of the program dying silently (or gnuplot's pipe killing it).
  std::signal(SIGPIPE, SIG_IGN);
  // The process-wide settings are the program's to ask for, once, here: freed
  // memory kept for reuse (autograd/memory.h), and BLAS on one thread, so that
  // a run's only threads are its shards (autograd/blas_threads.h, train/shards.h).
  ag::use_memory_policy();
  ag::set_blas_threads(1);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(std::cerr);
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(std::cout);
    return 0;
  }
  for (const Command& c : commands()) {
    if (args[0] == c.name) return run_command(c, std::vector<std::string>(args.begin() + 1, args.end()));
  }
  std::cerr << "autograd: unknown command '" << args[0] << "' (autograd --help lists the commands)\n";
  return 2;
}
