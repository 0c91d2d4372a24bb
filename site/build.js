// Builds the course site: `node site/build.js --autograd BIN --lessons DIR --page DIR --out DIR`.
//
// Runs `autograd notebook render --format json` (every lesson it can; a lesson
// whose checks fail is rendered with its failures shown), then writes OUT: an
// index with the learning path (site/course.json), a page per lesson, the live
// page (only the files its index.html loads), the exercises' statements and
// stubs (never their solutions), a "run it yourself" page, and KaTeX's CSS and
// fonts. OUT is replaced only once the new site is complete. Exits 1 naming the
// lessons that failed, after writing the site that shows where.
"use strict";

const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");
const { createMarkdown, escapeHtml } = require("./lib/markdown.js");
const { shell, pager } = require("./lib/layout.js");
const { lessonPage } = require("./lib/lesson.js");
const { copyAssets, copyLivePage } = require("./lib/assets.js");

const here = __dirname, root = path.dirname(here);

function parseArgs(argv) {
  const args = { render: true };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, "");
    if (key === "no-render") { args.render = false; continue; }
    if (!["autograd", "lessons", "page", "out"].includes(key) || i + 1 >= argv.length) {
      throw new Error(`unknown argument '${argv[i]}' (usage: node site/build.js --autograd BIN --lessons DIR --page DIR --out DIR [--no-render])`);
    }
    args[key] = path.resolve(argv[++i]);
  }
  for (const key of ["lessons", "page", "out"]) if (!args[key]) throw new Error(`--${key} is required`);
  if (args.render && !args.autograd) throw new Error("--autograd is required (or --no-render)");
  return args;
}

// Renders every lesson; returns the names of those that failed (the render names them on stderr).
function renderLessons(args) {
  const run = spawnSync(args.autograd, ["notebook", "render", "--format", "md,json", "--bin-dir", args.lessons, "--out", args.lessons],
                        { stdio: ["ignore", "inherit", "pipe"], encoding: "utf8" });
  process.stderr.write(run.stderr || "");
  if (run.error) throw new Error(`cannot run ${args.autograd}: ${run.error.message}`);
  if (run.status === 0) return [];
  const named = /lessons failed: (.*)$/m.exec(run.stderr || "");
  return named ? named[1].split(", ") : [`(the render exited ${run.status})`];
}

const lessonNames = () => fs.readdirSync(path.join(root, "notebooks")).filter((f) => /^\d\d_.*\.cpp$/.test(f)).map((f) => f.slice(0, -4)).sort();
const exerciseNames = () => fs.readdirSync(path.join(root, "assignments"))
  .filter((d) => fs.existsSync(path.join(root, "assignments", d, "statement.md"))).sort();
