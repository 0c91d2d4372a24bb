// The explorer's glue: the text box <-> the URL hash, one engine call per
// keystroke (explorer_run), then the graph and the walks; an exercise link
// (#exercise=NAME&answer=...) shows the exercise and its score instead.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const defaultProgram = "x = [3, 1, 5, 7]; g = 2; y = layernorm(x) * g + 1; L = sum(y * [1, 2, 3, 4])";
  let engine = null, report = null, exercise = null;
  let fw = -1, bw = -1;  // the step shown in each walk; -1: none

  function call(hash) {
    const size = engine.lengthBytesUTF8(hash) + 1, at = engine._malloc(size);
    try {
      engine.stringToUTF8(hash, at, size);
      return JSON.parse(engine.UTF8ToString(engine._explorer_run(at)));
    } finally {
      engine._free(at);
    }
  }

  // The form's hash. encodeURIComponent leaves ( ) * - . _ ! ~ ' as they are.
  function hashOf() {
    if (exercise !== null) return `exercise=${encodeURIComponent(exercise)}&answer=${encodeURIComponent($("answer").value)}`;
    const d = $("direction").value, v = $("v").value.trim();
    return `program=${encodeURIComponent($("program").value)}${d ? "&direction=" + encodeURIComponent(d) : ""}` +
           (d && v ? "&v=" + encodeURIComponent(v) : "");
  }

  function field(hash, key) {
    for (const pair of hash.replace(/^#/, "").split("&")) {
      const eq = pair.indexOf("=");
      if (eq > 0 && pair.slice(0, eq) === key) {
        try { return decodeURIComponent(pair.slice(eq + 1)); } catch (e) { return pair.slice(eq + 1); }
      }
    }
    return null;
  }

  function show(id, text) {
    $(id).hidden = !text;
    $(id).textContent = text || "";
  }

  // The graph with the walks' current node and edges lit.
  function drawGraph() {
    const active = new Set(), hot = new Set();
    const fwNode = fw >= 0 ? report.nodes[fw] : null, bwStep = bw >= 0 ? report.backward[bw] : null;
    if (fwNode) { active.add(fwNode.id); fwNode.inputs.forEach((i) => hot.add(`${i}>${fwNode.id}`)); }
    if (bwStep) { active.add(bwStep.node); bwStep.parts.forEach((p) => hot.add(`${p.input}>${bwStep.node}`)); }
    Graph.draw($("graph"), report, Walk, active, hot);
  }

  // Each walk's current step marked, and its buttons.
  function markSteps() {
    const fwNode = fw >= 0 ? report.nodes[fw] : null, bwStep = bw >= 0 ? report.backward[bw] : null;
    for (const [list, id] of [["fw-steps", fwNode && fwNode.id], ["bw-steps", bwStep && bwStep.node]]) {
      for (const item of $(list).children) item.classList.toggle("current", Number(item.dataset.node) === id);
    }
    $("fw-prev").disabled = fw <= 0;
    $("fw-next").disabled = fw >= report.nodes.length - 1;
    $("bw-prev").disabled = bw <= 0;
    $("bw-next").disabled = bw >= report.backward.length - 1;
  }

  function highlight() {
    drawGraph();
    markSteps();
  }

  function directions() {
    const keep = $("direction").value;
    const leaves = report.nodes.filter((n) => n.kind === "leaf").map((n) => n.label);
    const options = [["", "(nothing)"]].concat([...new Set(leaves)].map((l) => [l, l]));
    $("direction").replaceChildren(...options.map(([v, t]) => Object.assign(document.createElement("option"), { value: v, textContent: t })));
    $("direction").value = leaves.includes(keep) ? keep : "";
  }

  // The program's parts, each a job for Soon.run: [the element it fills, what fills it].
  function drawProgram() {
    show("message", report.error);
    document.body.classList.toggle("failed", report.error !== "");
    if (report.error !== "") return [];
    show("note", report.note);
    directions();
    fw = Math.min(fw, report.nodes.length - 1);
    bw = Math.min(bw, report.backward.length - 1);
    $("tangents").hidden = !report.direction;
    const jobs = [[$("graph"), drawGraph],
                  [$("fw-steps"), () => Walk.forward($("fw-steps"), report)],
                  [$("bw-steps"), () => Walk.backward($("bw-steps"), report)]];
    if (report.direction) jobs.push([$("tangents"), () => Walk.tangents($("tangent-steps"), $("hvp"), report)]);
    return jobs;
  }

  function drawExercise(answer) {
    const ex = answer.exercise;
    document.body.classList.remove("failed");
    show("ex-message", answer.error);
    if (!ex) { $("score").textContent = ""; $("ex-rows").replaceChildren(); return; }
    $("ex-title").textContent = ex.title;
    $("ex-statement").textContent = ex.statement;
    $("ex-given").textContent = ex.given.join(", ");
    $("ex-answer-name").textContent = ex.answer_name;
    $("ex-list").replaceChildren(...ex.exercises.map((name) =>
      Object.assign(document.createElement("a"), { href: "#exercise=" + name, textContent: name, className: "exercise-link" })));
    $("score").textContent = ex.rows.length ? `score: ${ex.score}/${ex.max_score}` : "";
    const rows = ex.rows.map((r) => {
      const tr = document.createElement("tr");
      for (const t of [r.check, r.points ? "✓ 1" : "✗ 0", r.result]) tr.append(Object.assign(document.createElement("td"), { textContent: t }));
      return tr;
    });
    $("ex-rows").replaceChildren(...rows);
    // Each distinct hint once, in the rows' order, as `autograd grade` lists them.
    const hints = [...new Set(ex.rows.filter((r) => r.points === 0 && r.hint).map((r) => r.hint))];
    $("ex-hints").replaceChildren(...hints.map((t) => Object.assign(document.createElement("li"), { textContent: t })));
  }

  function run(hash) {
    const t0 = performance.now();
    const answer = call(hash);
    document.body.dataset.computeMs = (performance.now() - t0).toFixed(2);  // the engine and JSON.parse
    window.explorerAnswer = answer;  // what the engine said, for the browser test to compare
    const counted = () => { document.body.dataset.draws = Number(document.body.dataset.draws) + 1; };
    if (answer.exercise !== undefined || exercise !== null) {
      drawExercise(answer);
      counted();
    } else {
      // What can be seen now, the rest after this frame (page/web/soon.js); counted once all is drawn.
      report = answer;
      Soon.run(drawProgram(), () => { if (!report.error) markSteps(); counted(); });
      if (!report.error) markSteps();
    }
    // The time to the next frame: the keystroke-to-frame figure (docs/explorer.md).
    requestAnimationFrame(() => { document.body.dataset.frameMs = (performance.now() - t0).toFixed(2); });
  }

  function fit(box) {  // as tall as the text, up to 12 lines
    box.rows = Math.min(12, Math.max(3, box.value.split("\n").length));
  }

  function edited() {
    fit($("program"));
    fit($("answer"));
    const hash = hashOf();
    try { history.replaceState(null, "", "#" + hash); } catch (e) { /* file:// in some browsers */ }
    run(hash);
  }

  function open(hash) {
    exercise = field(hash, "exercise");
    const exerciseMode = exercise !== null;
    for (const id of ["editor", "graph-card", "forward", "backward"]) $(id).hidden = exerciseMode;
    document.querySelector(".pair").hidden = exerciseMode;
    $("exercise").hidden = !exerciseMode;
    if (exerciseMode) $("tangents").hidden = true;
    if (exerciseMode) {
      $("answer").value = field(hash, "answer") || "";
    } else {
      $("program").value = field(hash, "program") !== null ? field(hash, "program") : defaultProgram;
      const d = field(hash, "direction");
      if (d) $("direction").replaceChildren(Object.assign(document.createElement("option"), { value: d, textContent: d }));
      $("direction").value = d || "";
      $("v").value = field(hash, "v") || "";
    }
    fit($("program"));
    fit($("answer"));
    fw = bw = -1;
    // The link as it is, so that the engine names a misspelt field; the default program otherwise.
    run(hash.replace(/^#/, "") === "" ? hashOf() : hash.replace(/^#/, ""));
  }

  function step(which, by) {
    if (which === "fw") fw = Math.max(0, Math.min(report.nodes.length - 1, fw + by));
    else bw = Math.max(0, Math.min(report.backward.length - 1, bw + by));
    highlight();
    const current = document.querySelector(`#${which}-steps li.current`);
    if (current) current.scrollIntoView({ block: "nearest" });
  }

  createExplorer().then((module) => {
    engine = module;
    $("program").addEventListener("input", edited);
    $("answer").addEventListener("input", edited);
    $("direction").addEventListener("change", edited);
    $("v").addEventListener("input", edited);
    $("fw-prev").addEventListener("click", () => step("fw", -1));
    $("fw-next").addEventListener("click", () => step("fw", 1));
    $("bw-prev").addEventListener("click", () => step("bw", -1));
    $("bw-next").addEventListener("click", () => step("bw", 1));
    $("graph").addEventListener("click", (e) => {
      const g = e.target.closest("g.node");
      if (g) { fw = Number(g.dataset.id); bw = report.backward.findIndex((s) => s.node === fw); highlight(); }
    });
    window.addEventListener("hashchange", () => open(location.hash));
    let width = window.innerWidth;
    window.addEventListener("resize", () => { if (report && !report.error && width !== window.innerWidth) { width = window.innerWidth; highlight(); } });
    open(location.hash);
    document.body.dataset.ready = "1";
  });
})();
