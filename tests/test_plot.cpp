// The training-curve plot (train/plot.h): drawn by the real gnuplot into a
// real PNG, whatever the caller's file name and title hold.
#define BOOST_TEST_MODULE plot
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "train/plot.h"

namespace fs = std::filesystem;

namespace {

std::vector<ag::Curve> two_epochs() {
  ag::Curve c;
  c.label = "run";
  c.history = {{10, 1, 1.0, 1.2, 0.5, 0.4, 0.1}, {20, 2, 0.5, 0.7, 0.8, 0.7, 0.2}};
  return {c};
}

// A fresh folder for one test, removed at the end.
struct Scratch {
  fs::path dir;
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "autograd-test-plot-XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool only_entry_is(const fs::path& dir, const std::string& name) {
  std::size_t n = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    ++n;
    if (e.path().filename() != name) return false;
  }
  return n == 1;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile_names)

// Before the fix, a newline in the output path or the title ended the gnuplot
// command and the next line ran as one: system("touch ...") created the file.
BOOST_AUTO_TEST_CASE(a_newline_in_the_path_or_title_runs_nothing) {
  BOOST_TEST_REQUIRE(ag::gnuplot_available());
  Scratch s;
  const fs::path pwned = s.dir / "PWNED";
  // A file name cannot hold '/', so the payload names the victim through the environment.
  ::setenv("AUTOGRAD_TEST_PWNED", pwned.c_str(), 1);
  const std::string payload = "x\nsystem(\"touch $AUTOGRAD_TEST_PWNED\")\nset output 'y";
  const fs::path folder = s.dir / ("inj" + payload);
  fs::create_directory(folder);
  const fs::path png = folder / ("curves" + payload + ".png");
  const ag::PlotResult r = ag::plot_curves(png.string(), two_epochs(), "title " + payload + " `touch " + pwned.string() + "`");
  BOOST_TEST(r.written, r.message);
  BOOST_TEST(!fs::exists(pwned));
  BOOST_TEST(slurp(png).rfind("\x89PNG", 0) == 0u);
  BOOST_TEST(only_entry_is(folder, png.filename().string()));  // no temporaries left behind
}

// gnuplot itself prints each literal back. Before, a text that opened with a
// quote ('quoted') became '''quoted', which gnuplot 5.4 reads as an empty string
// and a stray token: the title was lost and gnuplot stopped at that line.
BOOST_AUTO_TEST_CASE(gnuplot_reads_each_literal_back_as_the_text) {
  BOOST_TEST_REQUIRE(ag::gnuplot_available());
  Scratch s;
  const std::vector<std::string> texts = {"plain", "it's", "'quoted' first", "''two", "ends'", "'", "back\\slash `date` @x $y"};
  std::string script;
  for (const std::string& t : texts) script += "print " + ag::gnuplot_literal(t) + "\n";
  std::ofstream(s.dir / "print.gp") << script;
  const std::string printed = s.dir.string() + "/printed.txt";
  BOOST_TEST_REQUIRE(std::system(("gnuplot " + (s.dir / "print.gp").string() + " 2> " + printed).c_str()) == 0, slurp(printed));
  std::string want;
  for (const std::string& t : texts) want += t + "\n";
  BOOST_TEST(slurp(printed) == want);
}

BOOST_AUTO_TEST_CASE(a_quote_in_the_title_is_drawn_not_run) {
  Scratch s;
  const fs::path png = s.dir / "curves.png";
  const ag::PlotResult r = ag::plot_curves(png.string(), two_epochs(), "it's ' ; system('touch x') ; '");
  BOOST_TEST(r.written, r.message);
  BOOST_TEST(!fs::exists(s.dir / "x"));
  BOOST_TEST(!fs::exists("x"));
}

BOOST_AUTO_TEST_CASE(a_hostile_reference_label_is_drawn_not_run) {
  Scratch s;
  ::setenv("AUTOGRAD_TEST_PWNED", (s.dir / "PWNED").c_str(), 1);
  const ag::PlotStyle style{ag::TimeAxis::Step, false, 0.9, "it's ' ; system(\"touch $AUTOGRAD_TEST_PWNED\") ; '\nsystem('touch x')"};
  const ag::PlotResult r = ag::plot_curves((s.dir / "curves.png").string(), two_epochs(), "t", style);
  BOOST_TEST(r.written, r.message);
  BOOST_TEST(!fs::exists(s.dir / "PWNED"));
  BOOST_TEST(!fs::exists("x"));
}

