// Helpers of the browser tests: Debian's chromium through puppeteer-core,
// the native build's expected numbers, and reading the page's numbers back.
"use strict";

const assert = require("assert");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { execFileSync } = require("child_process");
const puppeteer = require("puppeteer-core");

// The flags of /work/shared/NOTES.md (root in CI: no sandbox), a fresh profile each run.
async function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "page-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", `--user-data-dir=${profile}`],
  });
  return { browser, profile };
}

// A new tab on the page (index.html, or `file`, + hash), at the size the screenshots use, that
// records every console error or warning, page error, failed request and request
// outside the page's own folder (no server, no CDN) into `problems`; resolves
// once the engine has loaded.
async function openPage(browser, pageDir, hash, problems, file = "index.html") {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on("console", (m) => { if (m.type() === "error" || m.type() === "warn") problems.push(`${m.type()}: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("requestfailed", (r) => problems.push("request failed: " + r.url()));
  page.on("request", (r) => { if (!/^(file|data):/.test(r.url())) problems.push("fetched from outside: " + r.url()); });
  await page.goto("file://" + path.resolve(pageDir, file) + hash);
  await page.waitForFunction(() => document.body.dataset.ready === "1", { timeout: 60000 });
  return page;
}

// The JSON the native build prints for a hash: what every number must equal.
function expected(bin, hash) {
  const long = hash.length > 100000;  // past one argument's 128 KB: through the standard input
  return JSON.parse(execFileSync(bin, [long ? "-" : hash], { encoding: "utf8", input: long ? hash : undefined,
                                                             maxBuffer: 1 << 28 }));
}

// Every number the page shows: its engine key, element, text and full value
// (by default the first part's; "#gpt .num" is the trained model's part).
function shownNumbers(page, selector = ".num:not(#gpt .num)") {
  return page.$$eval(selector, (els) => els.map((e) => ({
    key: e.dataset.key, i: Number(e.dataset.i), j: Number(e.dataset.j), text: e.textContent,
    full: e.getAttribute("title") || e.getAttribute("data-full"),
  })));
}

// Compares every shown number with the native value to 1e-12 (relative above
// 1), and its text with the page's own value rounded to the digits shown (a
// rounding-noise number, such as |J 1| ~ 1e-16, differs between the builds in
// every digit: native AVX and WebAssembly SIMD add some sums in another order).
// Returns the count; compareNumbers.largest holds the largest differences seen.
function compareNumbers(shown, native, digits, where) {
  const problems = [];
  for (const s of shown) {
    const m = native.numbers[s.key];
    if (!m) { problems.push(`${s.key}: shown but not in the native build's numbers`); continue; }
    const want = m[s.i][s.j];
    // Finite differences divide the forward's rounding (1e-16 relative, in
    // another order in each build) by 2h = 2e-6: their last 7 digits are noise
    // that differs between the builds (seen: 1e-9 at d = 40). Everything else: 1e-12.
    const tol = (s.key.startsWith("fd.") ? 1e-7 : 1e-12) * Math.max(1, Math.abs(want));
    const full = Number(s.full), text = Number(s.text);
    if (!(Math.abs(full - want) <= tol)) problems.push(`${s.key}[${s.i}][${s.j}]: page ${full}, native ${want}`);
    const kind = s.key.startsWith("fd.") ? "fd" : "engine";
    compareNumbers.largest[kind] = Math.max(compareNumbers.largest[kind], Math.abs(full - want));
    const textTol = digits >= 17 ? 0 : 0.5 * 10 ** (1 - digits) * Math.abs(full) * 1.0000001;
    if (!(Math.abs(text - full) <= textTol)) problems.push(`${s.key}[${s.i}][${s.j}]: shows "${s.text}" for ${full}`);
  }
  if (problems.length) throw new Error(`${where}: ${problems.length} numbers differ:\n  ` + problems.slice(0, 12).join("\n  "));
  return shown.length;
}
compareNumbers.largest = { engine: 0, fd: 0 };

// The native keys the page must show (every element, except where the page
// elides: tape boxes show 4 numbers, the Jacobian's cells are numbered up to
// d = 8, rows longer than 32 show 12 + 4 unless "every number" is ticked).
function checkEveryKeyShown(shown, native, where, skip = [], all = false) {
  const counts = {};
  for (const s of shown) counts[s.key] = (counts[s.key] || 0) + 1;
  for (const [key, m] of Object.entries(native.numbers)) {
    if (["eps", "dy"].includes(key) || skip.some((p) => key.startsWith(p))) continue;
    if (key.includes(".into.")) continue;  // a backward step's products: shown while the walk is at that node (page.test.js walk)
    const cols = m[0].length, n = m.length * (all || cols <= 32 ? cols : 16);
    const elided = key.startsWith("tape.") || key === "jac";
    const want = key.startsWith("tape.") ? Math.min(cols, 4) : key === "jac" ? (m.length > 8 ? 0 : m.length * cols) : n;
    if ((counts[key] || 0) !== want && !(elided && want === 0)) {
      throw new Error(`${where}: ${key} shows ${counts[key] || 0} numbers, expected ${want}`);
    }
  }
}

// Whether the page scrolls sideways, or anything on it sticks out of the window
// where no scroll box holds it: a box that clips what overflows it (overflow:
// hidden, or containment) hides that from the page's scroll width, which alone
// would miss it. Every element's box is asked for; a text's width is its
// element's. Returns what sticks out, at most 5.
async function sticksOut(page) {
  return page.evaluate(() => {
    const width = window.innerWidth, out = [];
    if (document.documentElement.scrollWidth > width) out.push(`the page: scroll width ${document.documentElement.scrollWidth}`);
    const scrolls = (e) => ["auto", "scroll"].includes(getComputedStyle(e).overflowX);
    for (const e of document.body.querySelectorAll("*")) {
      if (out.length >= 5) break;
      const box = e.getBoundingClientRect();
      if (box.width === 0 || box.right <= width + 0.5) continue;
      let held = false;
      for (let a = e.parentElement; a && a !== document.body && !held; a = a.parentElement) held = scrolls(a);
      if (!held) out.push(`${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}.${e.getAttribute("class") || ""}: right edge ${box.right.toFixed(0)}`);
    }
    return out;
  });
}

// A draw counted after \`before\`, and none still drawing: a page that draws what is on
// the screen first (page/web/soon.js) may count an older keystroke's draw while the
// newest one's cards off the screen are still to come.
async function waitForDraw(page, before) {
  await page.waitForFunction((n) => Number(document.body.dataset.draws) > n && document.body.dataset.soon !== "drawing",
                             { timeout: 60000 }, before);
}

async function draws(page) {
  return page.evaluate(() => Number(document.body.dataset.draws));
}

// Replaces a field's text by typing it, one keystroke at a time.
async function typeInto(page, selector, text) {
  const old = await page.$eval(selector, (e) => e.value);
  if (old === text) return;
  const before = await draws(page);
  await page.click(selector, { clickCount: 3 });
  await page.evaluate((s) => { document.querySelector(s).select(); }, selector);
  if (old !== "") await page.keyboard.press("Backspace");  // one keystroke, one redraw
  await page.type(selector, text);
  await waitForDraw(page, before);
}

async function setDigits(page, digits) {
  const before = await draws(page);
  await page.select("#digits", String(digits));
  await waitForDraw(page, before);
}

// A browser test's life: launch, body(browser), no console errors allowed, then
// report, close, remove the profile and exit 1 on any failure (or if failedBefore).
async function run(consoleErrors, body, failedBefore = false) {
  const { browser, profile } = await launch();
  let failed = failedBefore;
  try {
    failed = (await body(browser)) === false || failed;
    assert.deepStrictEqual(consoleErrors, [], "console errors");
  } catch (e) {
    failed = true;
    console.error("FAIL " + (e.stack || e));
    if (consoleErrors.length) console.error("console:\n  " + consoleErrors.join("\n  "));
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

module.exports = { launch, run, openPage, expected, shownNumbers, compareNumbers, checkEveryKeyShown, typeInto, setDigits, draws, waitForDraw,
                   sticksOut };
