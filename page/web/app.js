// The page's glue: inputs <-> URL hash, one engine call per keystroke, then draw.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  // The form's fields and what an empty one means, from the engine (page/request.h's
  // kFields, in every answer): "rows" is the x field holding a batch.
  let fields = [];
  let empty = {};
  let engine = null;
  let report = null;
  let running = null;  // the tape node whose backward is shown running, or null: every gradient
  // A link's pairs the form has no field for (a misspelt "gama=2"), sent on to the
  // engine as they are, so that its message names them, until the form is edited.
  let foreign = [];
  // Whether γ and β were last set to row 1's std and mean by the "undo" button (until the next edit).
  let undone = false;

  // The form as a hash: x=... for one vector, rows=a;b;c for a batch.
  function hashOf() {
    // Spaces separate numbers as commas do: "3, 1 5" is written 3,1,5.
    const tidy = (s) => s.trim().replace(/\s*([,;])\s*/g, "$1").replace(/\s+/g, ",");
    const rows = $("x").value.split("\n").filter((r) => r.trim() !== "");
    const parts = [(rows.length > 1 ? "rows=" : "x=") + enc(tidy(rows.join(";")))];
    for (const f of fields.slice(1)) {
      const v = $(f).value.trim();
      // The LayerNorm form's fields are always written; BatchNorm's steps and the model's word once changed.
      const written = !["steps", "word"].includes(f) || v !== empty[f];
      if (v !== "" && written) parts.push(f + "=" + enc(f === "word" ? v : tidy(v)));
    }
    return parts.concat(foreign).join("&");
  }

  function enc(s) {
    return encodeURIComponent(s).replace(/%2C/g, ",").replace(/%3B/g, ";");
  }

  function decoded(hash) {
    try {
      return decodeURIComponent(hash.replace(/^#/, ""));
    } catch (e) {
      return hash.replace(/^#/, "");  // a hand-typed '%' that is no escape: the engine names what is wrong
    }
  }

  // A shared link fills the form (the engine, not this, checks the values).
  function fillFrom(hash) {
    const text = decoded(hash);
    if (text === "") return;
    for (const f of fields) if (f !== "x") $(f).value = empty[f];
    foreign = [];
    let vector = null;  // "x" or "rows", whichever came first: both is the engine's to refuse
    for (const pair of text.split("&")) {
      const eq = pair.indexOf("=");
      const key = eq < 0 ? pair : pair.slice(0, eq), value = eq < 0 ? "" : pair.slice(eq + 1);
      if ((key === "x" || key === "rows") && (vector === null || vector === key)) {
        vector = key;
        $("x").value = value.split(";").join("\n");
      } else if (fields.includes(key) && key !== "x") {
        $(key).value = value;
      } else if (pair.trim() !== "") {
        foreign.push(enc(key) + (eq < 0 ? "" : "=" + enc(value)));
      }
    }
  }

  function show(id, text) {
    $(id).hidden = !text;
    $(id).textContent = text || "";
  }

  // The forward's cards, each a job: [the element it fills, what fills it] (see draw).
  function forward(jobs) {
    const n = report.numbers;
    $("d").replaceChildren(String(n.x[0].length));
    $("params").replaceChildren(Draw.num("params", 0, 0, n.params[0][0]));
    $("undo").hidden = Boolean(report.errors.ln);
    for (const view of ["ln", "rms", "bn"]) {
      jobs.push([$(view), () => {
        const keys = report.views[view];  // the engine's steps, in order (absent when the view failed)
        const box = document.querySelector(`#${view} .steps`);
        if (report.errors[view] && view === "bn" && report.numbers.x.length === 1) offerBatch(box, report.errors.bn);
        else if (report.errors[view]) Draw.message(box, report.errors[view]);
        else if (view === "ln") teach(box, keys);
        else Draw.steps(box, report, keys, view === "rms" ? (key) => Draw.working(report, key) : undefined);
        // A large batch: the engine sent its first rows only, and says so.
        if (report.labels.rows && !report.errors[view]) box.append(Draw.el("p", { class: "rows-shown" }, report.labels.rows));
      }]);
    }
  }

  // LayerNorm's steps with their working (row 1's, named so on a batch), then row 1 as a picture.
  function teach(box, keys) {
    Draw.steps(box, report, keys, (key) => Draw.working(report, key));
    const rows = report.numbers.x.length;
    box.append(Draw.el("p", { class: "view-note" }, rows > 1 ? "The working above and the picture below are row 1's." : "Row 1 before and after:"),
               Draw.strip(report));
    const f = Draw.format, at = (k) => report.numbers[k][0];
    $("undo-norm").textContent = `Set γ = std = ${f(at("ln.4")[0])}, β = mean = ${f(at("ln.0")[0])}`;
    $("undo-said").hidden = !undone;
    if (undone) {
      $("undo-said").textContent = `With γ = std and β = mean, y = (${at("ln.7").map(f).join(", ")}): x = (${at("x").map(f).join(", ")}) back` +
        (rows > 1 ? " for row 1 (each row has its own mean and std; γ and β are one per feature)" : "") +
        ". Normalising loses nothing the model cannot undo: where a row's scale and offset matter, training can learn" +
        " γ and β that put them back; where they do not, it keeps the normalised row.";
    }
  }

  // γ = row 1's std and β = its mean, written into the fields (and the sliders) as typing
  // would, so that the engine computes y from them: y = std · x̂ + mean, that is x.
  function undoNormalisation() {
    const stat = (k) => String(report.numbers[k][0][0]);
    for (const [field, key] of [["gamma", "ln.4"], ["beta", "ln.0"]]) {
      $(field).value = stat(key);
      $(field + "-slider").value = stat(key);
    }
    foreign = [];
    undone = true;
    recompute();
  }

  // One vector is no mistake: BatchNorm needs a batch, so the engine's sentence is
  // a note, with the seeds' batch one click away (the header's seed 000 example).
  function offerBatch(box, text) {
    const batch = $("ex-seed000");
    box.replaceChildren(Draw.el("p", { class: "view-note", role: "status" }, text + " "),
                        Draw.el("p", {}, ""));
    box.lastChild.append(Draw.el("a", { class: "offer", href: batch.getAttribute("href") }, "Try it on a batch: " + batch.textContent));
  }

  function backward(jobs) {
    if (report.errors.backward) {
      for (const id of ["tape", "compare", "terms", "jacobian", "memory"]) Draw.message($(id), report.errors.backward);
      $("walk-detail").replaceChildren();
      return;
    }
    $("dy-name").textContent = report.labels.dy;
    jobs.push([$("tape"), () => Backward.drawTape($("tape"), report, running)],
              [$("compare"), () => Backward.compare($("compare"), report)],
              [$("terms"), () => Backward.terms($("terms"), report)],
              [$("walk-detail"), () => Backward.walkDetail($("walk-detail"), report, running)],
              [$("jacobian"), () => Backward.jacobian($("jacobian"), report)],
              [$("memory"), () => Backward.memory($("memory"), report)]);
    walkState();
  }

  // The first node that is an op, not a leaf: the walk ends there.
  function firstOp() {
    return report.tape.findIndex((n) => n.inputs.length > 0);
  }

  function walkState() {
    const tape = report.tape;
    $("walk-step").disabled = running === null || running <= firstOp();
    if (running === null) { $("walk-state").textContent = "every gradient shown"; return; }
    const node = tape[running];
    const into = node.inputs.map((i) => `${i}: ${tape[i].op}`).join(" and ");
    $("walk-state").textContent = running === tape.length - 1 && node.inputs.length
      ? `node ${running} (${node.op}) got dy and sends it back into ${into}`
      : `node ${running} (${node.op}) runs its backward: into ${into}`;
  }

  // A keystroke's frame holds what can be seen: the cards on the screen are drawn now,
  // the others just after that frame is shown (page/web/soon.js). The draw is counted
  // (body.dataset.draws, which the tests wait for) once every card is drawn.
  function draw() {
    Draw.setDigits(Number($("digits").value));
    Draw.setShowAll($("all-numbers").checked);
    show("message", report.error);
    show("note", report.labels.note);
    document.body.classList.toggle("failed", report.error !== "");
    const jobs = [];
    if (report.error === "") {
      forward(jobs);
      backward(jobs);
    }
    Soon.run(jobs, () => { document.body.dataset.draws = Number(document.body.dataset.draws) + 1; });
  }

  // An engine entry point (page_compute, page_model) on a hash. The hash goes through
  // the heap: ccall's "string" copies it onto the stack, which a pasted 4 MB batch
  // overflowed ("memory access out of bounds").
  function call(name, hash) {
    const size = engine.lengthBytesUTF8(hash) + 1, at = engine._malloc(size);
    try {
      engine.stringToUTF8(hash, at, size);
      return engine.UTF8ToString(engine["_" + name](at));
    } finally {
      engine._free(at);
    }
  }

  // page_compute's answer names each matrix by where its doubles start in the engine's
  // memory (page/report.h): rows of numbers, read from there, as the drawing expects.
  function withNumbers(answer) {
    const heap = engine.HEAPF64, base = engine._page_numbers() >>> 3;
    for (const [key, m] of Object.entries(answer.numbers)) {
      const rows = [];
      for (let i = 0, at = base + m.at; i < m.rows; ++i, at += m.cols) rows.push(Array.from(heap.subarray(at, at + m.cols)));
      answer.numbers[key] = rows;
    }
    return answer;
  }

  function recompute() {
    // At most 12 lines tall: a box as tall as a 25,000-row batch took the browser seconds to lay out.
    $("x").rows = Math.min(12, Math.max(3, $("x").value.split("\n").length));
    const hash = hashOf();
    if (decoded(location.hash) !== decoded(hash)) history.replaceState(null, "", "#" + hash);
    const t0 = performance.now();
    report = withNumbers(JSON.parse(call("page_compute", decoded(hash))));
    const t1 = performance.now();
    if (running !== null && running >= report.tape.length) running = null;
    draw();
    // For the browser test's timing report: the engine (and JSON.parse) against the drawing.
    document.body.dataset.computeMs = (t1 - t0).toFixed(2);
    document.body.dataset.drawMs = (performance.now() - t1).toFixed(2);
  }

  function wire() {
    for (const f of fields) $(f).addEventListener("input", () => { foreign = []; undone = false; recompute(); });
    // A slider writes its field (one γ or β for every feature; ε on a log scale), as typing would.
    for (const [slider, field, text] of [["gamma-slider", "gamma", (v) => v], ["beta-slider", "beta", (v) => v],
                                         ["eps-slider", "eps", (v) => "1e" + v]]) {
      $(slider).addEventListener("input", () => {
        $(field).value = text($(slider).value);
        if (slider === "eps-slider") $("eps-power").textContent = $(slider).value;
        foreign = [];
        undone = false;
        recompute();
      });
    }
    $("undo-norm").addEventListener("click", undoNormalisation);
    $("digits").addEventListener("change", () => report && draw());
    $("all-numbers").addEventListener("change", () => report && draw());
    for (const [box, view] of [["show-rms", "rms"], ["show-bn", "bn"]]) {
      $(box).addEventListener("change", () => {
        $(view).hidden = !$(box).checked;
        document.querySelector(".pair").classList.toggle("single", !$("show-rms").checked);  // LayerNorm alone: full width
      });
    }
    window.addEventListener("hashchange", () => {
      if (decoded(location.hash) === decoded(hashOf())) return;
      fillFrom(location.hash);
      undone = false;
      recompute();
      Model.recompute();  // the link's word
    });
    $("walk-start").addEventListener("click", () => { running = report.tape.length - 1; draw(); });
    $("walk-step").addEventListener("click", () => { if (running > firstOp()) running -= 1; draw(); });
    $("walk-all").addEventListener("click", () => { running = null; draw(); });
  }

  createEngine().then((module) => {
    engine = module;
    const contract = JSON.parse(call("page_compute", "")).fields;
    fields = contract.map((f) => f.name).filter((f) => f !== "rows");
    empty = Object.fromEntries(contract.map((f) => [f.name, f.empty]));
    fillFrom(location.hash);
    wire();
    recompute();
    Model.start((hash) => call("page_model", hash));
    document.body.dataset.ready = "1";
  });
})();
