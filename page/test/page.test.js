// The live page in a real headless Chromium (Debian's, via puppeteer-core).
//   node page.test.js BUILD/page BUILD/page/page_expected SCREENSHOT_DIR
// Types the seeds' inputs and compares every number shown with the native
// build (page_expected, the same C++ source) to 1e-12; walks the backward;
// types every bad input; opens shared links; fails on any console error;
// saves a screenshot of each view; prints the keystroke-to-table times.
"use strict";

const assert = require("assert");
const fs = require("fs");
const path = require("path");
const h = require("./helpers");

const [pageDir, expectedBin, shots] = process.argv.slice(2);
if (!shots) {
  console.error("usage: node page.test.js PAGE_DIR PAGE_EXPECTED SCREENSHOT_DIR");
  process.exit(2);
}
fs.mkdirSync(shots, { recursive: true });
const url = "file://" + path.resolve(pageDir, "index.html");
const consoleErrors = [];
const native = (hash) => h.expected(expectedBin, hash);

const open = (browser, hash = "") => h.openPage(browser, pageDir, hash, consoleErrors);

// Every shown number against the native build, at 17 digits and at the default 6.
async function compareAll(page, hash, where, skip, all = false) {
  const want = native(hash);
  assert.strictEqual(want.error, "", `${where}: the native build refused ${hash}: ${want.error}`);
  const got = await page.evaluate(() => decodeURIComponent(location.hash.slice(1)));
  assert.strictEqual(got, hash, `${where}: the page's address`);
  await h.setDigits(page, 17);
  const shown = await h.shownNumbers(page);
  h.checkEveryKeyShown(shown, want, where, skip, all);
  const n = h.compareNumbers(shown, want, 17, where);
  await h.setDigits(page, 6);
  h.compareNumbers(await h.shownNumbers(page), want, 6, where);
  return { n, want };
}

