// The training page's glue: the settings <-> the URL hash, one engine call per
// slice of steps (playground_advance), then the drawings. The engine
// (page/playground/) says which settings exist, their defaults and limits,
// computes every number, and checks every setting; this script only reads and draws.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const body = document.body;
  let engine = null, schema = [], points = null, report = null, curve = [];
  let running = false, perSlice = 5, chain = 0;  // chain: the current run of slices; an older one stops

  // An engine call: no argument, a number (passed as it is) or a text (copied into the module's memory).
  function call(name, text) {
    if (typeof text !== "string") return JSON.parse(engine.UTF8ToString(engine["_" + name](text)));
    const size = engine.lengthBytesUTF8(text) + 1, at = engine._malloc(size);
    try {
      engine.stringToUTF8(text, at, size);
      return JSON.parse(engine.UTF8ToString(engine["_" + name](at)));
    } finally {
      engine._free(at);
    }
  }

  function hashPairs(hash) {
    const pairs = {};
    for (const pair of hash.replace(/^#/, "").split("&")) {
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      try { pairs[decodeURIComponent(pair.slice(0, eq))] = decodeURIComponent(pair.slice(eq + 1)); } catch (e) { /* the engine says */ }
    }
    return pairs;
  }

  // The fields' hash: every setting, as typed (the engine judges it).
  function hashOf(overrides = {}) {
    return schema.map((k) => {
      const v = k.key in overrides ? overrides[k.key] : $("f-" + k.key).value;
      return `${k.key}=${encodeURIComponent(v)}`;
    }).join("&");
  }

  function buildFields() {
    const given = hashPairs(location.hash);
    for (const k of schema) {
      const label = document.createElement("label");
      label.title = k.help + (k.choices ? "" : ` (${k.min} to ${k.max})`);
      label.append(k.key + " ");
      const input = document.createElement(k.choices ? "select" : "input");
      input.id = "f-" + k.key;
      if (k.choices) k.choices.forEach((c) => input.add(new Option(c, c)));
      else { input.type = "text"; input.inputMode = "decimal"; input.spellcheck = false; }
      input.value = k.key in given ? given[k.key] : k.default;
      if (k.choices && input.value !== (given[k.key] || k.default)) input.value = k.default;
      input.addEventListener("change", () => restart(hashOf()));
      label.append(input);
      $("fields").append(label);
    }
    $("lr-slider").value = Math.log10(Number($("f-lr").value) || 0.01);
    $("lr-slider").addEventListener("input", () => {
      $("f-lr").value = String(Number((10 ** Number($("lr-slider").value)).toPrecision(2)));
    });
    $("lr-slider").addEventListener("change", () => restart(hashOf()));
  }

  function showMessage(text) {
    $("message").hidden = !text;
    $("message").textContent = text || "";
  }

  function setState(state) {
    body.dataset.state = state;
    $("play").textContent = state === "running" ? "pause" : "play";
    const stopped = state === "error" || state === "diverged" || state === "done";
    $("play").disabled = stopped;
    $("step").disabled = stopped;
  }

  // A new run from `hash` (kept in the address), drawn at step 0; steps=K plays it to K.
  function restart(hash) {
    running = false;
    history.replaceState(null, "", "#" + hash);
    const answer = call("playground_start", hash);
    curve = [];
    if (answer.error) {
      report = null;
      showMessage(answer.error);
      setState("error");
      body.dataset.reports = String(Number(body.dataset.reports) + 1);
      return;
    }
    showMessage("");
    points = answer.points;
    $("model-text").textContent = `model: ${points.model} (${points.parameters} parameters; ${points.train.length} training, ${points.validation.length} validation points)`;
    const kb = (t) => `${t.nodes} nodes, ${(t.saved_bytes / 1024).toFixed(1)} KB saved for backward`;
    $("tape-text").textContent = "one step's tape (a batch's forward and loss): composed " + kb(points.tape.composed) +
      (points.tape.fused ? "; fused " + kb(points.tape.fused) : " (batchnorm: composed only)");
    accept(answer.report);
    setState("paused");
    if (answer.report.target > 0) play();
  }

  function accept(r) {
    report = r;
    curve.push({ step: r.step, train: r.train_loss, val: r.val_loss, trainAcc: r.train_accuracy, valAcc: r.val_accuracy,
                   grads: r.layers.map((l) => l.grad_norm) });
    draw();
    body.dataset.reports = String(Number(body.dataset.reports) + 1);
    if (r.diverged) { showMessage(r.diverged); running = false; setState("diverged"); }
    else if (r.done) { running = false; setState("done"); }
  }

  // A slice of steps sized to about 20 ms, so the page keeps answering between slices.
  function slice(mine) {
    if (!running || mine !== chain) return;
    const t0 = performance.now();
    const r = call("playground_advance", perSlice);
    const ms = performance.now() - t0;
    if (r.error) { showMessage(r.error); running = false; setState("error"); return; }
    perSlice = ms < 10 ? Math.min(perSlice * 2, 400) : ms > 30 ? Math.max(1, Math.floor(perSlice / 2)) : perSlice;
    accept(r);
    if (running) setTimeout(() => slice(mine), 0);
  }

  function play() {
    if (!report || report.done) return;
    running = !running;
    setState(running ? "running" : "paused");
    const mine = ++chain;
    if (running) setTimeout(() => slice(mine), 0);
  }

  function oneStep() {
    if (!report || report.done) return;
    running = false;
    setState("paused");
    const r = call("playground_advance", 1);
    if (r.error) { showMessage(r.error); setState("error"); return; }
    accept(r);
  }

  function draw() {
    $("step-text").textContent = `step ${report.step}`;
    $("loss-text").textContent = report.train_loss_text;
    $("loss-text").dataset.full = String(report.train_loss);
    $("acc-text").textContent = report.val_accuracy_text;
    $("command").textContent = report.command;
    Plots.boundary($("boundary"), report, points);
    Plots.curves($("loss"), curve, ["train", "val"], true, "loss");
    Plots.curves($("accuracy"), curve, ["trainAcc", "valAcc"], false, "accuracy");
    Plots.gradflow($("gradflow"), curve, report.layers);
    Plots.layerTable($("layers"), report.layers);
  }

  window.Train = { call, hashOf, get report() { return report; } };

  createPlayground().then((m) => {
    engine = m;
    schema = call("playground_settings");
    buildFields();
    $("play").addEventListener("click", play);
    $("step").addEventListener("click", oneStep);
    $("reset").addEventListener("click", () => restart(hashOf()));
    // A hash as given (misspelt keys included) is the engine's to judge; none: the defaults.
    restart(location.hash.length > 1 ? location.hash.slice(1) : hashOf());
    Experiments.init(call, hashOf);
    body.dataset.ready = "1";
  });
})();
