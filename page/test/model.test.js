// The page's second part, the norms inside the trained GPT, in headless Chromium.
//   node model.test.js BUILD/page BUILD/page/page_expected SCREENSHOT_DIR
// Types words and compares every number shown (each LayerNorm's input mean and
// sd per position, γ, β, the next-character distribution, a sample's draws)
// with the native build (`page_expected model HASH`) to 1e-12; clicks the
// seeded sample button; types bad words; fails on any console error.
"use strict";

const assert = require("assert");
const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");
const h = require("./helpers");

const [pageDir, expectedBin, shots] = process.argv.slice(2);
if (!shots) {
  console.error("usage: node model.test.js PAGE_DIR PAGE_EXPECTED SCREENSHOT_DIR");
  process.exit(2);
}
fs.mkdirSync(shots, { recursive: true });
const consoleErrors = [];
const native = (hash) => JSON.parse(execFileSync(expectedBin, ["model", hash], { encoding: "utf8" }));
const modelDraws = (page) => page.evaluate(() => Number(document.body.dataset.modelDraws || 0));

const open = (browser) => h.openPage(browser, pageDir, "", consoleErrors);

async function redraw(page, act) {
  const before = await modelDraws(page);
  await act();
  await page.waitForFunction((n) => Number(document.body.dataset.modelDraws) > n, { timeout: 60000 }, before);
}

async function typeWord(page, word) {
  await redraw(page, async () => {
    await page.evaluate(() => { const e = document.getElementById("word"); e.value = ""; e.dispatchEvent(new Event("input")); });
  });
  if (word !== "") await redraw(page, () => page.type("#word", word));
}

// Every number of the model's part against the native build; every native number shown.
async function compareModel(page, hash, where) {
  const want = native(hash);
  assert.strictEqual(want.error, "", `${where}: the native build refused ${hash}: ${want.error}`);
  assert.strictEqual(await page.evaluate(() => Model.hash()), hash, `${where}: the page asked for another hash`);
  for (const digits of [17, 6]) {
    await h.setDigits(page, digits);
    const shown = await h.shownNumbers(page, "#gpt .num");
    const counts = {};
    for (const s of shown) counts[s.key] = (counts[s.key] || 0) + 1;
    for (const [key, m] of Object.entries(want.numbers)) {
      assert.strictEqual(counts[key] || 0, m.length * m[0].length, `${where}: ${key} shown in full`);
    }
    h.compareNumbers(shown, want, digits, where);
  }
  return want;
}

async function words(page) {
  // The longest word the context of 16 takes is 15 letters (the boundary comes first).
  for (const word of ["em", "a", "zyx", "qwertyuiop", "abcdefghijklmno"]) {
    await typeWord(page, word);
    const want = await compareModel(page, "word=" + word, `word ${word}`);
    const n = want.numbers;
    assert.strictEqual(n["gpt.norms"][0][0], 5, "2 x 2 layers + 1 LayerNorms");
    assert.strictEqual(n["gpt.norm0.mean"][0].length, word.length + 1, "a mean per position (the boundary and each letter)");
    const total = n["gpt.next"][0].reduce((a, b) => a + b, 0);
    assert(Math.abs(total - 1) < 1e-12, `${word}: the next-character probabilities add up to ${total}`);
    assert.strictEqual(await page.$$eval("#gpt .gpt-norm", (e) => e.length), 5, `${word}: five LayerNorm cards`);
    // The bars ranked, most likely first (they were in the vocabulary's order), each with its letter.
    const bars = await page.$$eval("#gpt-next .bar", (e) => e.map((b) => [b.querySelector(".char").textContent, Number(b.querySelector(".num").dataset.j)]));
    const p = n["gpt.next"][0], vocab = want.labels["gpt.vocab"];
    for (let k = 1; k < bars.length; ++k) assert(p[bars[k - 1][1]] >= p[bars[k][1]], `${word}: bar ${k} is more likely than bar ${k - 1}`);
    bars.forEach(([c, j]) => assert.strictEqual(c, j === 0 ? "end" : vocab[j], `${word}: bar for token ${j}`));
    assert.strictEqual(bars[0][1], p.indexOf(Math.max(...p)), `${word}: the most likely first`);
  }
  console.log("ok words: every LayerNorm's statistics, γ, β and the next character match the native build");
}

