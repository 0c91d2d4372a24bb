// The shell every page of the site shares: head (KaTeX's and highlight.js's
// CSS, no script), the course's navigation, and only relative links, so the
// site opens from file://, under a subpath (/REPO/) and from any static host.
"use strict";

const { escapeHtml } = require("./markdown.js");

// `depth`: how many folders below the site's root the page sits (0 or 1).
function shell({ title, depth, body, courseTitle }) {
  const up = depth ? "../" : "";
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${up}assets/katex/katex.min.css">
<link rel="stylesheet" href="${up}assets/highlight.css">
<link rel="stylesheet" href="${up}assets/site.css">
</head>
<body>
<header class="site"><a class="home" href="${up}index.html">${escapeHtml(courseTitle)}</a>
<nav><a href="${up}index.html#path">Lessons</a> <a href="${up}live/index.html">Live page</a>
<a href="${up}exercises/index.html">Exercises</a> <a href="${up}run.html">Run it yourself</a></nav></header>
<main>
${body}
</main>
<footer>Every number on these pages was computed by the project's C++ engine when the site was built
(the live page computes them in your browser). Nothing here is fetched from elsewhere.</footer>
</body>
</html>
`;
}

// Previous / next along the learning path.
function pager(prev, next, up) {
  const link = (step, rel, label) => step
    ? `<a rel="${rel}" href="${up}${step.href}"><small>${label}</small> ${escapeHtml(step.title)}</a>` : "<span></span>";
  return `<nav class="pager">${link(prev, "prev", "← previous")}${link(next, "next", "next →")}</nav>`;
}

module.exports = { shell, pager };
