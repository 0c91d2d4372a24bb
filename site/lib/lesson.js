// One lesson's page, from the JSON `autograd notebook render --format json`
// wrote: prose with typeset math, highlighted code without its scaffolding,
// outputs and plots inline, each cell's checks folded into one line, a table
// of contents, the failed checks (if any) named at the top, its live examples,
// its graded exercises and previous/next links.
"use strict";

const fs = require("fs");
const path = require("path");
const { createMarkdown, highlight, escapeHtml } = require("./markdown.js");
const { readerCode, splitOutput } = require("./code.js");
const { pager } = require("./layout.js");

// A PNG's width and height (its IHDR), so the page does not jump as plots load.
function pngSize(file) {
  const b = fs.readFileSync(file);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

function checksHtml(cell, out) {
  const total = out.passed.length + out.failed.length;
  if (total === 0) return "";
  const failed = out.failed.length;
  const summary = failed ? `✗ ${failed} of ${total} ${total === 1 ? "check" : "checks"} failed`
                         : `✓ ${total} ${total === 1 ? "check" : "checks"} passed`;
  const items = out.failed.map((f) => `<li class="failed">FAILED: ${escapeHtml(f)}</li>`)
    .concat(out.passed.map((p) => `<li>${escapeHtml(p)}</li>`)).join("\n");
  const code = cell.checks.length ? `<pre class="code"><code>${highlight(cell.checks.join("\n"), "cpp")}</code></pre>` : "";
  return `<details class="checks${failed ? " failed" : ""}"${failed ? " open" : ""}><summary>${summary}</summary>
<ul>${items}</ul>${code}</details>\n`;
}

function codeCellHtml(cell, lesson, lessonDir) {
  const { code, checks } = readerCode(cell.text);
  const outputs = { passed: [], failed: [] };
  let html = `<section class="cell" id="cell-${cell.first_line}">\n`;
  if (code) html += `<pre class="code"><code>${highlight(code, "cpp")}</code></pre>\n`;
  for (const out of cell.output) {
    if (out.image) {
      const { width, height } = pngSize(path.join(lessonDir, `${lesson}_files`, out.image));
      // On a phone the plot is scaled down: a tap opens it at full size.
      const src = `${lesson}_files/${encodeURI(out.image)}`;
      html += `<figure><a href="${src}"><img src="${src}" alt="${escapeHtml(out.alt || out.image)}"` +
              ` width="${width}" height="${height}"></a></figure>\n`;
      continue;
    }
    const split = splitOutput(out.text);
    outputs.passed.push(...split.passed);
    outputs.failed.push(...split.failed);
    if (split.printed) html += `<pre class="output">${escapeHtml(split.printed)}</pre>\n`;
  }
  html += checksHtml({ checks }, outputs);
  return { html: html + "</section>\n", failed: outputs.failed.map((f) => ({ line: cell.first_line, text: f })) };
}

// The table of contents: the h2s, each with its h3s nested under it.
function tocHtml(headings) {
  if (headings.length < 2) return "";
  let html = "", open = false;
  for (const h of headings) {
    if (h.level === "h3" && html) {
      html += `${open ? "" : "<ol>"}<li><a href="#${h.id}">${h.html}</a></li>`;
      open = true;
      continue;
    }
    html += `${open ? "</ol>" : ""}${html ? "</li>" : ""}<li><a href="#${h.id}">${h.html}</a>`;
    open = false;
  }
  html += `${open ? "</ol>" : ""}</li>`;
  return `<details class="toc" open><summary>On this page</summary><ol>${html}</ol></details>\n`;
}

function failuresHtml(failed, lesson) {
  if (!failed.length) return "";
  const items = failed.map((f) => `<li><a href="#cell-${f.line}">the cell at line ${f.line}</a>: ${escapeHtml(f.text)}</li>`).join("\n");
  return `<aside class="failures" role="alert"><strong>When this site was built, ${failed.length}
${failed.length === 1 ? "check" : "checks"} of this lesson failed</strong> (line numbers are in
<code>notebooks/${escapeHtml(lesson)}.cpp</code>):<ul>${items}</ul></aside>\n`;
}

function liveHtml(examples) {
  if (!examples || !examples.length) return "";
  const items = examples.map((e) => `<li><a href="../live/index.html#${escapeHtml(e.hash)}">${escapeHtml(e.label)}</a></li>`).join("\n");
  return `<aside class="live"><strong>Try it live:</strong> the same numbers, forward and backward, computed in your browser by the same engine:<ul>${items}</ul></aside>\n`;
}

// The lesson's body: `data` is its JSON, `course` what the site knows of it.
function lessonPage(data, { lessonDir, title, liveExamples, exercises, prev, next, links, lessonHref }) {
  const headings = [];
  const md = createMarkdown(`notebooks/${data.lesson}.cpp`, links, headings, (n) => (data.lesson.startsWith(n + "_") ? null : lessonHref(n)));
  let cells = "", h1 = "";
  const failed = [];
  for (const cell of data.cells) {
    if (cell.kind === "markdown") {
      let html = md.render(cell.text);
      if (!h1) html = html.replace(/^<h1[^>]*>[\s\S]*?<\/h1>\n/, (m) => { h1 = m; return ""; });
      cells += `<div class="prose">${html}</div>\n`;
      continue;
    }
    const rendered = codeCellHtml(cell, data.lesson, lessonDir);
    cells += rendered.html;
    failed.push(...rendered.failed);
  }
  const exerciseList = exercises.length
    ? `<section class="graded"><h2 id="graded-exercises">Graded exercises</h2><ul>${exercises.map((e) =>
        `<li><a href="../${e.href}">${escapeHtml(e.title)}</a></li>`).join("")}</ul></section>\n` : "";
  const body = `<article class="lesson">
${h1 || `<h1>${escapeHtml(title)}</h1>`}
${failuresHtml(failed, data.lesson)}${tocHtml(headings)}${liveHtml(liveExamples)}${cells}${exerciseList}
<p class="source">This page is <a href="${escapeHtml(data.lesson)}.cpp">notebooks/${escapeHtml(data.lesson)}.cpp</a>, run:
build it and run it yourself (<a href="../run.html">how</a>).</p>
${pager(prev, next, "../")}
</article>`;
  return { body, failed };
}

module.exports = { lessonPage };