const firstHeading = (text) => (/^#\s+(.*)$/m.exec(text) || [])[1];

// Each lesson's one line, from the table of docs/lessons.md (its one home):
// "| 03 LayerNorm by hand: the seeds' worked examples, ... | [03_layernorm_by_hand](...) |".
function lessonSummaries() {
  const summaries = new Map();
  const docs = fs.readFileSync(path.join(root, "docs", "lessons.md"), "utf8");
  const md = createMarkdown("docs/lessons.md", null, null);
  for (const m of docs.matchAll(/^\| \d\d ([^|]*?) \| \[(\d\d_\w+)\]/gm)) {
    const colon = m[1].indexOf(": ");
    const text = colon >= 0 && colon < 60 ? m[1].slice(colon + 2) : m[1];
    summaries.set(m[2], md.renderInline(text.charAt(0).toUpperCase() + text.slice(1) + "."));
  }
  return summaries;
}

// The learning path: course.json's parts, then any lesson or exercise it does not list.
function learningPath(course, lessons, exercises, lessonData) {
  const summaries = lessonSummaries();
  const steps = new Map();
  steps.set("live", { key: "live", href: "live/index.html", title: course.live.title, summary: escapeHtml(course.live.summary) });
  for (const key of ["explorer", "train"]) {  // the live pages beside index.html, each live/KEY.html
    if (course[key]) steps.set(key, { key, href: `live/${key}.html`, title: course[key].title, summary: escapeHtml(course[key].summary) });
  }
  for (const name of lessons) {
    const data = lessonData.get(name);
    const prose = data ? data.cells.find((c) => c.kind === "markdown") : null;
    const title = (prose && firstHeading(prose.text)) || name;
    steps.set(name, { key: name, href: `lessons/${name}.html`, title, summary: summaries.get(name) || "" });
  }
  for (const name of exercises) {
    const text = fs.readFileSync(path.join(root, "assignments", name, "statement.md"), "utf8");
    const title = (firstHeading(text) || name).replace(/^Exercise:\s*/, "Exercise: ");
    steps.set(`exercise:${name}`, { key: `exercise:${name}`, href: `exercises/${name}.html`, title, exercise: name });
  }
  const parts = course.parts.map((p) => ({ ...p, steps: p.steps.map((k) => {
    if (!steps.has(k)) throw new Error(`site/course.json names '${k}', which is no lesson, exercise or "live"`);
    return steps.get(k);
  }) }));
  const listed = new Set(course.parts.flatMap((p) => p.steps));
  const rest = [...steps.keys()].filter((k) => !listed.has(k));
  if (rest.length) parts.push({ title: "More", intro: "", steps: rest.map((k) => steps.get(k)) });
  return parts;
}

function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

function indexPage(course, parts) {
  const list = parts.map((part, n) => `<section class="part"><h2 id="part-${n + 1}">${n + 1}. ${escapeHtml(part.title)}</h2>
<p>${escapeHtml(part.intro)}</p><ol class="steps">${part.steps.map((s) => `<li><a href="${s.href}">${escapeHtml(s.title)}</a>${
  s.summary ? `<br><span class="summary">${s.summary}</span>` : ""}</li>`).join("\n")}</ol></section>`).join("\n");
  const first = parts[0].steps;
  return `<article class="index"><h1>${escapeHtml(course.title)}</h1>
<p class="lead">${escapeHtml(course.about)}</p>
<p class="start"><strong>Start here:</strong> ${first.map((s) => `<a href="${s.href}">${escapeHtml(s.title)}</a>`).join(" → ")}, and onward.</p>
<div id="path">${list}</div></article>`;
}

function exercisePages(out, parts, flat, course, names) {
  const followers = new Map();  // exercise -> the lesson before it on the path
  for (const part of parts) part.steps.forEach((s, i) => {
    const before = part.steps.slice(0, i).reverse().find((p) => p.key.match(/^\d\d_/));
    if (s.exercise && before) followers.set(s.exercise, before);
  });
  for (const name of names) {
    const step = flat.find((s) => s.exercise === name), at = flat.indexOf(step);
    const dir = path.join(root, "assignments", name);
    const stubs = [`${name}.h`, `${name}.cpp`].filter((f) => fs.existsSync(path.join(dir, f)));
    fs.mkdirSync(path.join(out, "exercises", name), { recursive: true });
    for (const f of stubs) fs.copyFileSync(path.join(dir, f), path.join(out, "exercises", name, f));
    const lessonHref = (n) => { const l = lessonNames().find((x) => x.startsWith(n + "_")); return l ? `../lessons/${l}.html` : null; };
    const md = createMarkdown(`assignments/${name}/statement.md`, null, null, lessonHref);
    const after = followers.get(name);
    const body = `<article class="exercise">${md.render(fs.readFileSync(path.join(dir, "statement.md"), "utf8"))}
<aside class="files"><strong>Your files:</strong> ${stubs.map((f) => `<a href="${name}/${f}">${f}</a>`).join(", ")}
(save them into <code>assignments/${name}/</code> of your clone).${after ? ` It follows <a href="../${after.href}">${escapeHtml(after.title)}</a>.` : ""}
Grade your work on your own machine (<a href="../run.html#grade-an-exercise">how</a>).</aside>
${pager(flat[at - 1], flat[at + 1], "../")}</article>`;
    write(path.join(out, "exercises", `${name}.html`), shell({ title: step.title, depth: 1, body, courseTitle: course.title }));
  }
  const list = flat.filter((s) => s.exercise).map((s) => `<li><a href="${s.exercise}.html">${escapeHtml(s.title)}</a></li>`).join("\n");
  const body = `<article><h1>Exercises</h1><p>Each exercise asks for a backward (or forward-mode) pass you derive by hand.
The statement says what to return and how to derive it; the stub is the file you fill in; <code>autograd grade</code>
checks it against the exact gradient on your machine. Solutions are not on this site.</p><ol>${list}</ol></article>`;
  write(path.join(out, "exercises", "index.html"), shell({ title: "Exercises", depth: 1, body, courseTitle: course.title }));
}

function lessonPages(out, args, flat, course, lessonData, failedNames) {
  const liveLink = (href) => href.replace(/^live:/, "../live/index.html");
  const lessonHref = (n) => { const name = lessonNames().find((l) => l.startsWith(n + "_")); return name ? `${name}.html` : null; };
  for (const name of lessonNames()) {
    const step = flat.find((s) => s.key === name), at = flat.indexOf(step);
    const data = lessonData.get(name);
    fs.mkdirSync(path.join(out, "lessons"), { recursive: true });
    fs.copyFileSync(path.join(root, "notebooks", `${name}.cpp`), path.join(out, "lessons", `${name}.cpp`));
    let body;
    if (data) {
      if (data.failed_checks.length) failedNames.add(name);
      const images = path.join(args.lessons, `${name}_files`);
      if (fs.existsSync(images)) fs.cpSync(images, path.join(out, "lessons", `${name}_files`), { recursive: true });
      const exercises = flat.slice(at + 1).filter((s, i, rest) => s.exercise && !rest.slice(0, i).some((p) => !p.exercise));
      ({ body } = lessonPage(data, { lessonDir: args.lessons, title: step.title, liveExamples: course.live_examples[name],
                                     exercises, prev: flat[at - 1], next: flat[at + 1], links: liveLink, lessonHref }));
    } else {
      body = `<article class="lesson"><h1>${escapeHtml(step.title)}</h1><aside class="failures" role="alert">This lesson
did not run when the site was built, so it has no page yet. Its program is <a href="${name}.cpp">notebooks/${name}.cpp</a>.</aside>
${pager(flat[at - 1], flat[at + 1], "../")}</article>`;
      failedNames.add(name);
    }
    write(path.join(out, "lessons", `${name}.html`), shell({ title: step.title, depth: 1, body, courseTitle: course.title }));
  }
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const failed = new Set(args.render ? renderLessons(args) : []);
  const course = JSON.parse(fs.readFileSync(path.join(here, "course.json"), "utf8"));
  const lessonData = new Map();
  for (const name of lessonNames()) {
    const file = path.join(args.lessons, `${name}.json`);
    if (fs.existsSync(file)) lessonData.set(name, JSON.parse(fs.readFileSync(file, "utf8")));
  }
  const exercises = exerciseNames();
  const parts = learningPath(course, lessonNames(), exercises, lessonData);
  const flat = parts.flatMap((p) => p.steps);
  const out = `${args.out}.new`;
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  copyAssets(path.join(here, "node_modules"), here, path.join(out, "assets"));
  // A live page's next step: the one after it on the path (index.html is the step "live").
  const after = (page) => {
    const href = `live/${page}`, at = flat.findIndex((s) => s.href === href);
    return at >= 0 ? flat[at + 1] : null;
  };
  copyLivePage(args.page, path.join(out, "live"), after);
  lessonPages(out, args, flat, course, lessonData, failed);
  exercisePages(out, parts, flat, course, exercises);
  write(path.join(out, "index.html"), shell({ title: course.title, depth: 0, body: indexPage(course, parts), courseTitle: course.title }));
  const run = createMarkdown("site/run.md", null, null).render(fs.readFileSync(path.join(here, "run.md"), "utf8"));
  write(path.join(out, "run.html"), shell({ title: "Run it yourself", depth: 0, body: `<article>${run}</article>`, courseTitle: course.title }));
  // Swap in the finished site.
  fs.rmSync(`${args.out}.old`, { recursive: true, force: true });
  if (fs.existsSync(args.out)) fs.renameSync(args.out, `${args.out}.old`);
  fs.renameSync(out, args.out);
  fs.rmSync(`${args.out}.old`, { recursive: true, force: true });
  console.log(`site: ${args.out}/index.html (${lessonNames().length} lessons, ${exercises.length} exercises)`);
  if (failed.size) {
    console.error(`site: built, but these lessons failed (their pages show where): ${[...failed].join(", ")}`);
    process.exit(1);
  }
}

try {
  main();
} catch (e) {
  console.error(`site: ${e.message}`);
  process.exit(1);
}
