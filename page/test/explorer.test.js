// The tape explorer in headless Chromium (docs/explorer.md):
//   node explorer.test.js BUILD/page EXPLORER_EXPECTED SCREENSHOT_DIR
// 1. Programs, typed or linked: every node's value, gradient, tangent and H v, and
//    every backward step, equal the native build's (explorer_expected) to 1e-12.
// 2. Every class of bad program shows its one-line message, the native one.
// 3. The LayerNorm dx exercise: the right answer scores full marks, wrong ones
//    get their own named hints, `score: N/M` shown.
// 4. At 390 px no view scrolls sideways; screenshots at 390 and 1280 px.
// 5. Keystroke to frame, median (printed, never asserted).
"use strict";

const assert = require("assert");
const fs = require("fs");
const path = require("path");
const h = require("./helpers");

const [pageDir, expectedBin, shots] = process.argv.slice(2);
if (!shots) {
  console.error("usage: node explorer.test.js PAGE_DIR EXPLORER_EXPECTED SCREENSHOT_DIR");
  process.exit(2);
}
fs.mkdirSync(shots, { recursive: true });
const consoleErrors = [];

const programs = [
  ["x = [3, 1, 5, 7]; g = 2; y = layernorm(x) * g + 1; L = sum(y * [1, 2, 3, 4])", "x"],
  ["w = [-3, 1]; x = [2, 0]; b = 6.8813735870195432; n = sum(w * x) + b; o = tanh(n)", "w"],
  ["z = [[2, 1, 0.1]]; p = softmax(z, dim=1); L = -sum(log(p) * [1, 0, 0])", "z"],
  ["q = [1, 0, 2]\nK = [[1, 2, 0], [0, 1, 1], [2, 0, -1]]\ns = q @ transpose(K) / 1.7320508\np = softmax(s, dim=1)\n" +
   "V = [[1, 0], [0, 1], [1, 1]]\nL = sum(p @ V * [1, -1])", "q"],
  ["A = [[1, 2, 3], [4, 5, 6]]; b = [0.5, -1, 2]; L = sum(square(A + b))", "b"],
  ["A = [[1, 2, 3], [4, 5, 6]]; k = [[1], [2]]; L = mean(A * k)", ""],
  ["A = [[1, 2], [3, 4], [5, 6]]; B = [[1, 0, 2], [0, 1, 1]]; L = sum(square(A @ B))", "A"],
  ["x = [0.5, 1, 2]; L = sum(log(exp(x) + 1))", "x"],
  ["x = [1.5, 2, 0.5]; L = sum(x ^ 3 - sqrt(x))", "x"],
  ["x = [-1, 0.5, 2]; L = sum(sigmoid(x) * relu(x))", ""],
  ["a = [1, 2, 3]; b = [2, 4, -1]; L = sum(a / b)", "b"],
  ["x = [[1, 2, 4], [3, 0, 1]]; L = sum(var(x, dim=1))", "x"],
  ["x = [[1, 2, 4], [3, 0, 1]]; L = sum(var_unbiased(x, dim=0) * [1, 2, 3])", ""],
  ["x = [[1, 5, 2], [7, 0, 3]]; L = sum(max(x, dim=1)) + sum(logsumexp(x, dim=0))", ""],
  ["x = [[1, 2, 4], [3, 0, 1]]; g = [1, 2, 0.5]; b = [0, 1, 0]; L = sum(layernorm_fused(x, g, b, eps=0.1) * [[1, 2, 3], [4, 5, 6]])", "g"],
  ["x = [[1, 2, 4], [3, 0, 1]]; g = [1, 2, 0.5]; L = sum(rmsnorm(x, g) ^ 2 * [1, 2, 3])", ""],
  ["x = [[1, 2], [3, 5], [0, 1]]; L = sum(batchnorm(x) * [[1, 2], [3, 4], [5, 6]])", ""],
  ["x = [-1, 0.3, 2]; L = sum(gelu(x) + gelu_fused(x) * 2)", "x"],
  ["a = [[1, 2]]; b = [[3]]; L = sum(hcat(a, b) * [1, 2, 3]) + sum(vcat(a, a) * [[1, 2], [3, 4]])", ""],
  ["x = [[1, 2], [3, 4], [5, 6]]; L = sum(rows(x, first=1, count=2) ^ 2) + sum(cols(x, first=1, count=1))", ""],
  ["x = [1, 2]; y = x * x + x; L = sum(y) - 2 * sum(-x)", "x"],
  ["x = [1, 2]; y = x * 3", ""],
];

