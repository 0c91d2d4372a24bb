// The seed's claims as one-click experiments: paired runs over seeds on the
// page's current settings (each run trained by the engine in slices of about
// 30 ms, playground_experiment_start/_advance, so the page answers throughout),
// then a table and a sentence made from the numbers just measured.
"use strict";

const Experiments = (() => {
  let call = null, hashOf = null, busy = false;
  const $ = (id) => document.getElementById(id);
  const median = (xs) => { const s = xs.filter(Number.isFinite).sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };
  const fmt = (v) => (Number.isFinite(v) ? Number(v.toPrecision(3)).toString() : "—");
  const seeds = (n) => Array.from({ length: n }, (_, i) => i + 1);

  // Runs every {label, settings} in turn, each in slices sized to about kSliceMs
  // of training, a timeout between slices so the page answers (and draws) throughout.
  const kSliceMs = 30;
  function runAll(runs, done) {
    const results = [];
    let started = false, steps = 1, ms = 0;
    const next = () => {
      if (results.length === runs.length) { done(results); return; }
      const run = runs[results.length];
      if (!started) {
        const s = call("playground_experiment_start", hashOf(run.settings));
        if (s.error) { results.push(Object.assign(s, run)); setTimeout(next, 0); return; }
        started = true;
        ms = 0;
      }
      const t0 = performance.now();
      const r = call("playground_experiment_advance", steps);
      const took = performance.now() - t0;
      ms += took;
      steps = Math.max(1, Math.min(100000, Math.round(steps * kSliceMs / Math.max(took, 1))));  // the next slice's size
      $("experiment-status").textContent = `run ${results.length + 1} of ${runs.length}: ${run.label}` +
        (r.done === false ? ` (step ${r.step})` : "");
      if (r.done !== false) {
        started = false;
        r.ms = ms;
        results.push(Object.assign(r, run));
      }
      setTimeout(next, 0);
    };
    setTimeout(next, 0);
  }

  function table(head, rows) {
    return "<table class=\"compare\"><tr>" + head.map((h) => `<th>${h}</th>`).join("") + "</tr>" +
      rows.map((r) => "<tr>" + r.map((c) => `<td>${c}</td>`).join("") + "</tr>").join("") + "</table>";
  }

  // The largest rate at which the loss still fell (final below initial, finite), per seed.
  const lrs = [0.01, 0.03, 0.1, 0.3, 1, 3, 10];
  function lr() {
    const runs = [];
    for (const norm of ["none", "layernorm"]) for (const seed of seeds(5)) for (const rate of lrs) {
      runs.push({ label: `${norm}, seed ${seed}, lr ${rate}`, norm, seed, rate, settings: { norm, seed, lr: rate, optimizer: "sgd", steps: 100 } });
    }
    return [runs, (results) => {
      const largest = (norm, seed) => Math.max(0, ...results.filter((r) => r.norm === norm && r.seed === seed && Number.isFinite(r.final) && r.final < r.initial).map((r) => r.rate));
      const per = (norm) => seeds(5).map((s) => largest(norm, s));
      const none = median(per("none")), ln = median(per("layernorm"));
      const verdict = ln > none ? `holds here: with LayerNorm the loss still fell at learning rates up to ${fmt(ln)}, without it up to ${fmt(none)} (medians over 5 seeds; plain SGD, 100 steps).`
        : `does not hold here: with LayerNorm the loss still fell at rates up to ${fmt(ln)}, without it up to ${fmt(none)} (medians over 5 seeds; plain SGD, 100 steps).`;
      return table(["norm", ...seeds(5).map((s) => `seed ${s}`), "median"],
                   ["none", "layernorm"].map((n) => [n, ...per(n).map(fmt), fmt(median(per(n)))])) +
        `<p class="verdict">"Enables higher learning rates" ${verdict}</p>`;
    }];
  }

  const scales = [0.01, 0.1, 1, 3, 10];
  function init() {
    const runs = [];
    for (const norm of ["none", "layernorm"]) for (const scale of scales) for (const seed of seeds(3)) {
      runs.push({ label: `${norm}, init ${scale}, seed ${seed}`, norm, scale, settings: { norm, init: scale, seed, steps: 200 } });
    }
    return [runs, (results) => {
      const final = (norm, scale) => median(results.filter((r) => r.norm === norm && r.scale === scale).map((r) => r.final));
      const spread = (norm) => { const v = scales.map((s) => final(norm, s)); return [Math.min(...v), Math.max(...v)]; };
      const [a, b] = spread("none"), [c, d] = spread("layernorm");
      const holds = d - c < b - a;
      return table(["norm", ...scales.map((s) => `init ${s}`)], ["none", "layernorm"].map((n) => [n, ...scales.map((s) => fmt(final(n, s)))])) +
        `<p class="verdict">"Reduces dependency on initialization" ${holds ? "holds" : "does not hold"} here: across initialisation scales 0.01 to 10 the final training loss (median of 3 seeds, 200 steps) ranged from ${fmt(a)} to ${fmt(b)} without a norm and from ${fmt(c)} to ${fmt(d)} with LayerNorm.</p>`;
    }];
  }

  function deep() {
    const runs = [];
    for (const norm of ["none", "layernorm"]) for (const seed of seeds(3)) {
      runs.push({ label: `depth 12, ${norm}, seed ${seed}`, norm, seed, settings: { norm, seed, depth: 12, steps: 200 } });
    }
    return [runs, (results) => {
      const of = (norm) => results.filter((r) => r.norm === norm);
      const loss = (norm) => median(of(norm).map((r) => r.final));
      const ratio = (norm) => median(of(norm).map((r) => r.grad_norms[0] / r.grad_norms[r.grad_norms.length - 1]));
      const first = (norm) => of(norm)[0].grad_norms.map(fmt).join(", ");
      const better = loss("layernorm") < loss("none");
      return table(["norm", "final loss (median)", "|dL/dW| layer 1 / last", "|dL/dW| per layer, seed 1"],
                   ["none", "layernorm"].map((n) => [n, fmt(loss(n)), fmt(ratio(n)), first(n)])) +
        `<p class="verdict">"Stabilizes training of deep networks" ${better ? "holds" : "does not hold"} here: at depth 12 the final training loss was ${fmt(loss("layernorm"))} with LayerNorm and ${fmt(loss("none"))} without (median of 3 seeds, 200 steps). The first layer's gradient norm was ${fmt(ratio("layernorm"))} times the last layer's with LayerNorm and ${fmt(ratio("none"))} times without: the nearer 1, the more evenly the gradient flows.</p>`;
    }];
  }

  const batches = [2, 8, 64];
  function batch() {
    const runs = [];
    for (const norm of ["batchnorm", "layernorm"]) for (const size of batches) for (const seed of seeds(3)) {
      runs.push({ label: `${norm}, batch ${size}, seed ${seed}`, norm, size, settings: { norm, impl: "composed", batch: size, seed, steps: 200 } });
    }
    return [runs, (results) => {
      const acc = (norm, size) => median(results.filter((r) => r.norm === norm && r.size === size).map((r) => r.val_accuracy));
      const rows = ["batchnorm", "layernorm"].map((n) => [n, ...batches.map((s) => fmt(100 * acc(n, s)) + "%")]);
      const gap = (s) => 100 * (acc("layernorm", s) - acc("batchnorm", s));
      return table(["norm", ...batches.map((s) => `batch ${s}`)], rows) +
        `<p class="verdict">Validation accuracy, median of 3 seeds after 200 steps. LayerNorm minus BatchNorm: ${batches.map((s) => `${fmt(gap(s))} points at batch ${s}`).join(", ")}. ` +
        `BatchNorm normalises with the batch's statistics, which are noisy for small batches, and evaluates with running averages; LayerNorm normalises each sample alone.</p>`;
    }];
  }

  function rms() {
    const runs = [];
    for (const seed of seeds(5)) for (const norm of ["layernorm", "rmsnorm"]) {
      runs.push({ label: `${norm}, seed ${seed}`, norm, settings: { norm, seed, steps: 300 } });
    }
    return [runs, (results) => {
      const of = (norm) => results.filter((r) => r.norm === norm);
      const us = (norm) => median(of(norm).map((r) => 1000 * r.ms / r.steps)), loss = (norm) => median(of(norm).map((r) => r.final));
      const faster = 100 * (1 - us("rmsnorm") / us("layernorm"));
      return table(["norm", "µs a step (median)", "final loss (median)"], ["layernorm", "rmsnorm"].map((n) => [n, fmt(us(n)), fmt(loss(n))])) +
        `<p class="verdict">Here a whole step (forward, backward, Adam, in this browser) with RMSNorm took ${fmt(us("rmsnorm"))} µs against LayerNorm's ${fmt(us("layernorm"))} µs: ${faster >= 0 ? fmt(faster) + "% faster" : fmt(-faster) + "% slower"} (the seed says ~10-15% for the norm alone; the norm is a small part of this step). Final training loss ${fmt(loss("rmsnorm"))} against ${fmt(loss("layernorm"))} (median of 5 seeds, 300 steps).</p>`;
    }];
  }

  const experiments = { lr, init, deep, batch, rms };

  function start(name) {
    if (busy) return;
    busy = true;
    document.body.dataset.experiment = "running";
    document.querySelectorAll("[data-experiment]").forEach((b) => { b.disabled = true; });
    const [runs, summarise] = experiments[name]();
    runAll(runs, (results) => {
      const failed = results.find((r) => r.error);
      $("experiment-result").innerHTML = failed ? `<p class="verdict">${failed.label}: ${failed.error}</p>` : summarise(results);
      $("experiment-status").textContent = `${name}: ${runs.length} runs, done`;
      document.querySelectorAll("[data-experiment]").forEach((b) => { b.disabled = false; });
      busy = false;
      document.body.dataset.experiment = name;
    });
  }

  function init_(c, h) {
    call = c;
    hashOf = h;
    document.querySelectorAll("[data-experiment]").forEach((b) => b.addEventListener("click", () => start(b.dataset.experiment)));
  }

  return { init: init_ };
})();
