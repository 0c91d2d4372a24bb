// autograd grade: grade one student's file, or a whole class (--class DIR).
//
// The trusted parent is this program. The student's file is built, in a
// sandbox and with a time limit, into a child program with the exercise's
// adapter (assignments/grading/run.h); the child gets freshly drawn inputs on stdin and
// sends back only its gradients. The score is computed here (kit::score):
// nothing the child prints, writes or exits with can raise it.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>

#include "autograd/format.h"
#include "cli/cli.h"
#include "cli/grade_pack.h"
#include "assignments/grading/class.h"
#include "assignments/grading/formats.h"
#include "assignments/grading/pack.h"
#include "assignments/grading/run.h"
#include "train/plot.h"

namespace cli {

namespace fs = std::filesystem;
using namespace grading;  // the grader library (assignments/grading/)

namespace {

// The banner and the text report, or (--format) the document alone on stdout, the banner on stderr.
// A submission refused before it is built (a folder without a .cpp) gets its document too.
int grade_one(const Submission& sub, const std::string& name, const ClassOptions& o, bool refuse_links) {
  const GradeSetup setup = prepare_grading(name, o.sandbox, o.timeout, o.compile_timeout);
  const RemoveOnExit remove{setup.root};
  std::ostream& log = o.format == Format::Text ? std::cout : std::cerr;
  const RunContext run{name, sandbox_label(setup.isolation),
                       isolation_text(setup.isolation, setup.run_limits, setup.precompiled)};
  log << "building " << ag::printable(sub.label) << " for the '" << name << "' exercise ...\n" << run.banner << "\n"
      << std::flush;
  const unsigned seed = o.seed >= 0 ? unsigned(o.seed) : std::random_device{}();
  const Graded graded{sub.label, sub.refused.empty() ? grade_submission(setup, sub.file, seed, 0, refuse_links)
                                                     : refused_outcome(setup, seed, sub.refused)};
  kill_orphans();
  if (o.format != Format::Text) {
    std::cout << format_one(o.format, run, graded) << std::flush;
    return 0;  // the document was written; its score is in it
  }
  write_text_report(std::cout, graded);
  const Outcome& out = graded.outcome;
  return out.report.score() == out.report.max_score() && out.status == "graded" ? 0 : 1;
}

}  // namespace

namespace {

// The class's mistakes as a bar chart beside the CSV: drawn here, because the grading library
// may not link the plotting one. Without gnuplot, one line says so; the table is written anyway.
void draw_mistakes(const ClassRun& run, std::ostream& log) {
  if (run.chart.empty()) return;
  if (run.mistakes.empty()) {
    log << "no mistakes to chart\n";
    return;
  }
  std::vector<ag::Bar> bars;
  for (const MistakeCount& m : run.mistakes) bars.push_back({m.mistake, double(m.students.size())});
  const ag::PlotResult drawn = ag::plot_bars(run.chart.string(), bars, run.chart_title, "students");
  log << (drawn.written ? "the mistakes charted in " + ag::printable(run.chart.string()) : ag::printable(drawn.message))
      << "\n" << std::flush;
}

int grade_files(const std::string& file, const std::string& exercise, const std::string& class_dir,
                const std::string& csv, ClassOptions& o);
}  // namespace

namespace {

// The options as given, before they are checked.
struct GradeArgs {
  std::string file, exercise, class_dir, csv, sandbox = "auto", format = "text", pack, out, student_pack;
  long long jobs = 1, seed = -1;
  bool resume = false;
  double timeout = 10, compile_timeout = 60;
};

ClassOptions checked(const GradeArgs& a, bool seed_given) {
  ClassOptions o;
  o.jobs = int(require_positive("--jobs", a.jobs));
  o.timeout = require_positive("--timeout", a.timeout);
  o.compile_timeout = require_positive("--compile-timeout", a.compile_timeout);
  if (o.jobs > 64) throw UsageError("--jobs must be at most 64, got " + std::to_string(a.jobs));
  if (o.timeout > 3600 || o.compile_timeout > 3600) throw UsageError("--timeout and --compile-timeout must be at most 3600 s");
  if (seed_given) o.seed = require_non_negative("--seed", a.seed);
  if (o.seed > 4294967295LL) throw UsageError("--seed must be at most 4294967295, got " + std::to_string(a.seed));
  o.sandbox = a.sandbox;
  o.resume = a.resume;
  if (!format_named(a.format, o.format)) {
    throw UsageError("--format must be text, json, gradescope, prairielearn or junit, got '" + a.format + "'");
  }
  if (a.sandbox != "auto" && a.sandbox != "bwrap" && a.sandbox != "user" && a.sandbox != "none") {
    throw UsageError("--sandbox must be auto, bwrap, user or none, got '" + a.sandbox + "'");
  }
  return o;
}

// The options of `autograd grade`, bound onto `a`.
po::options_description grade_options(GradeArgs& a) {
  po::options_description options("options");
  options.add_options()
      ("file", po::value(&a.file), "the student's .cpp file (e.g. assignments/softmax/softmax.cpp), or a student's "
       "folder (with --exercise: its NAME.cpp, else its only .cpp)")
      ("exercise", po::value(&a.exercise), "the exercise (a folder of assignments/; default: from the file)")
      ("class", po::value(&a.class_dir), "grade every .cpp file (or student folder) in this folder")
      ("csv", po::value(&a.csv), "with --class: write one row per submission to this CSV file, and beside it "
       "NAME.feedback/ (a file per student), NAME.mistakes.txt and NAME.mistakes.png (docs/grading.md)")
      ("resume", po::bool_switch(&a.resume), "with --class and --csv: keep the CSV's rows (a run stopped by Ctrl-C) "
       "and grade only the students without one")
      ("jobs", po::value(&a.jobs)->default_value(1), "with --class: submissions graded at the same time")
      ("timeout", po::value(&a.timeout)->default_value(10, "10"), "seconds a student's program may run")
      ("compile-timeout", po::value(&a.compile_timeout)->default_value(60, "60"), "CPU seconds a compile may use (its wall clock: 4 times that)")
      ("seed", po::value(&a.seed), "draw the inputs from this seed (default: a fresh one every run)")
      ("format", po::value(&a.format)->default_value("text"), "text, json, gradescope (results.json), prairielearn "
       "(results.json) or junit (XML): the document on stdout, the progress on stderr (docs/grading.md)")
      ("pack", po::value(&a.pack), "gradescope: with --exercise and --out, write Gradescope's autograder zip (docs/grading.md, \"Packs\")")
      ("out", po::value(&a.out), "with --pack: the zip to write")
      ("student-pack", po::value(&a.student_pack), "write what students get into this new folder: the source without "
       "the solutions, the lesson answers and the hidden cases")
      ("sandbox", po::value(&a.sandbox)->default_value("auto"), "auto, bwrap, user (as root in a container without user namespaces) or none (see docs/grading.md)");
  return options;
}

}  // namespace

int cmd_grade(const std::vector<std::string>& args) {
  GradeArgs a;
  po::options_description options = grade_options(a);
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  if (!parse_options("grade", "autograd grade FILE.cpp\nautograd grade --class DIR --exercise NAME --csv scores.csv "
                     "[--jobs N] [--timeout S]\nautograd grade --pack gradescope --exercise NAME --out NAME-gradescope.zip\n"
                     "autograd grade --student-pack DIR\nBuilds the student's file into a sandboxed program, sends it freshly "
                     "drawn inputs, and scores the gradients it returns, with a hint for each wrong one.\n"
                     "Exit status: 0 full marks (--class, or a --format other than text: the CSV or the document was written), 1 not full marks or the file does "
                     "not build, 2 bad usage or a broken exercise.spec, 3 the grader cannot grade here (no compiler, a noexec TMPDIR, a "
                     "failing sandbox, or for --sandbox auto no control group to bound the totals).",
                     options, args, vm, &positional)) {
    return 0;
  }
  if (!a.pack.empty() || !a.out.empty() || !a.student_pack.empty()) {
    return write_pack({a.pack, a.exercise, a.out, a.student_pack, !a.file.empty() || !a.class_dir.empty()});
  }
  ClassOptions o = checked(a, vm.count("seed") > 0);
  // The caller's open descriptors (a log, a checkout, a socket) are not the
  // grader's business: dropped before any thread or child starts, so that not
  // even the grader's own /proc/PID/fd leads to them.
  ::close_range(3, ~0U, 0);
  install_interrupt_cleanup();
  remove_folders_of_dead_grades();
  remove_groups_of_dead_grades();
  try {
    return grade_files(a.file, a.exercise, a.class_dir, a.csv, o);
  } catch (const GraderError& e) {
    std::cerr << "autograd grade: the grader cannot grade here: " << e.what() << "\n";
    return 3;
  }
}

namespace {

int grade_files(const std::string& file, const std::string& exercise, const std::string& class_dir,
                const std::string& csv, ClassOptions& o) {
  if (!class_dir.empty()) {
    if (!file.empty()) throw UsageError("give either FILE or --class DIR, not both");
    if (exercise.empty()) throw UsageError("--class needs --exercise NAME");
    o.dir = class_dir;
    o.csv = csv;
    o.exercise = exercise_of(fs::path(class_dir) / "x.cpp", exercise);
    draw_mistakes(grade_class(o), o.format == Format::Text ? std::cout : std::cerr);
    return 0;
  }
  if (!csv.empty() || o.resume) throw UsageError(std::string(o.resume ? "--resume" : "--csv") + " goes with --class DIR");
  if (file.empty()) throw UsageError("which file? autograd grade FILE.cpp");
  if (fs::is_directory(file)) {  // one student's folder, as Gradescope's /autograder/submission
    if (exercise.empty()) throw UsageError("grading the folder " + ag::printable(file) + " needs --exercise NAME");
    const std::string name = known_exercise(exercise);
    return grade_one(from_folder(file, file, name), name, o, true);
  }
  if (!fs::is_regular_file(file)) throw UsageError("no such file: " + file);
  return grade_one({file, file, ""}, exercise_of(file, exercise), o, false);
}

}  // namespace

}  // namespace cli
