// The training page (train.html, docs/training-page.md) in headless Chromium:
//   node train.test.js BUILD/page AUTOGRAD SCREENSHOT_DIR
// 1. The default run on moons passes 90% validation accuracy within 300 steps.
// 2. With steps=K the page stops at `step K`; its training loss equals the one
//    `autograd train` prints for the page's own command to 1e-9 (no norm,
//    LayerNorm composed, BatchNorm, RMSNorm fused on the spiral, LayerNorm after
//    the activation).
// 3. Bad settings, in the address or typed, get their one-line message; a
//    diverging run stops and names the step and the layer.
// 4. The experiments run to the end and show their numbers.
// 5. At 390 px nothing scrolls sideways; screenshots of training in progress.
// Steps a second are printed, never asserted.
"use strict";

const assert = require("assert");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { execFileSync } = require("child_process");
const h = require("./helpers");

const [pageDir, autograd, shots] = process.argv.slice(2);
if (!shots) {
  console.error("usage: node train.test.js PAGE_DIR AUTOGRAD SCREENSHOT_DIR");
  process.exit(2);
}
fs.mkdirSync(shots, { recursive: true });
const consoleErrors = [];

async function open(browser, hash) {
  return h.openPage(browser, pageDir, hash ? "#" + hash : "", consoleErrors, "train.html");
}

// Waits until the page's run is over (done, diverged or refused) and reads what it shows.
async function finished(page) {
  await page.waitForFunction(() => ["done", "diverged", "error"].includes(document.body.dataset.state), { timeout: 60000 });
  return page.evaluate(() => ({
    state: document.body.dataset.state,
    step: document.getElementById("step-text").textContent,
    loss: document.getElementById("loss-text").textContent,
    full: Number(document.getElementById("loss-text").dataset.full),
    accuracy: document.getElementById("acc-text").textContent,
    command: document.getElementById("command").textContent,
    message: document.getElementById("message").hidden ? "" : document.getElementById("message").textContent,
  }));
}