async function typeSeed003(page) {
  await h.typeInto(page, "#x", "3, 1, 5, 7");
  await h.typeInto(page, "#gamma", "2");
  await h.typeInto(page, "#beta", "1");
  await h.typeInto(page, "#eps", "1e-5");
  const { n, want } = await compareAll(page, "x=3,1,5,7&gamma=2&beta=1&eps=1e-5", "seed 003", ["bn."]);
  // Seed 003's own worked numbers; it rounds twice (x̂ to 3 decimals, then y), so -1.684 for -1.6833.
  [0.106, -1.684, 1.894, 3.684].forEach((v, j) => assert(Math.abs(want.numbers["ln.7"][0][j] - v) < 1e-3, "seed 003 y"));
  assert.strictEqual(await page.$eval("#params", (e) => e.textContent), "8", "2 x d parameters");
  // The Jacobian: rank d - 1, J 1 = 0, and x̂ shrunk by (gamma / std) eps / (var + eps).
  const w = want.numbers, shrink = (2 / w["ln.4"][0][0]) * 1e-5 / (w["ln.1"][0][0] + 1e-5);
  assert.strictEqual(w["jac.rank"][0][0], 3, "rank d - 1");
  assert(w.maxdiff[0][0] < 1e-14, `composed and fused dx, dgamma, dbeta differ by ${w.maxdiff[0][0]}`);
  assert(w["fd.err"][0][0] < 1e-6, `the tape's dx is ${w["fd.err"][0][0]} from finite differences`);
  assert(w["jac.ones"][0][0] < 1e-14, "J 1 = 0");
  assert(Math.abs(w["jac.xhat"][0][0] / shrink - 1) < 1e-6, `|J x̂| / |x̂| = ${w["jac.xhat"][0][0]}, expected ${shrink}`);
  // The mean-0 / std-1 check: x̂'s mean is 0 and its std √(var / (var + eps)), to rounding.
  const check = w["ln.check"][0], variance = w["ln.1"][0][0];
  assert(Math.abs(check[0]) < 1e-13 && Math.abs(check[1] - Math.sqrt(variance / (variance + 1e-5))) < 1e-13, `x̂'s mean and std: ${check}`);
  assert.match(await page.$eval("#ln", (e) => e.textContent), /check: x̂'s mean and std/, "the check shown");
  assert.match(await page.$eval("#bn", (e) => e.textContent), /at least 2 samples/, "BatchNorm on one vector");
  // ... said as what BatchNorm needs, with a batch one click away, not as an error in red.
  assert.strictEqual(await page.$$eval(".view-error", (e) => e.length), 0, "no error on one vector");
  assert.match(await page.$eval("#bn a.offer", (e) => e.getAttribute("href")), /^#rows=/, "BatchNorm offers a batch");
  await page.screenshot({ path: path.join(shots, "seed003.png"), fullPage: true });
  console.log(`ok seed 003 typed: ${n} numbers equal the native build's to 1e-12`);
  // The sliders write the fields: gamma 0.5, beta -1, eps 1e-2 (log scale), then back.
  for (const [id, value] of [["gamma-slider", "0.5"], ["beta-slider", "-1"], ["eps-slider", "-2"]]) {
    const before = await h.draws(page);
    await page.$eval("#" + id, (e, v) => { e.value = v; e.dispatchEvent(new Event("input")); }, value);
    await h.waitForDraw(page, before);
  }
  await compareAll(page, "x=3,1,5,7&gamma=0.5&beta=-1&eps=1e-2", "the sliders", ["bn."]);
  for (const [id, value] of [["gamma", "2"], ["beta", "1"], ["eps", "1e-5"]]) await h.typeInto(page, "#" + id, value);
}

async function typeSeed000(page) {
  const rows = "1.133, -0.299, 0.503\n-0.176, 0.911, 0.143\n0.766, 0.781, -0.518\n1.601, -0.669, 0.368\n0.663, 0.779, 0.648";
  await h.typeInto(page, "#gamma", "1");
  await h.typeInto(page, "#beta", "0");
  await h.typeInto(page, "#x", rows);
  const seed000 = await compareAll(page, "rows=" + rows.replace(/, /g, ",").replace(/\n/g, ";") + "&gamma=1&beta=0&eps=1e-5", "seed 000");
  // Seed 000's first row, to its two decimals: [1.17, -1.27, 0.10].
  [1.17, -1.27, 0.10].forEach((v, j) => assert(Math.abs(seed000.want.numbers["ln.7"][0][j] - v) < 5e-3, "seed 000 row 1"));
  await page.screenshot({ path: path.join(shots, "seed000-batch.png"), fullPage: true });
  // RMSNorm and BatchNorm toggle off and on again beside LayerNorm.
  for (const [box, view] of [["#show-rms", "#rms"], ["#show-bn", "#bn"]]) {
    await page.click(box);
    assert.strictEqual(await page.$eval(view, (e) => e.offsetParent === null), true, `${view} hidden`);
    await page.screenshot({ path: path.join(shots, `without-${view.slice(1)}.png`) });
    await page.click(box);
    assert.strictEqual(await page.$eval(view, (e) => e.offsetParent === null), false, `${view} shown again`);
  }
  const bn = await page.$("#bn");
  await bn.screenshot({ path: path.join(shots, "batchnorm.png") });
  console.log(`ok seed 000 typed (5 x 3 batch, BatchNorm train and eval): ${seed000.n} numbers equal`);
}

// The other inputs: per-feature gamma, a typed dy, BatchNorm's steps, a wider row (heatmap without numbers).
async function otherInputs(page) {
  await h.typeInto(page, "#x", "3, 1, 5, 7");
  await h.typeInto(page, "#gamma", "1, 2, 3, 4");
  await h.typeInto(page, "#beta", "0, 0.5, 0, -0.5");
  await h.typeInto(page, "#dy", "1, 0, 0, 0");
  assert.match(await page.$eval("#dy-name", (e) => e.textContent), /typed/);
  await compareAll(page, "x=3,1,5,7&gamma=1,2,3,4&beta=0,0.5,0,-0.5&eps=1e-5&dy=1,0,0,0", "per-feature gamma, typed dy", ["bn."]);
  await h.typeInto(page, "#dy", "");
  await h.typeInto(page, "#gamma", "1");
  await h.typeInto(page, "#beta", "0");
  await h.typeInto(page, "#x", "1, 2\n3, 5\n-1, 4");
  await h.typeInto(page, "#steps", "3");
  await compareAll(page, "rows=1,2;3,5;-1,4&gamma=1&beta=0&eps=1e-5&steps=3", "BatchNorm after 3 steps");
  const wide = Array.from({ length: 16 }, (_, j) => (j * 0.37 - 2).toFixed(2)).join(",");
  await h.typeInto(page, "#steps", "10");
  await h.typeInto(page, "#x", wide);
  const { n } = await compareAll(page, `x=${wide}&gamma=1&beta=0&eps=1e-5`, "16 features", ["bn."]);
  await page.screenshot({ path: path.join(shots, "sixteen.png"), fullPage: true });
  // 40 features: rows longer than 32 show their first 12 and last 4, or every number.
  const forty = Array.from({ length: 40 }, (_, j) => (Math.cos(j) * 2).toFixed(2)).join(",");
  await h.typeInto(page, "#x", forty);
  await compareAll(page, `x=${forty}&gamma=1&beta=0&eps=1e-5`, "40 features, elided", ["bn."]);
  assert.match(await page.$eval("#ln", (e) => e.textContent), /… 24 more …/);
  let before = await h.draws(page);
  await page.click("#all-numbers");
  await h.waitForDraw(page, before);
  await compareAll(page, `x=${forty}&gamma=1&beta=0&eps=1e-5`, "40 features, every number", ["bn."], true);
  before = await h.draws(page);
  await page.click("#all-numbers");
  await h.waitForDraw(page, before);
  console.log(`ok per-feature gamma and beta, a typed dy, BatchNorm's steps, 16 and 40 features (elided and not): all equal the native build (16: ${n} numbers)`);
}

// Steps the backward node by node: a gradient appears only once every node
// that consumes it has run, and every gradient shown is the native one.
async function walk(page) {
  const hash = "x=3,1,5,7&gamma=2&beta=1&eps=1e-5";
  // The page is open already: a new hash redraws it, and each click's draw is waited
  // for (a card off the screen is drawn a frame later, so reading at once read the
  // tape before the walk began: CI saw "fewer gradients" at the second step).
  let before = await h.draws(page);
  await page.evaluate((to) => { location.hash = to; }, hash);
  await h.waitForDraw(page, before);
  const want = native(hash);
  before = await h.draws(page);
  await page.click("#walk-start");
  await h.waitForDraw(page, before);
  let pending = Infinity, steps = 0;
  for (;;) {
    const now = await page.$$eval("#tape .pending", (e) => e.length);
    assert(now <= pending, "the walk shows fewer gradients than the step before");
    pending = now;
    h.compareNumbers(await h.shownNumbers(page), want, 6, `walk step ${steps}`);
    const running = await page.$eval("#tape .node.running", (e) => Number(e.dataset.node));
    assert.strictEqual(running, want.tape.length - 1 - steps, "the node running");
    // The step's working: the op's declared rule, and one product per input that takes a gradient.
    const detail = await page.$eval("#walk-detail", (e) => ({ rule: e.querySelector(".walk-rule code").textContent,
                                                             adds: e.querySelectorAll(".walk-adds li").length }));
    assert.strictEqual(detail.rule, want.tape[running].rule, `the rule of node ${running}`);
    const products = Object.keys(want.numbers).filter((k) => k.startsWith(`tape.${running}.into.`)).length;
    assert(products > 0 && detail.adds === products, `node ${running}: ${detail.adds} products shown, ${products} computed`);
    if (steps === 4) await page.screenshot({ path: path.join(shots, "walk.png"), fullPage: true });
    if (await page.$eval("#walk-step", (b) => b.disabled)) break;
    before = await h.draws(page);
    await page.click("#walk-step");
    await h.waitForDraw(page, before);
    steps += 1;
  }
  assert.strictEqual(pending, 0, "every gradient shown at the end of the walk");
  assert.strictEqual(steps, 7, "8 op nodes walked");
  assert.match(want.tape.find((n) => n.op === "sqrt").rule, /dy \/ \(2 y\)/, "sqrt's local derivative, 1 / (2 sqrt(u))");
  // dx in three terms: they add up to the fused dx, and each is what one of x's
  // three paths on the tape (sub, mean, var) sends back into x.
  const n = want.numbers, scale = Math.max(...n["fused.dx"][0].map(Math.abs));
  assert(n["terms.err"][0][0] <= 1e-12 * scale, `three terms against the fused dx: ${n["terms.err"][0][0]}`);
  assert(n["terms.paths"][0][0] <= 1e-12 * scale, `three terms against the tape's paths: ${n["terms.paths"][0][0]}`);
  const paths = [1, 2, 3].map((k) => want.tape[n[`terms.${k}.node`][0][0]].op);
  assert.deepStrictEqual(paths, ["sub", "mean(dim=1)", "var(dim=1)"], "the nodes of the three paths");
  const shownTerms = await page.$$eval("#terms .num", (e) => new Set(e.map((s) => s.dataset.key)).size);
  assert(shownTerms >= 8, `the three-term card shows its numbers (${shownTerms} kinds)`);
  const bw = await page.$("#bw");
  await bw.screenshot({ path: path.join(shots, "backward.png") });
  console.log(`ok the backward walked node by node (${steps + 1} nodes), each with its rule and products; gradients equal the native ones; ` +
              `dx's three terms add to the fused dx within ${n["terms.err"][0][0]} and match the tape's paths within ${n["terms.paths"][0][0]}`);
}

// Bad input: the engine's one-line message on the page, never NaN or a frozen page.
async function badInputs(page) {
  const cases = [
    ["3, a, 5", "#message", /'a' is not a number/],
    ["3", "#ln .view-error", /at least 2 features/],
    ["2, 2, 2, 2", "#note", /all equal/],
    ["1e300, 1, 2", "#ln .view-error", /overflow/],
    ["1e400, 1", "#message", /'1e400' is out of range for a double/],
    ["", "#message", /empty/],
    ["1, 2, 3\n4, 5", "#message", /row 2 has 2 values, expected 3/],
  ];
  for (const [k, [text, where, pattern]] of cases.entries()) {
    await h.typeInto(page, "#x", text);
    const shownText = await page.$eval(where, (e) => (e.hidden ? "" : e.textContent));
    assert.match(shownText, pattern, `bad input ${JSON.stringify(text)}`);
    const numbers = await h.shownNumbers(page);
    assert(numbers.every((s) => Number.isFinite(Number(s.text))), `bad input ${JSON.stringify(text)}: NaN or inf shown`);
    const hash = await page.evaluate(() => decodeURIComponent(location.hash.slice(1)));
    const want = native(hash);
    if (where === "#message") assert.strictEqual(shownText, want.error, "the native build's message");
    else h.compareNumbers(await h.shownNumbers(page), want, 6, `bad input ${JSON.stringify(text)}`);
    await page.screenshot({ path: path.join(shots, `bad-${k}.png`) });
  }
  await h.typeInto(page, "#x", "3, 1, 5, 7");
  assert.strictEqual(await page.$eval("#message", (e) => e.hidden), true, "the message goes once the input is good");
  console.log(`ok ${cases.length} bad inputs each give their message on the page`);
}

// Shared links: opening one shows that example; changing the address redraws.
async function links(browser) {
  const seed = "x=3,1,5,7&gamma=2&beta=1&eps=1e-5";
  const page = await open(browser, "#" + seed);
  assert.strictEqual(await page.$eval("#x", (e) => e.value), "3,1,5,7");
  assert.strictEqual(await page.$eval("#gamma", (e) => e.value), "2");
  await compareAll(page, seed, "link " + seed, ["bn."]);
  const rows = "rows=1,2,3;4,5,7;0,-1,2&gamma=1&beta=0&eps=1e-5&steps=3";
  const before = await h.draws(page);
  await page.evaluate((r) => { location.hash = r; }, rows);
  await h.waitForDraw(page, before);
  assert.strictEqual(await page.$eval("#x", (e) => e.value), "1,2,3\n4,5,7\n0,-1,2");
  await compareAll(page, rows, "link " + rows);
  // The examples are such links, one click each.
  const seed000 = "rows=1.133,-0.299,0.503;-0.176,0.911,0.143;0.766,0.781,-0.518;1.601,-0.669,0.368;0.663,0.779,0.648";
  for (const [id, hash] of [["#ex-seed000", seed000], ["#ex-equal", "x=2,2,2,2"], ["#ex-seed003", seed]]) {
    const n = await h.draws(page);
    await page.click(id);
    await h.waitForDraw(page, n);
    const full = hash.includes("gamma") ? hash : hash + "&gamma=1&beta=0&eps=1e-5";
    await compareAll(page, full, "example " + id, hash.startsWith("x=") ? ["bn."] : []);
    const note = await page.$eval("#note", (e) => (e.hidden ? "" : e.textContent));
    assert.strictEqual(/variance is 0/.test(note), id === "#ex-equal", `${id}: the all-equal note`);
  }
  await page.close();
  console.log("ok links: #x=... and #rows=... open their example and match the native build");
}

// The Jacobian card says what its rank measured: at ε = 1e-5 x̂'s direction is
// kept, shrunk (rank d - 1); at ε = 1e-300 the shrink is below the rank's
// tolerance, so it is lost too (rank d - 2), where the card used to say
// "d - 1 = 3" and "kept but shrunk" beside "Rank 2". Axes and a colour scale.
async function jacobianCard(browser) {
  for (const [eps, rank, says, never] of [["1e-5", 3, /kept but shrunk/, /lost as well/], ["1e-300", 2, /lost as well \(d − 2 = 2\)/, /kept but shrunk/]]) {
    const hash = `x=3,1,5,7&gamma=2&beta=1&eps=${eps}`;
    const page = await open(browser, "#" + hash);
    const want = await compareAll(page, hash, "the Jacobian at eps " + eps, ["bn."]);
    assert.strictEqual(want.want.numbers["jac.rank"][0][0], rank, `rank at eps ${eps}`);
    const text = await page.$eval("#jacobian", (e) => e.textContent);
    assert.match(text, says, `eps ${eps}: ${text}`);
    assert.doesNotMatch(text, never, `eps ${eps}: ${text}`);
    assert.match(text, /Row i, column j: dy_i \/ dx_j/, "the axes said");
    const axes = await page.$$eval("#jacobian .jac-axis", (e) => e.map((t) => t.textContent));
    assert.deepStrictEqual([axes[0], axes[1], axes[6], axes[7]], ["x1", "y1", "x4", "y4"], "the axes' indices");
    assert.strictEqual(await page.$$eval("#jacobian [aria-label='the colour scale'] rect", (e) => e.length), 40, "the colour scale");
    await page.close();
  }
  console.log("ok the Jacobian card: its words follow the measured rank (eps 1e-5: d - 1, 1e-300: d - 2), axes and colour scale");
}

// The page as a teacher: each step's working with the engine's numbers in it, row 1
// drawn before and after, and γ = std, β = mean giving x back (seed 002), at 1280 and 390 px.
async function teacher(browser) {
  const seed = "x=3,1,5,7&gamma=2&beta=1&eps=1e-5";
  const page = await open(browser, "#" + seed);
  const working = () => page.$$eval("#ln .working", (e) => e.map((w) => w.textContent));
  const lines = await working();
  for (const line of ["mean = (3 + 1 + 5 + 7) / 4 = 4", "variance = ((-1)² + (-3)² + 1² + 3²) / 4 = 5",
                      "variance + ε = 5 + 1e-5 = 5.00001", "std = sqrt(5 + 1e-5) = 2.23607"]) {
    assert(lines.includes(line), `the working "${line}" among:\n  ${lines.join("\n  ")}`);
  }
  assert.strictEqual(lines.length, 8, "a working under each of LayerNorm's 8 steps");
  assert.match(lines[7], /^y = γ · x̂ \+ β: \(-0\.894426\) \+ 1 = 0\.105574, /, "y's working");
  const rms = await page.$$eval("#rms .working", (e) => e.map((w) => w.textContent));
  assert.deepStrictEqual([rms.length, rms[1], rms[3]], [6, "mean(x²) = (9 + 1 + 25 + 49) / 4 = 21", "rms = sqrt(21 + 1e-5) = 4.58258"],
                         "RMSNorm's working");
  // Row 1 as dots: 4 on each line, x̂ and y in x's order (γ > 0), x̂'s centred on its 0 tick.
  const dots = (k) => page.$eval(`svg.strip .dot-${k}`, (e) => [...e.getAttribute("d").matchAll(/M([^ ]+) /g)].map((m) => Number(m[1])));
  const [x, xhat, y] = [await dots(0), await dots(1), await dots(2)];
  assert.deepStrictEqual([x.length, xhat.length, y.length], [4, 4, 4], "a dot per feature on each line");
  const order = (v) => v.map((_, j) => j).sort((a, b) => v[a] - v[b]).join();
  assert(order(xhat) === order(x) && order(y) === order(x), "x̂ and y keep x's order");
  const zero = await page.$$eval("svg.strip text.tick-label", (e) => e.filter((t) => t.textContent === "0").map((t) => Number(t.getAttribute("x"))));
  assert(Math.abs(xhat.reduce((a, b) => a + b, 0) / 4 - zero[0]) < 1e-6, "x̂'s dots centred on 0");
  await page.screenshot({ path: path.join(shots, "teacher-1280.png"), fullPage: true });
  // γ = std and β = mean, one click: the fields hold the engine's numbers, and its y is x.
  const want = native(seed).numbers;
  let before = await h.draws(page);
  await page.click("#undo-norm");
  await h.waitForDraw(page, before);
  assert.strictEqual(await page.$eval("#gamma", (e) => e.value), String(want["ln.4"][0][0]), "γ = std");
  assert.strictEqual(await page.$eval("#beta", (e) => e.value), String(want["ln.0"][0][0]), "β = mean");
  const undone = `x=3,1,5,7&gamma=${want["ln.4"][0][0]}&beta=${want["ln.0"][0][0]}&eps=1e-5`;
  const { want: back } = await compareAll(page, undone, "γ = std, β = mean", ["bn."]);
  back.numbers["ln.7"][0].forEach((v, j) => assert(Math.abs(v - [3, 1, 5, 7][j]) < 1e-12, `y = x: ${v}`));
  assert.deepStrictEqual(await page.$$eval('#ln .num[data-key="ln.7"]', (e) => e.map((n) => n.textContent)), ["3", "1", "5", "7"]);
  assert.match(await page.$eval("#undo-said", (e) => (e.hidden ? "" : e.textContent)), /y = \(3, 1, 5, 7\).*loses nothing the model cannot undo/);
  const xAgain = await dots(0);
  (await dots(2)).forEach((c, j) => assert(Math.abs(c - xAgain[j]) < 1e-6, "y's dots on x's"));
  // At 390 px nothing scrolls sideways; a batch's working and picture are row 1's (and say so).
  await page.setViewport({ width: 390, height: 844 });
  assert.deepStrictEqual(await h.sticksOut(page), [], "390 px: no sideways scroll, nothing cut off");
  await (await page.$("#ln")).screenshot({ path: path.join(shots, "teacher-390.png") });
  await h.typeInto(page, "#gamma", "1");
  assert.strictEqual(await page.$eval("#undo-said", (e) => e.hidden), true, "the sentence goes with the next edit");
  await h.typeInto(page, "#x", Array.from({ length: 40 }, (_, j) => String(j % 7)).join(", ") + "\n1, 2" + ", 0".repeat(38));
  assert.match((await working())[0], /^mean = \(0 \+ 1 \+ 2 \+ … \(36 more\) … \+ 4\) \/ 40 = /, "a long row's first terms, and how many more");
  assert.match(await page.$eval("#ln", (e) => e.textContent), /are row 1's/);
  assert.strictEqual((await dots(0)).length, 40, "row 1's 40 dots");
  assert.deepStrictEqual(await h.sticksOut(page), [], "390 px, 40 features: no sideways scroll, nothing cut off");
  await page.close();
  console.log("ok the working, row 1's picture, and γ = std, β = mean giving x back (engine's y equals x to 1e-12)");
}

// Input event to the next frame (the tables drawn), D = 4, 64, 768: reported, never asserted.
async function timeKeystrokes(page, D, what) {
  const x = Array.from({ length: D }, (_, j) => (Math.sin(j + 1) * 3 + 1).toFixed(3)).join(",");
  const runs = [];
  for (let r = 0; r < 7; ++r) {
    runs.push(await page.evaluate((text) => new Promise((done) => {
      const el = document.getElementById("x");
      const t0 = performance.now();
      el.value = text;
      el.dispatchEvent(new Event("input"));
      requestAnimationFrame(() => done({ total: performance.now() - t0, engine: Number(document.body.dataset.computeMs),
                                         draw: Number(document.body.dataset.drawMs) }));
    }), r % 2 ? x : x + ",0.5"));
  }
  const median = (k) => runs.map((t) => t[k]).sort((a, b) => a - b)[3].toFixed(1);
  console.log(`time keystroke -> table drawn, D = ${D}${what}: median ${median("total")} ms ` +
              `(engine + JSON.parse ${median("engine")} ms, drawing ${median("draw")} ms; 7 runs)`);
}

async function timing(page) {
  for (const D of [4, 64, 768]) await timeKeystrokes(page, D, "");
  const before = await h.draws(page);
  await page.click("#all-numbers");
  await h.waitForDraw(page, before);
  await timeKeystrokes(page, 768, ", every number drawn");
}

h.run(consoleErrors, async (browser) => {
  const page = await open(browser);
  await typeSeed003(page);
  await typeSeed000(page);
  await otherInputs(page);
  await walk(page);
  await badInputs(page);
  await links(browser);
  await jacobianCard(browser);
  await teacher(browser);
  await timing(page);
  const largest = h.compareNumbers.largest;
  console.log(`largest |page - native| over every number compared: ${largest.engine} (finite differences: ${largest.fd})`);
  if (consoleErrors.length === 0) console.log("ok no console errors; screenshots in " + shots);
});