const bad = [
  ["x = [1, 2]; L = layrnorm(x)", "did you mean layernorm?"],
  ["a = [1, 2, 3]; b = [1, 2]; L = sum(a + b)", "1x3"],
  ["x = [1, 2; L = sum(x)", "at column 10: syntax error"],
  ["x = 0x10", "syntax error"],
  ["x = [1, 2]; L = sum(y)", "unknown name 'y'"],
  ["x = [1, 2]; L = sum(x, x)", "sum takes 1 input"],
  ["x = [1, 2]; L = add_scalar(x)", "needs c=NUMBER"],
  ["x = [1, 2]; L = softmax(x)", "needs dim=0"],
  ["x = [1, 2]; L = mean(x, dims=1)", "no argument 'dims'"],
  ["x = [[1, 2], [3]]", "row 2 has 1"],
  ["", "the program is empty"],
];

const right = "g = dy * gamma; dx = rstd * (g - mean(g, dim=1) - xhat * mean(g * xhat, dim=1))";
const wrong = [
  ["g = dy * gamma; dx = rstd * (g - xhat * mean(g * xhat, dim=1))", "missing mean term"],
  ["g = dy * gamma; dx = rstd * (g - mean(g, dim=1))", "missing variance term"],
  ["g = dy; dx = rstd * (g - mean(g, dim=1) - xhat * mean(g * xhat, dim=1))", "gamma missing"],
  ["g = dy * gamma; dx = 2 * rstd * (g - mean(g, dim=1) - xhat * mean(g * xhat, dim=1))", "constant factor"],
];

const enc = (s) => encodeURIComponent(s);

// Equal to 1e-12 (relative above 1): matrices, or null on both sides.
function close(a, b, where) {
  if (a === null || b === null) { assert.strictEqual(a, b, where); return; }
  assert.strictEqual(a.length, b.length, where + ": rows");
  a.forEach((row, i) => row.forEach((v, j) => {
    const w = b[i][j];
    assert(Math.abs(v - w) <= 1e-12 * Math.max(1, Math.abs(w)), `${where}[${i}][${j}]: page ${v}, native ${w}`);
  }));
}

function sameReport(got, want, where) {
  assert.strictEqual(got.error, want.error, where + ": error");
  assert.strictEqual(got.nodes.length, want.nodes.length, where + ": nodes");
  got.nodes.forEach((n, k) => {
    for (const f of ["op", "label", "kind", "forward", "backward"]) assert.strictEqual(n[f], want.nodes[k][f], `${where} node ${k} ${f}`);
    for (const f of ["value", "grad", "tangent", "hvp"]) close(n[f], want.nodes[k][f], `${where} node ${k} ${f}`);
  });
  assert.strictEqual(got.backward.length, want.backward.length, where + ": backward steps");
  got.backward.forEach((s, k) => s.parts.forEach((p, i) => {
    close(p.contribution, want.backward[k].parts[i].contribution, `${where} step ${k} part ${i}`);
    close(p.total, want.backward[k].parts[i].total, `${where} step ${k} total ${i}`);
  }));
}

async function goto(page, hash) {
  const before = await h.draws(page);
  await page.evaluate((x) => {
    if (location.hash.slice(1) === x) window.dispatchEvent(new HashChangeEvent("hashchange"));
    else location.hash = x;
  }, hash);
  await h.waitForDraw(page, before);
  return page.evaluate(() => window.explorerAnswer);
}