async function samples(page) {
  await typeWord(page, "em");
  for (const seed of [1, 2]) {
    await redraw(page, () => page.click("#sample"));
    const want = await compareModel(page, `sample=${seed}&word=em`, `sample ${seed}`);
    const text = await page.$eval("#sample-text", (e) => e.textContent);
    assert.strictEqual(text, want.labels["gpt.sample"], `seed ${seed}: the sampled word`);
    assert(text.startsWith("em"), `seed ${seed}: the sample continues the word, got ${text}`);
    // Each drawn probability beside its letter: the letters added, then the end (unless the context filled).
    const letters = await page.$$eval("#gpt-sample .drawn .char", (e) => e.map((c) => c.textContent));
    const added = [...text.slice(2)], drawnCount = want.numbers["gpt.sample_p"][0].length;
    assert.deepStrictEqual(letters, drawnCount > added.length ? added.concat(["end"]) : added, `seed ${seed}: the drawn letters`);
    console.log(`ok sample seed ${seed}: "${text}", as the native build draws it`);
  }
  await (await page.$("#gpt")).screenshot({ path: path.join(shots, "model.png") });
}

async function badWords(page) {
  const cases = [["em1", /'1' is not in the model's vocabulary/], ["Em", /'E' is not in the model's vocabulary/],
                 ["", /empty/], ["abcdefghijklmnop", /16 letters; the model reads at most 15/],
                 ["abcdefghijklmnopqrstuvwxyzabcdefghij", /36 letters; the model reads at most 15/]];
  for (const [word, pattern] of cases) {
    await typeWord(page, word);
    const want = native("word=" + word);
    assert.match(want.error, pattern, `native message for '${word}'`);
    const shown = await page.$eval("#word-message", (e) => (e.hidden ? "" : e.textContent));
    assert.strictEqual(shown, want.error, `the page's message for '${word}'`);
    assert.strictEqual((await h.shownNumbers(page, "#gpt .num")).length, 0, `'${word}': no numbers`);
  }
  await typeWord(page, "em");
  assert.strictEqual(await page.$eval("#word-message", (e) => e.hidden), true, "the message goes away");
  console.log("ok bad words: each gets its one-line message and no numbers");
}

// The word is in the page's address: a link opens it, typing writes it; and
// each LayerNorm's γ and β are drawn as a bar per feature (numbers folded beside).
async function wordInAddress(browser) {
  const page = await h.openPage(browser, pageDir, "#x=3,1,5,7&word=zyx", consoleErrors);
  await page.waitForFunction(() => Number(document.body.dataset.modelDraws) > 0, { timeout: 60000 });
  const want = await compareModel(page, "word=zyx", "a link's word");
  assert.strictEqual(await page.$eval("#word", (e) => e.value), "zyx", "the link's word fills the field");
  await typeWord(page, "ab");
  const address = await page.evaluate(() => decodeURIComponent(location.hash.slice(1)));
  assert.match(address, /(^|&)word=ab($|&)/, `typing writes the word into the address: ${address}`);
  const features = want.numbers["gpt.norm0.gamma"][0].length;
  const plots = await page.$$eval("#gpt .gpt-norm", (cards) => cards.map((c) => [...c.querySelectorAll(".gb-plot")].map((s) => s.querySelectorAll("rect").length)));
  assert.strictEqual(plots.length, 5, "five LayerNorm cards");
  for (const [k, card] of plots.entries()) assert.deepStrictEqual(card, [features, features], `LayerNorm ${k + 1}: a bar per feature for γ and β`);
  await (await page.$("#gpt .gpt-norm")).screenshot({ path: path.join(shots, "model-gamma-beta.png") });
  await page.close();
  console.log(`ok the word in the address (a link opens zyx, typing writes ab); γ and β drawn, ${features} bars each, in 5 LayerNorms`);
}

h.run(consoleErrors, async (browser) => {
  const page = await open(browser);
  await words(page);
  await samples(page);
  await badWords(page);
  await wordInAddress(browser);
  if (consoleErrors.length === 0) {
    console.log(`ok no console errors; largest |page - native| ${h.compareNumbers.largest.engine}; screenshot in ${shots}`);
  }
});
