// The course site in headless Chromium, as a student opens it: served from
// 127.0.0.1 under a subpath (/course/, as a GitHub Pages project site is),
// then from file://. Every page is opened and every internal link followed;
// a page fails on any console error or warning, any request outside the site,
// a broken link or anchor, raw TeX left in its text, or (at 390 px) a page
// wider than the window. Screenshots of the index, lesson 03 and the live page
// at 390 and 1280 px go to SCREENSHOTS.
//
//   node site/test/site.test.js BUILD/site SCREENSHOTS
"use strict";

const fs = require("fs");
const http = require("http");
const path = require("path");
const { launch } = require("../../page/test/helpers.js");  // Debian's chromium through puppeteer-core

const [siteDir, shotsDir] = process.argv.slice(2).map((p) => p && path.resolve(p));
if (!siteDir || !shotsDir) {
  console.error("usage: node site/test/site.test.js SITE_DIR SCREENSHOTS_DIR");
  process.exit(2);
}
const SUBPATH = "/course/";
const TYPES = { ".html": "text/html", ".css": "text/css", ".js": "text/javascript", ".png": "image/png",
                ".woff2": "font/woff2", ".cpp": "text/plain", ".h": "text/plain" };

// A static server of the site under SUBPATH only: anything else is a 404, so a link
// that climbs out of the site (an absolute /path) fails as it would on a project site.
function serve() {
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const file = url.startsWith(SUBPATH) ? path.join(siteDir, url.slice(SUBPATH.length)) : null;
    if (!file || !file.startsWith(siteDir) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "Content-Type": TYPES[path.extname(file)] || "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

// What a page shows as text, without its typeset math (KaTeX keeps the TeX in
// hidden MathML annotations) and without code, where `$` is C++.
function visibleProse() {
  const body = document.body.cloneNode(true);
  body.querySelectorAll(".katex, pre, code").forEach((e) => e.remove());
  return body.textContent;
}

async function visit(browser, url, inside, width, problems) {
  const page = await browser.newPage();
  await page.setViewport({ width, height: 900 });
  const note = (m) => problems.push(`${url}: ${m}`);
  page.on("console", (m) => { if (m.type() === "error" || m.type() === "warn") note(`console ${m.type()}: ${m.text()}`); });
  page.on("pageerror", (e) => note(`page error: ${e.message}`));
  page.on("requestfailed", (r) => note(`request failed: ${r.url()}`));
  page.on("response", (r) => { if (r.status() >= 400) note(`HTTP ${r.status()}: ${r.url()}`); });
  page.on("request", (r) => { if (!inside(r.url()) && !r.url().startsWith("data:")) note(`request outside the site: ${r.url()}`); });
  await page.goto(url, { waitUntil: "load" });
  if (url.includes("/live/")) await page.waitForFunction(() => document.body.dataset.ready === "1", { timeout: 60000 });
  const facts = await page.evaluate((proseFn) => {
    const prose = new Function(`return (${proseFn})()`)();
    return {
      links: [...document.querySelectorAll("a[href]")].map((a) => a.href),
      ids: [...document.querySelectorAll("[id]")].map((e) => e.id),
      hasRawTex: /\\frac|\\sqrt\{|\$\$/.test(prose),
      rawTex: (prose.match(/.{0,40}(\\frac|\\sqrt\{|\$\$).{0,40}/) || [""])[0],
      scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
      images: [...document.images].filter((i) => !i.complete || i.naturalWidth === 0 || !i.alt).map((i) => i.src),
    };
  }, visibleProse.toString());
  if (facts.hasRawTex) note(`raw TeX in the page: "${facts.rawTex}"`);
  if (width <= 390 && facts.scrollWidth > facts.innerWidth) note(`scrolls sideways at ${width} px: scrollWidth ${facts.scrollWidth}`);
  for (const src of facts.images) note(`an image did not load or has no alt text: ${src}`);
  return { page, facts };
}

// Opens every page reachable from index.html; checks each link's target exists (and its #anchor, on course pages).
async function crawl(browser, base, inside, width, problems, shots) {
  const seen = new Set(), anchors = [], ids = new Map(), queue = [base + "index.html"], liveExamples = new Set();
  while (queue.length) {
    const url = queue.shift();
    if (seen.has(url)) continue;
    seen.add(url);
    const { page, facts } = await visit(browser, url, inside, width, problems);
    ids.set(url, new Set(facts.ids));
    for (const [name, match] of Object.entries(shots)) {
      if (url === base + match) await page.screenshot({ path: path.join(shotsDir, `${name}-${width}.png`) });
    }
    await page.close();
    for (const link of facts.links) {
      if (!inside(link)) { problems.push(`${url}: links outside the site: ${link}`); continue; }
      const [target, hash] = link.split("#");
      if (!(await exists(target))) {
        problems.push(`${url}: broken link ${link}`);
      } else if (target.endsWith(".html")) {
        queue.push(target);
        if (hash && !target.includes("/live/")) anchors.push({ from: url, target, hash });
        if (hash && target.includes("/live/")) liveExamples.add(link);
      }
    }
  }
  for (const a of anchors) {
    if (ids.has(a.target) && !ids.get(a.target).has(decodeURIComponent(a.hash))) problems.push(`${a.from}: no #${a.hash} on ${a.target}`);
  }
  // A lesson's "try it live" link carries its inputs: the page must take them without a message.
  for (const link of liveExamples) {
    const { page } = await visit(browser, link, inside, width, problems);
    const message = await page.$eval("#message", (m) => (m.hidden ? "" : m.textContent));
    if (message) problems.push(`${link}: the live page says "${message}"`);
    await page.close();
  }
  return seen.size;
}

async function exists(url) {
  if (url.startsWith("file://")) return fs.existsSync(decodeURIComponent(new URL(url).pathname));
  return new Promise((resolve) => http.get(url, (r) => { r.resume(); resolve(r.statusCode === 200); }).on("error", () => resolve(false)));
}

// page/web/index.html opened from a clone, before any build: it must say how to build it, not show an empty shell.
async function unbuiltPage(browser, problems) {
  const page = await browser.newPage();
  page.on("pageerror", () => {});  // app.js stops: createEngine does not exist
  await page.goto("file://" + path.resolve(__dirname, "..", "..", "page", "web", "index.html"), { waitUntil: "load" });
  const message = await page.$eval("#message", (m) => (m.hidden ? "" : m.textContent));
  if (!message.includes("bash cmake/run.sh site")) problems.push(`page/web/index.html from a clone shows no way to build it (#message: "${message}")`);
  await page.close();
}

async function main() {
  fs.mkdirSync(shotsDir, { recursive: true });
  const started = Date.now();
  const server = await serve();
  const httpBase = `http://127.0.0.1:${server.address().port}${SUBPATH}`;
  const fileBase = `file://${siteDir}/`;
  const { browser, profile } = await launch();
  const problems = [];
  const shots = { index: "index.html", lesson: "lessons/03_layernorm_by_hand.html", live: "live/index.html" };
  let pages = 0;
  try {
    pages = await crawl(browser, httpBase, (u) => u.startsWith(httpBase), 390, problems, shots);
    // At 1280 px the pages of the screenshots only: every page's layout is checked at 390.
    for (const [name, rel] of Object.entries(shots)) {
      const { page } = await visit(browser, httpBase + rel, (u) => u.startsWith(httpBase), 1280, problems);
      await page.screenshot({ path: path.join(shotsDir, `${name}-1280.png`) });
      await page.close();
    }
    await unbuiltPage(browser, problems);
    const filePages = await crawl(browser, fileBase, (u) => u.startsWith(fileBase), 390, problems, {});
    if (filePages !== pages) problems.push(`file:// reached ${filePages} pages, http ${pages}`);
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  if (pages < 20) problems.push(`only ${pages} pages reachable from index.html`);
  if (problems.length) {
    console.error(`${problems.length} problems:\n  ` + problems.slice(0, 40).join("\n  "));
    process.exit(1);
  }
  console.log(`site: ${pages} pages, each opened at 390 px from ${httpBase} and from file://, ` +
              `every link followed; screenshots in ${shotsDir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

main().catch((e) => { console.error(e.stack || e.message); process.exit(1); });
