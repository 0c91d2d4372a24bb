// `autograd notebook render` on lesson 01, as an instructor runs it: the
// Markdown keeps every cell with its output, and the HTML page renders the
// prose's lists, tables and emphasis (cmark-gfm) next to the code and output.
#define BOOST_TEST_MODULE notebook_render
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/cli_run.h"

namespace fs = std::filesystem;
using cli_test::has;
using cli_test::slurp;

namespace {

// Renders 01_tape into a scratch folder, once for the whole module.
struct Rendered {
  fs::path dir = fs::temp_directory_path() / ("ag_render_" + std::to_string(::getpid()));
  cli_test::Run run;
  std::string md, html;
  Rendered() {
    fs::remove_all(dir);
    run = cli_test::run("notebook render --only 01_tape --out '" + dir.string() + "'");
    md = slurp(dir / "01_tape.md");
    html = slurp(dir / "01_tape.html");
  }
  ~Rendered() { fs::remove_all(dir); }
};

const Rendered& rendered() {
  static const Rendered once;
  return once;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(render)

BOOST_AUTO_TEST_CASE(writes_both_files) {
  const Rendered& r = rendered();
  BOOST_TEST(r.run.status == 0, r.run.err);
  BOOST_TEST(r.run.err.empty(), r.run.err);
  BOOST_TEST(!r.md.empty());
  BOOST_TEST(!r.html.empty());
}

BOOST_AUTO_TEST_CASE(html_renders_the_prose_as_markdown) {
  const Rendered& r = rendered();
  // Lesson 01's prose has a numbered list, bullet lists, a table and bold text.
  for (const char* part : {"<ol>", "<ul>", "<li>", "<table>", "<th>node</th>", "<td>u = x^2</td>",
                           "<strong>Forward</strong>", "<h1>"}) {
    BOOST_TEST(has(r.html, part), "the HTML lacks " << part);
  }
  BOOST_TEST(!has(r.html, "| node |"), "a table was left as text");
  BOOST_TEST(!has(r.html, "**"), "bold markers were left as text");
}

BOOST_AUTO_TEST_CASE(html_keeps_code_and_its_output) {
  const Rendered& r = rendered();
  BOOST_TEST(has(r.html, "<pre class=\"code\">"));
  BOOST_TEST(has(r.html, "<pre class=\"output\">"));
  BOOST_TEST(has(r.html, "saved bytes"), "the tape listing (a cell's output) is missing");
  BOOST_TEST(has(r.html, "&lt;"), "code is not escaped");  // the lesson's code has '<' (std::cout <<)
}

BOOST_AUTO_TEST_CASE(markdown_has_every_cell_and_its_output) {
  const Rendered& r = rendered();
  BOOST_TEST(has(r.md, "```cpp"));
  BOOST_TEST(has(r.md, "saved bytes"));
  BOOST_TEST(has(r.md, "| node | forward | local derivative |"), "the prose table is kept as Markdown");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(a_failing_lesson)

// Before: the lesson's plots folder was deleted before the lesson ran, so a
// lesson that failed took the last good render's plots with it.
BOOST_AUTO_TEST_CASE(leaves_the_last_good_render_as_it_was) {
  const Rendered& good = rendered();
  BOOST_TEST_REQUIRE(good.run.status == 0, good.run.err);
  const fs::path out = fs::temp_directory_path() / ("ag_render_fail_" + std::to_string(::getpid()));
  fs::remove_all(out);
  fs::copy(good.dir, out, fs::copy_options::recursive);
  const std::string graph = slurp(out / "01_tape_files" / "graph.png");
  // A "lesson" that writes a plot, prints a line and then fails its check.
  const fs::path bin = out / "bin";
  fs::create_directories(bin);
  const fs::path fake = bin / "notebook_01_tape";
  std::ofstream(fake) << "#!/bin/sh\nmkdir -p \"$2\" && echo broken > \"$2/graph.png\"\necho 'a check failed' >&2\nexit 1\n";
  fs::permissions(fake, fs::perms::owner_all);
  const cli_test::Run r =
      cli_test::run("notebook render --only 01_tape --bin-dir '" + bin.string() + "' --out '" + out.string() + "'");
  BOOST_TEST(r.status != 0);
  BOOST_TEST(slurp(out / "01_tape_files" / "graph.png") == graph);
  BOOST_TEST(slurp(out / "01_tape.md") == good.md);
  for (const fs::directory_entry& e : fs::directory_iterator(out)) {
    BOOST_TEST(e.path().filename().string().rfind(".autograd-render-", 0) != 0u, "left " << e.path());
  }
  fs::remove_all(out);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(hostile_folder_names)

// Before: the lesson put its --out folder into gnuplot's `set output "..."`,
// where a backquote runs a command and a line break ends the string.
BOOST_AUTO_TEST_CASE(a_backquote_or_newline_in_out_runs_nothing) {
  const fs::path base = fs::temp_directory_path() / ("ag_render_evil_" + std::to_string(::getpid()));
  fs::remove_all(base);
  const fs::path pwned = base.string() + "-PWNED";
  ::setenv("AG_TEST_PWNED", pwned.c_str(), 1);
  const fs::path out = base / "a`touch \"$AG_TEST_PWNED\"`\"b\nset output 'c";
  fs::create_directories(out);
  const cli_test::Run r = cli_test::run("notebook render --only 05_gradcheck --format md --out " + cli_test::quote(out.string()));
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(!fs::exists(pwned));
  BOOST_TEST(slurp(out / "05_gradcheck_files" / "v_curve.png").rfind("\x89PNG", 0) == 0u);
  fs::remove_all(base);
  fs::remove(pwned);
}

BOOST_AUTO_TEST_SUITE_END()
