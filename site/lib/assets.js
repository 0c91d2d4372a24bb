// The files the site carries besides its pages: KaTeX's CSS and its fonts
// (woff2 only: every browser that runs the live page reads it), highlight.js's
// theme, the site's CSS, and the live page's files.
"use strict";

const fs = require("fs");
const path = require("path");
const { escapeHtml } = require("./markdown.js");

function copyAssets(modules, siteSource, to) {
  fs.mkdirSync(path.join(to, "katex", "fonts"), { recursive: true });
  const katex = path.join(modules, "katex", "dist");
  if (!fs.existsSync(katex)) throw new Error(`no KaTeX in ${modules}: run npm ci --prefix site`);
  // Each @font-face lists woff2, woff and ttf; keep woff2, so a browser never asks for a file we did not copy.
  const css = fs.readFileSync(path.join(katex, "katex.min.css"), "utf8")
    .replace(/,url\(fonts\/[^)]*\.woff\) format\("woff"\)/g, "")
    .replace(/,url\(fonts\/[^)]*\.ttf\) format\("truetype"\)/g, "");
  if (/\.(woff|ttf)\)/.test(css)) throw new Error("KaTeX's CSS still names a woff or ttf font: update site/lib/assets.js");
  fs.writeFileSync(path.join(to, "katex", "katex.min.css"), css);
  for (const font of fs.readdirSync(path.join(katex, "fonts")).filter((f) => f.endsWith(".woff2"))) {
    fs.copyFileSync(path.join(katex, "fonts", font), path.join(to, "katex", "fonts", font));
  }
  fs.copyFileSync(path.join(modules, "highlight.js", "styles", "github.min.css"), path.join(to, "highlight.css"));
  fs.copyFileSync(path.join(siteSource, "site.css"), path.join(to, "site.css"));
}

// The live pages: index.html, every page it links (explorer.html) and the files
// each loads (src= and href=), nothing else of BUILD/page (which also holds the
// WebAssembly build's objects), with a line at each page's top back to the course
// and on to the path's next step (`next`: a page's name -> that step).
function copyLivePage(pageDir, to, next) {
  if (!fs.existsSync(path.join(pageDir, "engine.js"))) {
    throw new Error(`no live page in ${pageDir}: build it first (cmake --build BUILD --target page; it needs Debian's emscripten)`);
  }
  fs.mkdirSync(to, { recursive: true });
  const files = new Set(["index.html"]), pages = ["index.html"];
  for (let k = 0; k < pages.length; k++) {
    const html = fs.readFileSync(path.join(pageDir, pages[k]), "utf8");
    for (const m of html.matchAll(/\b(?:src|href)="([^"#:]+)"/g)) {
      if (files.has(m[1])) continue;
      files.add(m[1]);
      if (m[1].endsWith(".html")) pages.push(m[1]);
    }
  }
  for (const file of files) {
    if (file.includes("..") || !fs.existsSync(path.join(pageDir, file))) throw new Error(`the live page loads ${file}, which is not in ${pageDir}`);
    fs.copyFileSync(path.join(pageDir, file), path.join(to, file));
  }
  // In the course, each page links back to it (the pages themselves stand alone, in BUILD/page too).
  for (const page of pages) {
    const html = fs.readFileSync(path.join(pageDir, page), "utf8"), after = next(page);
    if (!/<body[^>]*>/.test(html)) throw new Error(`${path.join(pageDir, page)} has no <body>`);
    fs.writeFileSync(path.join(to, page), html.replace(/<body[^>]*>/, (body) =>
      `${body}\n<p style="margin:.5rem 1rem;font:14px system-ui,sans-serif"><a href="../index.html">← the course</a>` +
      (after ? ` · next: <a href="../${after.href}">${escapeHtml(after.title)}</a>` : "") + "</p>"));
  }
}

module.exports = { copyAssets, copyLivePage };