// The class's mistakes as bars (autograd grade --class): a label is data, never a command,
// even with a quote, a backslash or a newline that would end gnuplot's inline data.
BOOST_AUTO_TEST_CASE(a_hostile_bar_label_is_drawn_not_run) {
  BOOST_TEST_REQUIRE(ag::gnuplot_available());
  Scratch s;
  ::setenv("AUTOGRAD_TEST_PWNED", (s.dir / "PWNED").c_str(), 1);
  const std::vector<ag::Bar> bars = {{"wrong sign", 3},
                                     {"it's \" 1\ne\nsystem(\"touch $AUTOGRAD_TEST_PWNED\")\n", 2},
                                     {"back\\slash \x1b[2J", 1}};
  const fs::path png = s.dir / "mistakes.png";
  const ag::PlotResult r = ag::plot_bars(png.string(), bars, "softmax: it's ' ; system('touch x') ; '", "students");
  BOOST_TEST(r.written, r.message);
  BOOST_TEST(!fs::exists(s.dir / "PWNED"));
  BOOST_TEST(!fs::exists("x"));
  BOOST_TEST(slurp(png).rfind("\x89PNG", 0) == 0u);
  BOOST_TEST(only_entry_is(s.dir, "mistakes.png"));  // no temporaries left behind
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(styles)

// The language model's style (linear loss axis, the baseline as a line) draws
// another picture than the default; an infinite or zero reference draws none.
BOOST_AUTO_TEST_CASE(the_reference_line_and_the_linear_axis_change_the_picture) {
  Scratch s;
  const auto draw = [&](const std::string& name, const ag::PlotStyle& style) {
    const ag::PlotResult r = ag::plot_curves((s.dir / name).string(), two_epochs(), "t", style);
    BOOST_TEST_REQUIRE(r.written, r.message);
    return slurp(s.dir / name);
  };
  const std::string plain = draw("plain.png", {});
  const std::string linear = draw("linear.png", {ag::TimeAxis::Epoch, false, 0, ""});
  const std::string line = draw("line.png", {ag::TimeAxis::Epoch, false, 0.9, "bigram baseline"});
  const std::string inf = draw("inf.png", {ag::TimeAxis::Epoch, false, std::numeric_limits<double>::infinity(), "bigram baseline"});
  BOOST_TEST((plain != linear));
  BOOST_TEST((linear != line));
  BOOST_TEST((inf == linear));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(what_is_replaced)

BOOST_AUTO_TEST_CASE(a_symlink_at_the_target_is_left_alone_and_its_victim_untouched) {
  Scratch s;
  const fs::path victim = s.dir / "victim.txt";
  std::ofstream(victim) << "precious";
  const fs::path png = s.dir / "curves.png";
  fs::create_symlink(victim, png);
  const ag::PlotResult r = ag::plot_curves(png.string(), two_epochs(), "t");
  BOOST_TEST(!r.written);
  BOOST_TEST(r.message.find("is not a regular file") != std::string::npos, r.message);
  BOOST_TEST(slurp(victim) == "precious");
  BOOST_TEST(fs::is_symlink(png));
}

BOOST_AUTO_TEST_CASE(a_fifo_at_the_target_is_not_replaced) {
  Scratch s;
  const fs::path png = s.dir / "curves.png";
  BOOST_TEST_REQUIRE(::mkfifo(png.c_str(), 0600) == 0);
  const ag::PlotResult r = ag::plot_curves(png.string(), two_epochs(), "t");
  BOOST_TEST(!r.written);
  BOOST_TEST(fs::is_fifo(png));
}

BOOST_AUTO_TEST_CASE(an_earlier_plot_is_replaced_by_a_complete_one) {
  Scratch s;
  const fs::path png = s.dir / "curves.png";
  std::ofstream(png) << "old";
  const ag::PlotResult r = ag::plot_curves(png.string(), two_epochs(), "t");
  BOOST_TEST(r.written, r.message);
  const std::string bytes = slurp(png);
  BOOST_TEST_REQUIRE(bytes.size() > 20u);
  BOOST_TEST(bytes.substr(bytes.size() - 8, 4) == "IEND");  // the last chunk: the file is whole
  BOOST_TEST(only_entry_is(s.dir, "curves.png"));
}

BOOST_AUTO_TEST_SUITE_END()
