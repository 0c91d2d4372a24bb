// Where a keystroke's time goes on the live page: the handler (the engine with JSON.parse,
// then the drawing), the browser's style and layout forced right after it, the next
// animation frame, and the frame after that; and the floor of "to the next frame" with no
// work at all. Median of 9 keystrokes, d = 4, 64 and 768, after two warm-up passes (the
// WebAssembly is compiled in tiers). Not a test: a measurement (docs/live-page.md, "Measured").
//   node page/test/speed_breakdown.js build/page/index.html
"use strict";
const h = require("./helpers.js");
const path = require("path");

async function keystrokes(page, D) {
  const x = Array.from({ length: D }, (_, j) => (Math.sin(j + 1) * 3 + 1).toFixed(3)).join(",");
  const runs = [];
  for (let r = 0; r < 9; ++r) {
    runs.push(await page.evaluate((text) => new Promise((done) => {
      const el = document.getElementById("x");
      const t0 = performance.now();
      el.value = text;
      el.dispatchEvent(new Event("input"));
      const handler = performance.now() - t0;
      void document.body.offsetHeight;  // style and layout, now
      const layout = performance.now() - t0;
      requestAnimationFrame(() => {
        const frame = performance.now() - t0;
        requestAnimationFrame(() => done({ handler, layout, frame, next: performance.now() - t0,
                                           engine: Number(document.body.dataset.computeMs),
                                           draw: Number(document.body.dataset.drawMs) }));
      });
    }), r % 2 ? x : x + ",0.5"));
  }
  const median = (k) => runs.map((t) => t[k]).sort((a, b) => a - b)[4].toFixed(1);
  return `d = ${D}: handler ${median("handler")} ms (engine + JSON.parse ${median("engine")}, drawing ` +
         `${median("draw")}), with style and layout ${median("layout")}, to the next frame ${median("frame")}, ` +
         `to the one after ${median("next")}`;
}

(async () => {
  const { browser } = await h.launch();
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto("file://" + path.resolve(process.argv[2] || "build/page/index.html") + "#x=3,1,5,7");
  await page.waitForFunction(() => Number(document.body.dataset.draws) > 0);
  for (let pass = 0; pass < 3; ++pass) {
    for (const D of [4, 64, 768]) {
      const line = await keystrokes(page, D);
      if (pass === 2) console.log(line);
    }
  }
  const floor = [];
  for (let r = 0; r < 9; ++r) {
    floor.push(await page.evaluate(() => new Promise((done) => {
      const t0 = performance.now();
      requestAnimationFrame(() => done(performance.now() - t0));
    })));
  }
  console.log(`no work at all: to the next frame ${floor.sort((a, b) => a - b)[4].toFixed(1)} ms`);
  await browser.close();
})();
