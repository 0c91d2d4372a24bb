// What can be seen first: a keystroke's frame holds the parts of the page on the screen,
// and the others are drawn just after that frame is shown, unless a newer draw has taken
// over by then (so a part scrolled to a moment later is drawn already). An
// IntersectionObserver keeps which parts are on the screen, so asking costs no layout.
// The live page and the explorer use it.
"use strict";

const Soon = (() => {
  const onScreen = new Set();
  let observed = false;  // before the observer's first report, every part counts as on the screen
  const observer = new IntersectionObserver((entries) => {
    observed = true;
    for (const e of entries) (e.isIntersecting ? onScreen.add(e.target) : onScreen.delete(e.target));
  });
  let latest = null;

  // jobs: [element, draw] pairs. The draws of elements on the screen run now, the
  // others after the next frame; then done(), once all have run (never, if a newer
  // run took over before the others did: that run draws them and calls its own done).
  // body.dataset.soon is "drawing" from a run's start until the newest run is done,
  // "idle" after: the browser tests wait for it, since an older run's done (counted in
  // body.dataset.draws) may come while the newest run's parts are still to be drawn.
  function run(jobs, done) {
    const now = [], rest = [];
    for (const [element, job] of jobs) {
      observer.observe(element);
      (!observed || onScreen.has(element) ? now : rest).push(job);
    }
    const mine = latest = {};
    document.body.dataset.soon = "drawing";
    const finish = () => {
      done();
      if (latest === mine) document.body.dataset.soon = "idle";
    };
    for (const job of now) job();
    if (rest.length === 0) return finish();
    requestAnimationFrame(() => setTimeout(() => {
      if (latest !== mine) return;
      for (const job of rest) job();
      finish();
    }, 0));
  }

  return { run };
})();
