// `autograd notebook render` on lesson 01, as an instructor runs it: the
// Markdown keeps every cell with its output, and the HTML page renders the
// prose's lists, tables and emphasis (cmark-gfm) next to the code and output.
#define BOOST_TEST_MODULE notebook_render
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>
#include <string>

#include "autograd/error.h"
#include "notebooks/markers.h"
#include "notebooks/render.h"
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
  for (const char* part : {"<ol>", "<ul>", "<li>", "<table>", "<th>node</th>", "<td>$u = x^2$</td>",
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

BOOST_AUTO_TEST_SUITE(all_or_nothing)

// A lesson of one code cell whose program draws plot.png and prints nothing,
// and an --out holding the last render of it: its page, its plots folder.
struct OldRender {
  fs::path base = fs::temp_directory_path() / ("ag_render_swap_" + std::to_string(::getpid()));
  fs::path src = base / "src", bin = base / "bin", out = base / "out";
  OldRender() {
    fs::remove_all(base);
    for (const fs::path& d : {src, bin, out / "01_fake_files"}) fs::create_directories(d);
    std::ofstream(src / "01_fake.cpp") << "// %% [markdown]\n// # Fake\n// %%\nint x = 1;\n";
    std::ofstream(bin / "notebook_01_fake") << "#!/bin/sh\nmkdir -p \"$2\" && echo new > \"$2/plot.png\"\n";
    fs::permissions(bin / "notebook_01_fake", fs::perms::owner_all);
    std::ofstream(out / "01_fake.md") << "old page\n";
    std::ofstream(out / "01_fake_files" / "old.png") << "old plot\n";
  }
  ~OldRender() { fs::remove_all(base); }
  void render() const { render::render_lesson("01_fake", src, bin, out, render::Formats{true, true, false}); }
  // The old render, untouched, and no work folder left behind.
  void expect_old_render() const {
    BOOST_TEST(slurp(out / "01_fake.md") == "old page\n");
    BOOST_TEST(slurp(out / "01_fake_files" / "old.png") == "old plot\n");
    BOOST_TEST(!fs::exists(out / "01_fake_files" / "plot.png"));
    for (const fs::directory_entry& e : fs::directory_iterator(out)) {
      BOOST_TEST(e.path().filename().string().rfind(".autograd-render-", 0) != 0u, "left " << e.path());
    }
  }
};

bool refused_naming(const std::string& target, const std::string& what, const OldRender& r) {
  try {
    r.render();
  } catch (const ag::DataError& e) {
    BOOST_TEST(has(e.what(), target + " is " + what), e.what());
    BOOST_TEST(has(e.what(), "nothing of 01_fake was replaced"), e.what());
    return true;
  }
  return false;
}

// Before: the Markdown and the new plots were moved in, then the HTML's rename
// failed: a new page beside the old one, and the old plots gone.
BOOST_AUTO_TEST_CASE(a_directory_where_the_page_goes_blocks_the_whole_lesson) {
  const OldRender r;
  fs::create_directories(r.out / "01_fake.html");
  std::ofstream(r.out / "01_fake.html" / "mine.txt") << "mine\n";
  BOOST_TEST(refused_naming((r.out / "01_fake.html").string(), "a directory", r));
  r.expect_old_render();
  BOOST_TEST(slurp(r.out / "01_fake.html" / "mine.txt") == "mine\n");
}

BOOST_AUTO_TEST_CASE(a_file_where_the_plots_folder_goes_blocks_the_whole_lesson) {
  const OldRender r;
  fs::remove_all(r.out / "01_fake_files");
  std::ofstream(r.out / "01_fake_files") << "a file of mine\n";
  BOOST_TEST(refused_naming((r.out / "01_fake_files").string(), "a file", r));
  BOOST_TEST(slurp(r.out / "01_fake.md") == "old page\n");
  BOOST_TEST(slurp(r.out / "01_fake_files") == "a file of mine\n");
}

BOOST_AUTO_TEST_CASE(with_nothing_in_the_way_every_file_is_replaced_together) {
  const OldRender r;
  r.render();
  BOOST_TEST(has(slurp(r.out / "01_fake.md"), "# Fake"));
  BOOST_TEST(has(slurp(r.out / "01_fake.html"), "Fake"));
  BOOST_TEST(slurp(r.out / "01_fake_files" / "plot.png") == "new\n");
  BOOST_TEST(!fs::exists(r.out / "01_fake_files" / "old.png"));  // no stale plot beside the new ones
  std::size_t n = 0;
  for ([[maybe_unused]] const fs::directory_entry& e : fs::directory_iterator(r.out)) ++n;
  BOOST_TEST(n == 3u);  // the page, the Markdown, the plots: no work folder left
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

// The renderer library (notebooks/render.h), called directly on a small lesson.
BOOST_AUTO_TEST_SUITE(the_renderer)

const std::string kLesson =
    "#include <x>\n"                   // 1: code before the first cell
    "// %% [markdown]\n"               // 2
    "// # Title\n"                     // 3
    "//\n"                             // 4
    "// | a | b |\n// |---|---|\n// | 1 | 2 |\n"  // 5-7
    "// %%\n"                          // 8
    "NB_CELL { show(1 < 2); }\n"       // 9
    "// %%\n"                          // 10
    "NB_CELL { plot(); }\n";           // 11

std::string marker(const char* kind, const std::string& value) { return kind + value + nb::kMarkerEnd + "\n"; }

BOOST_AUTO_TEST_CASE(cells_are_split_at_their_markers_with_their_lines) {
  const std::vector<render::NotebookCell> cells = render::parse_notebook(kLesson);
  BOOST_TEST_REQUIRE(cells.size() == 4u);
  BOOST_TEST(!cells[0].markdown);
  BOOST_TEST(cells[1].markdown);
  BOOST_TEST(cells[1].text == "# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |");
  BOOST_TEST(cells[2].first_line == 9);
  BOOST_TEST(cells[2].last_line == 9);
  BOOST_TEST(cells[3].text == "NB_CELL { plot(); }");
}

BOOST_AUTO_TEST_CASE(output_lands_under_the_cell_that_printed_it) {
  std::vector<render::NotebookCell> cells = render::parse_notebook(kLesson);
  render::attach_output(cells, marker(nb::kCellMarker, "9") + "true\n" + marker(nb::kCellMarker, "11") +
                                   "drawing\n" + marker(nb::kImageMarker, "loss.png"));
  BOOST_TEST_REQUIRE(cells[2].output.size() == 1u);
  BOOST_TEST(cells[2].output[0].text == "true\n");
  BOOST_TEST_REQUIRE(cells[3].output.size() == 2u);
  BOOST_TEST(cells[3].output[1].is_image);
  const std::string md = render::to_markdown(cells, "lesson_files");
  BOOST_TEST(has(md, "```cpp\nNB_CELL { show(1 < 2); }\n```\n\n```text\ntrue\n```"), md);
  BOOST_TEST(has(md, "![loss.png](lesson_files/loss.png)"), md);
}

BOOST_AUTO_TEST_CASE(a_marker_outside_every_code_cell_is_an_error) {
  std::vector<render::NotebookCell> cells = render::parse_notebook(kLesson);
  BOOST_CHECK_THROW(render::attach_output(cells, marker(nb::kCellMarker, "3")), ag::Error);  // a prose line
  BOOST_CHECK_THROW(render::attach_output(cells, marker(nb::kImageMarker, "x.png")), ag::Error);  // before any cell
}

BOOST_AUTO_TEST_CASE(the_page_renders_prose_and_escapes_code) {
  std::vector<render::NotebookCell> cells = render::parse_notebook(kLesson);
  render::attach_output(cells, marker(nb::kCellMarker, "9") + "a < b\n");
  const std::string html = render::to_html(cells, "Lesson", fs::temp_directory_path().string());
  BOOST_TEST(has(html, "<h1>Title</h1>"), html);
  BOOST_TEST(has(html, "<table>"), html);
  BOOST_TEST(has(html, "show(1 &lt; 2)"), html);
  BOOST_TEST(has(html, "a &lt; b"), html);
}

BOOST_AUTO_TEST_CASE(the_lessons_are_the_numbered_sources_in_order) {
  const fs::path dir = fs::temp_directory_path() / ("ag_render_names_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* file : {"10_b.cpp", "01_a.cpp", "x.cpp", "2_c.cpp", "03_d.h"}) std::ofstream(dir / file) << "\n";
  BOOST_TEST(render::lesson_names(dir) == (std::vector<std::string>{"01_a", "10_b"}), boost::test_tools::per_element());
  BOOST_CHECK_THROW(render::lesson_names(dir / "missing"), ag::DataError);  // exit status 2
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
