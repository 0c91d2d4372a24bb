// One way to read the inputs (docs/live-page.md, "Bad input"): the live page and
// `autograd layernorm --input` parse numbers with the same C++ function.
//   node inputs.test.js BUILD/page PAGE_EXPECTED AUTOGRAD SCREENSHOT_DIR
// 1. Natively: each text below through the CLI and through the page's request
//    parser (page_expected), the same numbers or the same message (after the
//    field's name, --input or x).
// 2. In headless Chromium: some of them typed on the page show that message; a
//    link with a misspelt field shows the engine's message naming it; an input
//    over the size limit shows the limit; a large input under it renders.
"use strict";

const assert = require("assert");
const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");
const h = require("./helpers");

const [pageDir, expectedBin, cliBin, shots] = process.argv.slice(2);
if (!shots) {
  console.error("usage: node inputs.test.js PAGE_DIR PAGE_EXPECTED AUTOGRAD SCREENSHOT_DIR");
  process.exit(2);
}
fs.mkdirSync(shots, { recursive: true });
const consoleErrors = [];

// Texts as a student types them (good and bad); every one has at least 2 numbers a
// row, since the CLI refuses a single feature before LayerNorm runs and the page runs RMSNorm.
const texts = [
  "3 1 5 7", "3, 1, 5, 7", "3, 1 5,7", "3,1,5,7,", "1,2;3,4;", "1 2, 3; 4 5 6,", "-1.5e-3, 2E2, .5, +7",
  "1e-400, 1", "0x10, 1", "1,,2", ",1,2", "1,2,,", "nan, 1", "inf, 1", "1, -Infinity", "1e400, 1",
  "1,2;3", "1,2;;3,4", "3, a, 5", ";",
];

// What the CLI says for `--input TEXT`: {message} after "autograd layernorm: --input: ", or {x} as printed at 17 digits.
function cli(text) {
  const r = spawnSync(cliBin, ["layernorm", "--input", text, "--precision", "17", "--rows", "1000"],
                      { encoding: "utf8", env: { ...process.env, OPENBLAS_NUM_THREADS: "1" } });
  if (r.status !== 0) {
    const line = r.stderr.trim();
    const prefix = "autograd layernorm: --input: ";
    assert(line.startsWith(prefix), `CLI ${JSON.stringify(text)}: not a message about --input: ${line}`);
    return { message: line.slice(prefix.length) };
  }
  const rows = [...r.stdout.matchAll(/^row \d+: x = \[(.*)\]$/gm)].map((m) => m[1].split(", ").map(Number));
  assert(rows.length > 0, `CLI ${JSON.stringify(text)}: no rows printed`);
  return { x: rows };
}

// What the page's engine says for the same text as x (natively, the page's own C++).
function page(text) {
  const got = h.expected(expectedBin, "x=" + text);
  if (got.error !== "") {
    assert(got.error.startsWith("x: "), `page ${JSON.stringify(text)}: not a message about x: ${got.error}`);
    return { message: got.error.slice(3) };
  }
  return { x: got.numbers.x };
}

function nativeSameAnswers() {
  let refused = 0;
  const differ = [];
  for (const text of texts) {
    const a = cli(text), b = page(text);
    const say = (r) => (r.message ? "message " + JSON.stringify(r.message) : "x " + JSON.stringify(r.x));
    if (say(a) !== say(b)) differ.push(`${JSON.stringify(text)}: CLI ${say(a)}, page ${say(b)}`);
    if (a.message) refused += 1;
  }
  assert.deepStrictEqual(differ, [], `${differ.length} of ${texts.length} texts read differently`);
  assert(refused >= 10 && texts.length - refused >= 7, `${refused} of ${texts.length} refused`);
  console.log(`ok ${texts.length} texts: the CLI and the page's parser give the same numbers (${texts.length - refused}) or the same message (${refused})`);
}

async function messageShown(page) {
  return page.$eval("#message", (e) => (e.hidden ? "" : e.textContent));
}

// Typed on the page: the message the native build gives, which is the CLI's.
async function typedSameAnswers(page) {
  for (const text of ["0x10, 1", "3 1 5 7", "1,,2", "nan, 1", "1e400, 1", "1, 2\n3", "3,1,5,7,"]) {
    await h.typeInto(page, "#x", text);
    const want = cli(text.replace(/\n/g, ";"));
    const shown = await messageShown(page);
    if (want.message) {
      assert.strictEqual(shown, "x: " + want.message, `typed ${JSON.stringify(text)}`);
    } else {
      assert.strictEqual(shown, "", `typed ${JSON.stringify(text)}: no message`);
      const x = await page.$$eval("#ln .num[data-key='x']", (els) => els.map((e) => Number(e.title)));
      assert.deepStrictEqual(x, want.x.flat(), `typed ${JSON.stringify(text)}: the x shown`);
    }
  }
  console.log("ok typed on the page: the CLI's messages and numbers");
}

// A link with a misspelt field: the engine's message names it, the form shows
// the fields it knows, and editing the form drops the unknown one.
async function unknownField(browser) {
  const hash = "x=1,2&gama=2";
  const page = await h.openPage(browser, pageDir, "#" + hash, consoleErrors);
  const want = h.expected(expectedBin, hash).error;
  assert.strictEqual(await messageShown(page), want, "the engine's message for " + hash);
  assert.match(want, /unknown field 'gama' \(did you mean gamma\?\)/);
  assert.strictEqual(await page.$eval("#x", (e) => e.value), "1,2", "the form keeps the link's x");
  const address = await page.evaluate(() => decodeURIComponent(location.hash.slice(1)));
  assert.strictEqual(address, "x=1,2&gamma=1&beta=0&eps=1e-5&gama=2", "the address keeps the unknown field");
  await h.typeInto(page, "#gamma", "2");
  assert.strictEqual(await messageShown(page), "", "typing into the form drops the unknown field");
  assert(!/gama/.test(await page.evaluate(() => location.hash)), "the address drops it too");
  const both = "x=1,2&rows=3,4;5,6";
  const before = await h.draws(page);
  await page.evaluate((b) => { location.hash = b; }, both);
  await h.waitForDraw(page, before);
  assert.strictEqual(await messageShown(page), h.expected(expectedBin, both).error, both);
  assert.match(await messageShown(page), /not both/);
  await page.close();
  console.log("ok a link's unknown field (and x with rows) gets the engine's message on the page");
}

