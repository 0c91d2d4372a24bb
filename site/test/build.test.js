// site/build.js on hand-made lessons, without a browser: math typeset and no
// `$` of code touched, scaffolding hidden, checks folded, and a lesson whose
// check failed shown on its own page while the build exits 1 naming it.
//
//   node site/test/build.test.js SCRATCH_DIR
"use strict";

const assert = require("assert");
const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");

const scratch = path.resolve(process.argv[2] || "site-build-test");
const root = path.resolve(__dirname, "..", "..");
const lessons = path.join(scratch, "lessons"), page = path.join(scratch, "page"), out = path.join(scratch, "site");
fs.rmSync(scratch, { recursive: true, force: true });
fs.mkdirSync(lessons, { recursive: true });
fs.mkdirSync(page, { recursive: true });
for (const f of ["index.html", "engine.js"]) fs.writeFileSync(path.join(page, f), f === "index.html" ? '<body><script src="engine.js"></script></body>' : "");

// Lesson 03 as the render writes it: one prose cell with TeX, one code cell whose check failed.
const prose = "# Lesson 03: LayerNorm by hand\n\nThe output is $\\hat{x} = \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}}$, and\n\n" +
              "$$\ny = \\gamma \\hat{x} + \\beta\n$$\n\n## Costs\n\nIt costs $5 or $10, and `$x$` is code.\n";
const code = '#include <iostream>\n\nNB_CELL {\n  double cost = 5;  // $5\n  std::cout << "$" << cost << "\\n";\n' +
             '  nb::check_close("cost", cost, 6, 0.5);\n  nb::check(true, "it ran");\n}';
fs.writeFileSync(path.join(lessons, "03_layernorm_by_hand.json"), JSON.stringify({
  lesson: "03_layernorm_by_hand",
  failed_checks: ["check FAILED: cost = 5, expected 6 (tolerance 0.5)  [line 40]"],
  cells: [
    { kind: "markdown", first_line: 2, last_line: 10, text: prose, output: [] },
    { kind: "code", first_line: 34, last_line: 42, text: code,
      output: [{ text: "$5\ncheck FAILED: cost = 5, expected 6 (tolerance 0.5)  [line 40]\ncheck: it ran  [ok]\n" }] },
  ],
}));

const run = spawnSync(process.execPath, [path.join(root, "site", "build.js"), "--no-render", "--lessons", lessons,
                                         "--page", page, "--out", out], { encoding: "utf8" });
assert.strictEqual(run.status, 1, "the build exits 1 when a lesson failed:\n" + run.stderr);
assert.match(run.stderr, /these lessons failed \(their pages show where\): .*03_layernorm_by_hand/);
const html = fs.readFileSync(path.join(out, "lessons", "03_layernorm_by_hand.html"), "utf8");
const visible = html.replace(/<annotation[^>]*>[\s\S]*?<\/annotation>/g, "");
// Named checks of the page (assert.match would print the whole page).
const has = (re, why) => assert.ok(re.test(html), `${why || ""} the page lacks ${re}`);
const lacks = (re, text, why) => assert.ok(!re.test(text), `${why || ""} the page has ${re}: ${(text.match(new RegExp(".{0,60}" + re.source + ".{0,60}")) || [""])[0]}`);

// Math typeset at build time, none left raw; `$` in prices and code untouched.
has(/class="katex"/);
has(/class="katex-display"/);
lacks(/\\frac|\\sqrt|\$\$/, visible, "raw TeX outside KaTeX's hidden annotations:");
has(/It costs \$5 or \$10, and <code>\$x\$<\/code> is code\./);
has(/\/\/ \$5/, "a comment's $ inside code stays");
// Scaffolding hidden, checks folded and opened on the failure, the failure named at the top with a link to its cell.
lacks(/#include|NB_CELL/, html);
has(/<details class="checks failed" open><summary>✗ 1 of 2 checks failed<\/summary>/);
has(/<aside class="failures" role="alert">[\s\S]*<a href="#cell-34">the cell at line 34<\/a>: cost = 5, expected 6 \(tolerance 0\.5\) {2}\[line 40\]/);
has(/<section class="cell" id="cell-34">/);
has(/<details class="checks[\s\S]*nb::<span[^>]*>check_close<\/span>[\s\S]*<\/details>/, "the checks' code sits inside the fold:");
lacks(/check_close|check\(/, html.split('<details class="checks')[0].split('id="cell-34"')[1], "no check left in the shown code:");
// A lesson without a render is a page saying so, and is named too.
assert.match(fs.readFileSync(path.join(out, "lessons", "01_tape.html"), "utf8"), /did not run when the site was built/);
assert.match(run.stderr, /01_tape/);
// The live page: only the files its index.html loads, with a way back to the course.
assert.deepStrictEqual(fs.readdirSync(path.join(out, "live")).sort(), ["engine.js", "index.html"]);
assert.match(fs.readFileSync(path.join(out, "live", "index.html"), "utf8"), /<a href="\.\.\/index\.html">← the course<\/a>/);
// Exercises: statements and stubs, never solutions.
assert.ok(fs.existsSync(path.join(out, "exercises", "layernorm.html")));
assert.ok(fs.existsSync(path.join(out, "exercises", "layernorm", "layernorm.cpp")));
const solutions = fs.readdirSync(path.join(root, "assignments", "solutions")).map((f) => fs.readFileSync(path.join(root, "assignments", "solutions", f), "utf8"));
for (const file of fs.readdirSync(out, { recursive: true })) {
  const full = path.join(out, file);
  if (fs.statSync(full).isFile()) assert.ok(!solutions.includes(fs.readFileSync(full, "utf8")), `${file} is a solution`);
  assert.doesNotMatch(file, /solutions|answers/);
}
fs.rmSync(scratch, { recursive: true, force: true });
console.log("site/build.js: math, code, checks, a failed lesson and the exercises as expected");