async function programsMatch(page) {
  for (const [text, direction] of programs) {
    const hash = `program=${enc(text)}${direction ? "&direction=" + direction : ""}`;
    sameReport(await goto(page, hash), h.expected(expectedBin, hash), text);
    const steps = await page.$$eval("#fw-steps li", (l) => l.length), nodes = await page.$$eval("#graph g.node", (g) => g.length);
    const want = h.expected(expectedBin, hash);
    assert.strictEqual(steps, want.nodes.length, text + ": forward steps shown");
    assert.strictEqual(nodes, want.nodes.length, text + ": boxes drawn");
    assert.strictEqual(await page.$$eval("#bw-steps li", (l) => l.length), want.backward.length, text + ": backward steps");
    assert.strictEqual(await page.$eval("#message", (e) => e.hidden), true, text + ": a message");
  }
  // Typed, one keystroke at a time: the last keystroke's program is the one shown.
  await h.typeInto(page, "#program", "x = [1, -2]; L = sum(tanh(x) * x)");
  const typed = await page.evaluate(() => window.explorerAnswer);
  sameReport(typed, h.expected(expectedBin, "program=" + enc("x = [1, -2]; L = sum(tanh(x) * x)")), "typed");
  assert(decodeURIComponent(await page.evaluate(() => location.hash)).includes("sum(tanh(x) * x)"), "the program is in the URL");
  // A typed direction v: the tangents and H v move along it, as natively; a v of the wrong shape is one line.
  const ln = "x = [3, 1, 5, 7]; L = sum(layernorm(x) * [1, 2, 3, 4])";
  await goto(page, `program=${enc(ln)}&direction=x`);
  await h.typeInto(page, "#v", "1, 0, 0, -1");
  const along = await page.evaluate(() => window.explorerAnswer);
  const want = h.expected(expectedBin, `program=${enc(ln)}&direction=x&v=${enc("1, 0, 0, -1")}`);
  sameReport(along, want, "typed v");
  assert.deepStrictEqual(along.v, [[1, 0, 0, -1]], "the direction the engine moved along");
  assert(decodeURIComponent(await page.evaluate(() => location.hash)).includes("&v=1, 0, 0, -1"), "v is in the URL");
  assert.match(await page.$eval("#tangent-steps", (e) => e.textContent), /the direction v = \[1, 0, 0, -1\]/, "the walk names v");
  await h.typeInto(page, "#v", "1, 0");
  assert.match(await page.$eval("#message", (e) => e.textContent), /v: 1x2 numbers for x, which is 1x4/, "a v of the wrong shape");
  await h.typeInto(page, "#v", "");
  console.log(`${programs.length + 1} programs match the native engine; a typed direction v too, and a wrong-shaped v is named`);
}

async function badMessages(page) {
  for (const [text, part] of bad) {
    const native = h.expected(expectedBin, "program=" + enc(text)).error;
    await goto(page, "program=" + enc(text));
    const shown = await page.$eval("#message", (e) => (e.hidden ? "" : e.textContent));
    assert.strictEqual(shown, native, text);
    assert(shown.includes(part) && !shown.includes("\n"), `${text}: ${shown}`);
  }
  await goto(page, "program=x%3D1&gama=2");
  assert((await page.$eval("#message", (e) => e.textContent)).includes("unknown field 'gama'"), "a misspelt field");
  console.log(`${bad.length + 1} bad programs show the engine's one line`);
}