// rows x 4 numbers, no row of equal numbers.
function batch(rows) {
  return Array.from({ length: rows }, (_, i) => `${i % 7},${(i * 3) % 5},${(i % 3) + 0.5},${-(i % 11)}`).join(";");
}

// Past the limit: the limit's message, by link and typed; under it: drawn, every number the native one.
async function sizes(browser) {
  const page = await h.openPage(browser, pageDir, "", consoleErrors);
  const cases = [["x=" + batch(30000).replace(/;/g, ","), /120000 numbers; the page takes at most 100000/],
                 ["rows=" + batch(30000), /120000 numbers; the page takes at most 100000/],
                 ["x=" + Array.from({ length: 5000 }, (_, j) => j % 10).join(","), /5000 features; the page takes at most 4096/]];
  for (const [hash, pattern] of cases) {
    const want = h.expected(expectedBin, hash).error;
    assert.match(want, pattern, "the native message");
    let before = await h.draws(page);
    await page.evaluate((x) => { location.hash = x; }, hash);
    await h.waitForDraw(page, before);
    assert.strictEqual(await messageShown(page), want, "linked: " + hash.slice(0, 30));
    await h.typeInto(page, "#x", "3, 1, 5, 7");
    before = await h.draws(page);
    await page.evaluate((text) => {
      const x = document.getElementById("x");
      x.value = text;
      x.dispatchEvent(new Event("input"));
    }, hash.slice(hash.indexOf("=") + 1).replace(/;/g, "\n"));
    await h.waitForDraw(page, before);
    assert.strictEqual(await messageShown(page), want, "typed: " + hash.slice(0, 30));
  }
  // Pasted, 4 MB: more than the engine's stack, which ccall's string argument used.
  const huge = Array.from({ length: 400000 }, (_, i) => (i % 97) + 0.123456).join(", ");
  const want = h.expected(expectedBin, "x=" + huge).error;
  assert.match(want, /x: 400000 numbers; the page takes at most 100000/);
  const before = await h.draws(page);
  await page.evaluate((text) => {
    const x = document.getElementById("x");
    x.value = text;
    x.dispatchEvent(new Event("input"));
  }, huge);
  await h.waitForDraw(page, before);
  assert.strictEqual(await messageShown(page), want, "pasted 4 MB");
  // The trained model's word box goes through the same call.
  const words = await page.evaluate(() => Number(document.body.dataset.modelDraws));
  await page.evaluate(() => {
    const w = document.getElementById("word");
    w.value = "a".repeat(4000000);
    w.dispatchEvent(new Event("input"));
  });
  await page.waitForFunction((n) => Number(document.body.dataset.modelDraws) > n, { timeout: 60000 }, words);
  assert.match(await page.$eval("#word-message", (e) => e.textContent), /^word: 4000000 letters; the model reads at most 15/);
  await page.screenshot({ path: path.join(shots, "too-large.png") });
  // 3 rows of 2,048: 4,096 numbers of each result are sent, so rows 1 and 2; finite differences skipped.
  const wide = Array.from({ length: 3 }, (_, i) => Array.from({ length: 2048 }, (_, j) => Math.sin(j + i).toFixed(4)).join(",")).join(";");
  for (const [hash, what] of [["rows=" + batch(20000), "rows 1 to 10 of 20000 shown"],
                              ["rows=" + wide, "rows 1 to 2 of 3 shown.*skipped above 1024 features"]]) {
    const before = await h.draws(page);
    await page.evaluate((x) => { location.hash = x; }, hash);
    await h.waitForDraw(page, before);
    assert.strictEqual(await messageShown(page), "", "no message: " + hash.slice(0, 30));
    assert(new RegExp(what, "s").test(await page.$eval("body", (e) => e.textContent)), `says "${what}"`);
    const want = h.expected(expectedBin, hash);
    const shown = await h.shownNumbers(page);
    h.checkEveryKeyShown(shown, want, "large: " + hash.slice(0, 30));
    const n = h.compareNumbers(shown, want, 6, "large: " + hash.slice(0, 30));
    console.log(`ok ${hash.slice(0, 5)} ${what}: drawn, ${n} numbers equal the native build's`);
  }
  await page.screenshot({ path: path.join(shots, "large.png") });
  await page.close();
  console.log("ok too large: the limit's message, linked, typed and pasted (4 MB, x and the word); under the limit: drawn");
}

(async () => {
  let nativeFailed = false;
  try {
    nativeSameAnswers();
  } catch (e) {
    nativeFailed = true;
    console.error("FAIL " + (e.stack || e));
  }
  const typed = async (browser) => {
    const page = await h.openPage(browser, pageDir, "", consoleErrors);
    await typedSameAnswers(page);
    await page.close();
  };
  // Each part runs even when one before it failed; any failure fails the test.
  await h.run(consoleErrors, async (browser) => {
    let ok = true;
    for (const part of [typed, unknownField, sizes]) {
      try {
        await part(browser);
      } catch (e) {
        ok = false;
        console.error("FAIL " + (e.stack || e));
      }
    }
    return ok;
  }, nativeFailed);
})();
