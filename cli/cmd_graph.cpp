// autograd graph: a tape drawn as a Graphviz graph (DOT, and PNG through `dot`):
// one box per node with its op, shape and what it saves for backward.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "check/listing.h"
#include "cli/cli.h"
#include "data/csv.h"
#include "data/atomic_write.h"
#include "ops/layernorm.h"
#include "ops/ops.h"

extern char** environ;

namespace cli {

namespace {

const char* kWhat = "layernorm-composed, layernorm-fused, rmsnorm-composed, rmsnorm-fused, batchnorm-composed, demo";

// Records the chosen expression on `tape`; returns a one-line title.
std::string record(ag::Tape& tape, const std::string& what, const arma::mat& x) {
  if (what == "demo") {
    ag::Var xv = tape.leaf(x.row(0).cols(0, 1), "x");
    ag::Var w = tape.leaf({{0.5, -1.0}, {0.25, 2.0}}, "W"), b = tape.leaf({{0.1, -0.1}}, "b");
    ag::sum(ag::tanh(ag::matmul(xv, w) + b));
    return "y = sum(tanh(x W + b))";
  }
  const arma::uword d = x.n_cols;
  ag::Var xv = tape.leaf(x, "x");
  ag::Var gamma = tape.leaf(arma::mat(1, d, arma::fill::ones), "gamma");
  ag::Var beta = tape.leaf(arma::mat(1, d, arma::fill::zeros), "beta");
  if (what == "layernorm-composed") ag::layernorm_composed(xv, gamma, beta);
  else if (what == "layernorm-fused") ag::layernorm_fused(xv, gamma, beta);
  else if (what == "rmsnorm-composed") ag::rmsnorm_composed(xv, gamma);
  else if (what == "rmsnorm-fused") ag::rmsnorm_fused(xv, gamma);
  else if (what == "batchnorm-composed") ag::batchnorm_composed(xv, gamma, beta);
  else throw UsageError("--what must be one of " + std::string(kWhat) + "; got '" + what + "'");
  return what + " of a " + ag::shape_str(x) + " input";
}

// "saves: #4 (2x4), own 32 B" for a node that keeps something for backward.
std::string saved_label(const ag::Tape& tape, std::size_t id) {
  const ag::Node& n = tape.node(id);
  if (!n.backward || tape.node_saved_bytes(id) == 0) return "";  // keeps nothing for backward
  std::string s;
  for (std::size_t k : n.saved) {
    s += (s.empty() ? "" : ", ") + (k == id ? std::string("its output") : "#" + std::to_string(k)) + " (" +
         ag::shape_str(tape.value(k)) + ")";
  }
  if (n.extra_saved_bytes > 0) s += (s.empty() ? "" : ", ") + std::to_string(n.extra_saved_bytes) + " B of its own";
  return "saves: " + (s.empty() ? std::string("nothing") : s) + "\\n" + std::to_string(tape.node_saved_bytes(id)) +
         " bytes held";
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '"' ? std::string("\\\"") : std::string(1, c));
  return out;
}

std::string to_dot(const ag::Tape& tape, const std::string& title) {
  std::ostringstream os;
  os << "digraph tape {\n  rankdir=TB;\n  labelloc=t;\n  label=\"" << escape(title) << "\\n" << tape.size()
     << " nodes, " << tape.saved_bytes() << " bytes held for backward\";\n"
     << "  node [fontname=\"Helvetica\", fontsize=11];\n";
  for (std::size_t i = 0; i < tape.size(); ++i) {
    const ag::Node& n = tape.node(i);
    const bool leaf = n.inputs.empty();
    const bool fused = n.op.find("fused") != std::string::npos;
    const std::string saved = saved_label(tape, i);
    os << "  n" << i << " [shape=" << (leaf ? "ellipse" : "box") << ", style=filled, fillcolor=\""
       << (leaf ? "#e8f0fe" : fused ? "#fde68a" : "#f3f4f6") << "\", label=\"#" << i << " " << escape(ag::op_label(n)) << "\\n"
       << ag::shape_str(n.value) << (saved.empty() ? "" : "\\n" + saved) << "\"];\n";
    for (std::size_t k : n.inputs) os << "  n" << k << " -> n" << i << ";\n";
  }
  os << "}\n";
  return os.str();
}

// A file name as dot reads it: "-V" would be an option, "./-V" is a file.
std::string as_operand(const std::string& path) { return path.rfind('-', 0) == 0 ? "./" + path : path; }

// Runs `dot -Tpng dot_file -opng` without a shell. Returns false when dot is not installed.
bool render_png(const std::string& dot_file, const std::string& png) {
  std::vector<std::string> argv_s = {"dot", "-Tpng", "-o" + as_operand(png), as_operand(dot_file)};
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  // dot's own messages go to /dev/null: the error below is the one line the user sees.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, "dot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err == ENOENT) return false;
  if (err != 0) throw std::runtime_error(std::string("cannot run dot: ") + std::strerror(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw ag::DataError(png + ": dot could not write the PNG (exit status " + std::to_string(WEXITSTATUS(status)) + ")");
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(png, ec) || std::filesystem::file_size(png, ec) == 0) {
    throw ag::DataError(png + ": dot exited without writing the PNG");
  }
  return true;
}

// The input fits the expression, and --out and --png are two files.
void require_usable(const std::string& what, const arma::mat& x, const std::string& out, const std::string& png) {
  if (what == "demo" && x.n_cols < 2) throw UsageError("--what demo needs an input row of at least 2 values");
  if (what.rfind("layernorm", 0) == 0 && x.n_cols < 2) throw UsageError("LayerNorm needs at least 2 values per row");
  if (what == "batchnorm-composed" && x.n_rows < 2) throw UsageError("BatchNorm needs at least 2 rows");
  if (!png.empty() && out.empty()) throw UsageError("--png needs --out FILE for the DOT text it draws from");
  auto resolved = [](const std::string& p) {
    return std::filesystem::weakly_canonical(std::filesystem::absolute(p).lexically_normal());
  };
  if (!png.empty() && resolved(png) == resolved(out)) {
    throw UsageError("--png and --out name the same file (" + out + "); the PNG would overwrite the DOT text");
  }
}

}  // namespace

int cmd_graph(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string what = "layernorm-composed", input = "3,1,5,7; 1.133,-0.299,0.503,0.25", out, png;
  options.add_options()
      ("what", po::value(&what)->default_value(what), (std::string("the expression: ") + kWhat).c_str())
      ("input", po::value(&input)->default_value(input), "the input x, rows separated by ';'")
      ("out", po::value(&out), "write the DOT text here (default: print it)")
      ("png", po::value(&png), "also draw it as a PNG with Graphviz's dot (needs --out)");
  po::variables_map vm;
  if (!parse_options("graph",
                     "Writes the tape of a LayerNorm (composed or fused) or a demo expression as a\n"
                     "Graphviz graph: each node's op, shape and the tensors it saves for backward.\n"
                     "Example: autograd graph --what layernorm-fused --out ln.dot --png ln.png",
                     options, args, vm)) {
    return 0;
  }
  const arma::mat x = ag::parse_matrix(input, "--input");
  require_usable(what, x, out, png);
  ag::Tape tape;
  const std::string dot = to_dot(tape, record(tape, what, x));
  if (out.empty()) {
    std::cout << dot;
    return 0;
  }
  ag::write_file_atomic(out, dot);
  std::cout << "wrote " << out << " (" << tape.size() << " nodes, " << tape.saved_bytes() << " bytes held for backward)\n";
  if (png.empty()) return 0;
  if (!render_png(out, png)) {
    std::cerr << "autograd graph: the dot program is not installed (Debian package graphviz); " << out
              << " was written, " << png << " was not\n";
    return 1;
  }
  std::cout << "wrote " << png << "\n";
  return 0;
}

}  // namespace cli