async function exercise(page) {
  await goto(page, `exercise=layernorm_dx&answer=${enc(right)}`);
  assert.strictEqual(await page.$eval("#score", (e) => e.textContent), "score: 4/4", "the right answer");
  assert((await page.$eval("#ex-statement", (e) => e.textContent)).includes("dy"), "the statement");
  const others = await page.$$eval("#ex-list a", (a) => a.map((e) => e.getAttribute("href")));
  assert.deepStrictEqual(others, ["#exercise=layernorm_dx", "#exercise=matmul_dA", "#exercise=rmsnorm_dx", "#exercise=softmax_dx"], "the exercises");
  const hints = new Set();
  for (const [answer, result] of wrong) {
    await goto(page, `exercise=layernorm_dx&answer=${enc(answer)}`);
    const score = await page.$eval("#score", (e) => e.textContent);
    assert(/^score: [0-3]\/4$/.test(score), `${answer}: ${score}`);
    const rows = await page.$$eval("#ex-rows tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert(rows.some((r) => r[2] === result), `${answer}: no row says ${result}: ${JSON.stringify(rows)}`);
    const shown = await page.$$eval("#ex-hints li", (li) => li.map((e) => e.textContent));
    const ex = (await page.evaluate(() => window.explorerAnswer)).exercise;
    ex.rows.filter((r) => r.result === result).forEach((r) => { assert(shown.includes(r.hint), `${answer}: hint not shown`); hints.add(r.hint); });
  }
  assert.strictEqual(hints.size, wrong.length, "each wrong answer its own hint");
  // Typed: the score follows the keystrokes.
  await h.typeInto(page, "#answer", right);
  assert.strictEqual(await page.$eval("#score", (e) => e.textContent), "score: 4/4", "typed right answer");
  console.log(`exercise: full marks, ${wrong.length} wrong answers with ${hints.size} named hints`);
}

async function phone(page) {
  const views = [["program", ""], ["exercise", `exercise=layernorm_dx&answer=${enc(wrong[0][0])}`],
                 ["exercise-unanswered", "exercise=rmsnorm_dx"], ["error", "program=x%3D%5B1"],
                 ["attention", `program=${enc(programs[3][0])}&direction=q`]];
  for (const width of [390, 1280]) {
    await page.setViewport({ width, height: 900 });
    for (const [name, hash] of views) {
      await goto(page, hash || `program=${enc(programs[0][0])}&direction=x`);
      assert.deepStrictEqual(await h.sticksOut(page), [], `${name} at ${width} px: no sideways scroll, nothing cut off`);
      await page.screenshot({ path: path.join(shots, `explorer-${name}-${width}.png`), fullPage: true });
    }
  }
  console.log("no sideways scroll at 390 px; screenshots in " + shots);
}

// Keystroke (an input event) to the next frame, median of 25, at a small program and at d = 64, 768;
// and the keystroke's own work, to the end of the style and layout it forces. Each keystroke
// comes right after the frame before it, so the next frame is about 16.7 ms away at best:
// the same loop with an empty keystroke (an input event no one listens to) measures that
// floor in the same run. A figure at the floor is a keystroke drawn in the very next frame.
async function timing(page) {
  await page.setViewport({ width: 1280, height: 900 });
  const vector = (d) => "[" + Array.from({ length: d }, (_, k) => ((k * 7) % 11) - 5).join(", ") + "]";
  const loop = (id) => page.evaluate(async (id) => {
    const box = id ? document.getElementById(id) : document.createElement("textarea"), times = [], engine = [], work = [];
    for (let k = 0; k < 25; k++) {
      const t0 = performance.now();
      box.value += k % 2 ? "\n" : " ";
      box.dispatchEvent(new Event("input"));
      void document.body.offsetHeight;  // style and layout, now: the keystroke's own work ends here
      work.push(performance.now() - t0);
      await new Promise((r) => requestAnimationFrame(() => r()));
      times.push(performance.now() - t0);
      engine.push(Number(document.body.dataset.computeMs));
    }
    const median = (v) => v.sort((a, b) => a - b)[12];
    return [median(times), median(engine), median(work)];
  }, id);
  const load = () => `load ${require("os").loadavg()[0].toFixed(2)}`;
  console.log(`keystroke to frame, an empty keystroke (the floor): median ${(await loop(""))[0].toFixed(1)} ms (${load()})`);
  for (const [name, text] of [["small", programs[0][0]], ["d=64", `x = ${vector(64)}; L = sum(layernorm(x) * ${vector(64)})`],
                              ["d=768", `x = ${vector(768)}; L = sum(layernorm(x) * ${vector(768)})`]]) {
    await goto(page, "program=" + enc(text));
    const ms = await loop("program");
    console.log(`keystroke to frame, ${name}: median ${ms[0].toFixed(1)} ms; the keystroke's work (handler, style, layout) ` +
                `${ms[2].toFixed(1)} ms, of which the engine and JSON.parse ${ms[1].toFixed(1)} ms (${load()})`);
  }
}

h.run(consoleErrors, async (browser) => {
  const page = await h.openPage(browser, pageDir, "", consoleErrors, "explorer.html");
  const first = await page.evaluate(() => window.explorerAnswer);
  assert.strictEqual(first.error, "", "the default program");
  assert.strictEqual(await page.$eval("#message", (e) => e.hidden), true, "no message on first load");
  await programsMatch(page);
  await badMessages(page);
  await exercise(page);
  await phone(page);
  await timing(page);
});