// `autograd train` with the page's command: the training loss it prints.
function nativeLoss(command) {
  assert.ok(command.startsWith("autograd train "), command);
  const args = command.slice("autograd ".length).split(" ").map((a) => (a === '""' ? "" : a));
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "train-page-"));
  try {
    const text = execFileSync(autograd, [...args, "--out", out], { encoding: "utf8", env: { ...process.env, OPENBLAS_NUM_THREADS: "1" } });
    const m = text.match(/train loss (\S+) \(the whole training set\)/);
    assert.ok(m, text);
    return m[1];
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

async function learns(browser) {
  const page = await open(browser, "steps=300");
  const shown = await finished(page);
  assert.strictEqual(shown.state, "done");
  assert.strictEqual(shown.step, "step 300");
  const accuracy = parseFloat(shown.accuracy);
  assert.ok(/^\d+\.\d\d%$/.test(shown.accuracy) && accuracy >= 90, `validation accuracy ${shown.accuracy}`);
  console.log(`default moons run: validation accuracy ${shown.accuracy} after 300 steps, train loss ${shown.loss}`);
  const tape = await page.$eval("#tape-text", (e) => e.textContent);
  assert.ok(/composed \d+ nodes, [\d.]+ KB saved for backward; fused \d+ nodes/.test(tape), tape);
  await page.close();
}

async function matchesNative(browser) {
  for (const hash of ["steps=100", "norm=layernorm&impl=composed&lr=0.03&steps=100", "norm=batchnorm&optimizer=momentum&lr=0.1&steps=100",
                      "dataset=spiral&norm=rmsnorm&impl=fused&activation=relu&batch=50&init=0.5&steps=80",
                      "norm=layernorm&placement=post&activation=relu&lr=0.03&steps=100"]) {
    const page = await open(browser, hash);
    const shown = await finished(page);
    const k = Number(hash.match(/steps=(\d+)/)[1]);
    assert.strictEqual(shown.step, `step ${k}`, hash);
    assert.ok(shown.command.endsWith(` --steps ${k}`), shown.command);
    const native = nativeLoss(shown.command);
    const diff = Math.abs(shown.full - Number(native));
    console.log(`${hash}: page ${shown.loss} (${shown.full}), native ${native}, |difference| ${diff.toExponential(2)}`);
    assert.ok(diff <= 1e-9, `${hash}: page ${shown.full}, native ${native}`);
    assert.ok(Math.abs(Number(shown.loss) - shown.full) <= 5e-12 * Math.abs(shown.full), `${shown.loss} is not ${shown.full} to 12 digits`);
    await page.close();
  }
}

const badSettings = [
  ["width=0", "width must be from 1 to 256, got 0"],
  ["lr=NaN", "lr must be a number from 1e-05 to 10, got 'NaN'"],
  ["depth=1000", "depth must be from 0 to 16, got 1000"],
  ["points=1000000", "points must be from 4 to 2000, got 1000000"],
  ["dataset=mnist", "dataset 'mnist' is not one of moons, circles, spiral, xor or blobs"],
  ["nrom=layernorm", "unknown setting 'nrom'"],
];

async function refuses(browser) {
  for (const [hash, message] of badSettings) {
    const page = await open(browser, hash);
    const shown = await finished(page);
    assert.strictEqual(shown.state, "error", hash);
    assert.ok(shown.message.startsWith(message), `${hash}: "${shown.message}"`);
    await page.close();
  }
  // Typed: the field's text reaches the engine as it is.
  const page = await open(browser, "");
  await page.$eval("#f-width", (e) => { e.value = "0"; e.dispatchEvent(new Event("change")); });
  assert.strictEqual((await finished(page)).message, "width must be from 1 to 256, got 0");
  await page.$eval("#f-width", (e) => { e.value = "8"; e.dispatchEvent(new Event("change")); });
  await page.waitForFunction(() => document.body.dataset.state === "paused");
  assert.ok((await page.$eval("#command", (e) => e.textContent)).includes("--hidden 8,8 "));
  assert.ok((await page.evaluate(() => location.hash)).includes("width=8"));
  await page.close();
  const diverging = await open(browser, "optimizer=sgd&lr=10&init=100&depth=4&width=32&activation=relu&steps=500");
  const shown = await finished(diverging);
  assert.strictEqual(shown.state, "diverged");
  assert.ok(/^diverged at step \d+: .*layer \d/.test(shown.message), shown.message);
  console.log("diverging run: " + shown.message);
  await diverging.close();
}

async function experiments(browser) {
  const page = await open(browser, "");
  // Every status line the experiments write: a run trained in slices shows its step between them.
  await page.evaluate(() => {
    window.statuses = [];
    new MutationObserver(() => window.statuses.push(document.getElementById("experiment-status").textContent))
      .observe(document.getElementById("experiment-status"), { childList: true, characterData: true, subtree: true });
  });
  for (const [name, words] of [["lr", "Enables higher learning rates"], ["init", "Reduces dependency on initialization"],
                               ["deep", "Stabilizes training of deep networks"], ["batch", "LayerNorm minus BatchNorm"], ["rms", "with RMSNorm took"]]) {
    await page.click(`[data-experiment=${name}]`);
    await page.waitForFunction((n) => document.body.dataset.experiment === n, { timeout: 120000 }, name);
    const result = await page.$eval("#experiment-result", (e) => e.textContent);
    assert.ok(result.includes(words) && /\d/.test(result) && !result.includes("NaN"), `${name}: ${result}`);
    console.log(`experiment ${name}: ${result.slice(result.indexOf(words.split(" ")[0]) - 1).slice(0, 400)}`);
  }
  const sliced = await page.evaluate(() => window.statuses.filter((s) => /\(step \d+\)$/.test(s)).length);
  assert.ok(sliced > 0, "the experiments' runs are trained in slices, the page answering between them");
  console.log(`the experiments' runs advanced in slices (${sliced} status lines with a step)`);
  await page.close();
}

async function phoneAndScreenshots(browser) {
  const page = await open(browser, "norm=layernorm&depth=3");
  await page.click("#play");
  await page.waitForFunction(() => Number(document.body.dataset.reports) > 30, { timeout: 60000 });
  await page.screenshot({ path: path.join(shots, "train-1280.png"), fullPage: true });
  await page.setViewport({ width: 390, height: 844 });
  await page.waitForFunction(() => Number(document.body.dataset.reports) > 40, { timeout: 60000 });
  assert.deepStrictEqual(await h.sticksOut(page), [], "at 390 px: no sideways scroll, nothing cut off");
  await page.screenshot({ path: path.join(shots, "train-390.png"), fullPage: true });
  await page.click("#play");  // pause
  await page.close();
}

// The default model (2 tanh layers of 16, batch 32, 200 points) for 3 seconds: printed, never asserted.
async function speed(browser) {
  const page = await open(browser, "");
  const rate = await page.evaluate(async () => {
    const before = window.Train.report.step, reports = Number(document.body.dataset.reports), t0 = performance.now();
    document.getElementById("play").click();
    await new Promise((r) => setTimeout(r, 3000));
    document.getElementById("play").click();
    const seconds = (performance.now() - t0) / 1000;
    return [(window.Train.report.step - before) / seconds, (Number(document.body.dataset.reports) - reports) / seconds];
  });
  console.log(`speed (printed, not asserted): ${rate[0].toFixed(0)} steps a second, the boundary redrawn ${rate[1].toFixed(0)} times a second`);
  await page.close();
}

h.run(consoleErrors, async (browser) => {
  await learns(browser);
  await matchesNative(browser);
  await refuses(browser);
  await phoneAndScreenshots(browser);
  await speed(browser);
  await experiments(browser);
});
