// The page's second part, the norms inside a trained GPT: one engine call
// (page_model, page/model.cpp) per keystroke or sample click, then draw.
"use strict";

const Model = (() => {
  const $ = (id) => document.getElementById(id);
  let compute = null;  // the engine's page_model(hash), as app.js calls it
  let sampleSeed = null;  // the seed of the sample shown, or null: none asked for

  function hash() {
    const word = $("word").value;
    return (sampleSeed === null ? "" : "sample=" + sampleSeed + "&") + "word=" + word;
  }

  // One LayerNorm: its name, then the input's mean and sd per position, γ, β.
  function norm(report, k, word) {
    const key = `gpt.norm${k}.`, n = report.numbers;
    const card = Draw.el("div", { class: "gpt-norm" });
    card.appendChild(Draw.el("h3", {}, `LayerNorm ${k + 1}: ${report.labels[key + "name"]}`));
    const positions = Draw.el("p", { class: "positions" }, "positions: " + ["·"].concat([...word]).join("  "));
    card.appendChild(positions);
    for (const part of ["mean", "sd"]) {
      const row = Draw.el("div", { class: "gpt-row" });
      row.appendChild(Draw.el("span", { class: "label" }, report.labels[key + part]));
      row.appendChild(Draw.matrix(key + part, n[key + part]));
      card.appendChild(row);
    }
    // γ and β, learned, one per feature: a bar each (the numbers one click away).
    for (const part of ["gamma", "beta"]) {
      const row = Draw.el("div", { class: "gpt-row" });
      row.appendChild(Draw.el("span", { class: "label" }, report.labels[key + part]));
      row.appendChild(bars(n[key + part][0], `${part} of LayerNorm ${k + 1}`));
      const numbers = Draw.el("details", { class: "numbers" });
      numbers.appendChild(Draw.el("summary", {}, "numbers"));
      numbers.appendChild(Draw.matrix(key + part, n[key + part]));
      row.appendChild(numbers);
      card.appendChild(row);
    }
    return card;
  }

  // One bar per feature from a zero line, scaled to the largest |value|, which is
  // written at the end; hover a bar for its feature and value.
  function bars(values, what) {
    const w = 5, gap = 1, h = 44, mid = h / 2, max = Math.max(...values.map(Math.abs)) || 1;
    const width = values.length * (w + gap);
    const root = Draw.svg("svg", { class: "gb-plot", width, height: h, viewBox: `0 0 ${width} ${h}`, role: "img",
                                   "aria-label": `${what}, one bar per feature` });
    root.appendChild(Draw.svg("line", { x1: 0, x2: width, y1: mid, y2: mid, class: "zero" }));
    values.forEach((v, j) => {
      const len = (Math.abs(v) / max) * (mid - 2);
      const bar = Draw.svg("rect", { x: j * (w + gap), y: v >= 0 ? mid - len : mid, width: w, height: Math.max(len, 0.5),
                                     class: v >= 0 ? "pos" : "neg" });
      bar.appendChild(Draw.svg("title", {}, `feature ${j + 1}: ${v}`));
      root.appendChild(bar);
    });
    const box = Draw.el("span", { class: "gb" });
    box.append(root, Draw.el("small", {}, ` ±${Draw.format(max)}`));
    return box;
  }

  // The next-character distribution as bars, most likely first, the
  // probability beside each (ties keep the vocabulary's order).
  function distribution(report) {
    const p = report.numbers["gpt.next"][0], chars = report.labels["gpt.vocab"];
    const box = Draw.el("div", { class: "bars" });
    const ranked = p.map((v, j) => j).sort((a, b) => p[b] - p[a] || a - b);
    for (const j of ranked) {
      const bar = Draw.el("div", { class: "bar" });
      bar.appendChild(Draw.el("span", { class: "char" }, j === 0 ? "end" : chars[j]));
      bar.appendChild(Draw.el("span", { class: "fill", style: `width: ${(100 * p[j]).toFixed(2)}%` }));
      bar.appendChild(Draw.num("gpt.next", 0, j, p[j]));
      box.appendChild(bar);
    }
    return box;
  }

  // Each drawn character beside the probability it was drawn with; the last
  // draw is the end of the word unless the context filled first.
  function drawn(report, word) {
    const p = report.numbers["gpt.sample_p"][0], added = [...report.labels["gpt.sample"]].slice([...word].length);
    const box = Draw.el("div", { class: "drawn" });
    p.forEach((v, k) => {
      const pair = Draw.el("span", { class: "pair" });
      pair.appendChild(Draw.el("span", { class: "char" }, k < added.length ? added[k] : "end"));
      pair.appendChild(Draw.num("gpt.sample_p", 0, k, v));
      box.appendChild(pair);
    });
    return box;
  }

  function draw(report) {
    const failed = report.error !== "";
    $("word-message").hidden = !failed;
    $("word-message").textContent = report.error;
    for (const id of ["gpt-norms", "gpt-next", "gpt-sample", "gpt-count", "gpt-model"]) $(id).replaceChildren();
    if (!failed) {
      $("gpt-model").textContent = report.labels["gpt.model"];
      $("gpt-count").replaceChildren(Draw.num("gpt.norms", 0, 0, report.numbers["gpt.norms"][0][0]));
      for (let k = 0; k < report.numbers["gpt.norms"][0][0]; ++k) $("gpt-norms").appendChild(norm(report, k, $("word").value));
      $("gpt-next").appendChild(distribution(report));
      if ("gpt.sample" in report.labels) {
        $("gpt-sample").appendChild(Draw.el("p", {}, `seed ${sampleSeed}: `));
        $("gpt-sample").firstChild.appendChild(Draw.el("b", { id: "sample-text" }, report.labels["gpt.sample"]));
        $("gpt-sample").appendChild(Draw.el("span", { class: "label" }, report.labels["gpt.sample_p"]));
        $("gpt-sample").appendChild(drawn(report, $("word").value));
      }
    }
    document.body.dataset.modelDraws = Number(document.body.dataset.modelDraws || 0) + 1;
  }

  function recompute() {
    draw(JSON.parse(compute(hash())));
  }

  return {
    start(call) {
      compute = call;
      $("word").addEventListener("input", () => { sampleSeed = null; recompute(); });
      $("sample").addEventListener("click", () => { sampleSeed = sampleSeed === null ? 1 : sampleSeed + 1; recompute(); });
      $("digits").addEventListener("change", recompute);
      recompute();
    },
    hash,
    recompute() { if (compute) recompute(); },
  };
})();
