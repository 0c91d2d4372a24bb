// The training page's speed, measured (never asserted): the default run's
// steps a second in headless Chromium, training alone (playground_start, then
// playground_advance of 3000 steps) and with every view redrawn (play, 3 s). Given two page folders (two
// builds, such as -O2 and -O3), it alternates them, round by round.
//   node train_speed.js BUILD/page [OTHER/page]
"use strict";

const h = require("./helpers");

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

(async () => {
  const dirs = process.argv.slice(2);
  if (!dirs.length) { console.error("usage: node train_speed.js PAGE_DIR [OTHER_PAGE_DIR]"); process.exit(2); }
  const { browser } = await h.launch();
  const problems = [], pages = [];
  for (const d of dirs) pages.push(await h.openPage(browser, d, "", problems, "train.html"));
  const alone = dirs.map(() => []);
  for (let round = 0; round < 8; ++round) {
    for (const k of round % 2 ? [...pages.keys()].reverse() : pages.keys()) {
      alone[k].push(await pages[k].evaluate(() => {
        const start = window.Train.call("playground_start", window.Train.hashOf());
        if (start.error) throw new Error(start.error);
        const t0 = performance.now(), a = window.Train.call("playground_advance", 3000);
        return a.step / ((performance.now() - t0) / 1000);
      }));
    }
  }
  for (const [k, page] of pages.entries()) {
    const drawn = await page.evaluate(async () => {
      const before = window.Train.report.step, reports = Number(document.body.dataset.reports), t0 = performance.now();
      document.getElementById("play").click();
      await new Promise((r) => setTimeout(r, 3000));
      document.getElementById("play").click();
      const s = (performance.now() - t0) / 1000;
      return [(window.Train.report.step - before) / s, (Number(document.body.dataset.reports) - reports) / s];
    });
    console.log(`${dirs[k]}: training alone ${median(alone[k].slice(1)).toFixed(0)} steps/s (median of 7 rounds after one warm-up); ` +
                `playing ${drawn[0].toFixed(0)} steps/s with ${drawn[1].toFixed(0)} redraws/s`);
  }
  if (problems.length) console.log("console: " + problems.join("; "));
  await browser.close();
})();
