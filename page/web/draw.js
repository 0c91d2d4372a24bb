// Drawing only: every number comes from the engine's JSON (page/report.h).
// Each shown number is a <span class="num"> (or SVG <text class="num">) with
// data-key, data-i, data-j naming the engine's matrix and element, so the
// browser test can compare each one with the native build.
"use strict";

const Draw = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  let digits = 6;
  let showAll = false;
  const kLong = 32, kHead = 12, kTail = 4;  // rows longer than kLong are elided unless showAll

  function format(v) {
    if (digits >= 17) return String(v);  // the shortest text that reads back as the same double
    if (v === 0) return "0";
    const a = Math.abs(v);
    if (a >= 1e6 || a < 1e-4) return v.toExponential(digits - 1).replace(/\.?0+e/, "e");
    return String(Number(v.toPrecision(digits)));
  }

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function num(key, i, j, v, tag) {
    const e = tag === "svg" ? svg("text", {}) : el("span");
    e.setAttribute("class", "num");
    e.dataset.key = key;
    e.dataset.i = i;
    e.dataset.j = j;
    e.textContent = format(v);
    e.setAttribute(tag === "svg" ? "data-full" : "title", String(v));
    return e;
  }

  const escape = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

  // A matrix as a table of numbers (a 1 x 1 one as a single number). Written
  // as one HTML string: a 768-wide row is 768 cells on every keystroke, and
  // one parse is several times faster than as many createElement calls.
  function matrix(key, m) {
    if (m.length === 1 && m[0].length === 1) return num(key, 0, 0, m[0][0]);
    const k = escape(key);
    const cell = (v, i, j) => `<span class="num" data-key="${k}" data-i="${i}" data-j="${j}" title="${v}">${escape(format(v))}</span>`;
    const t = document.createElement("template");
    const cols = m[0].length, elide = !showAll && cols > kLong;
    // A long row shows its first kHead and last kTail numbers (every one with "show all").
    const shown = (row, i, wrap) => row.map((v, j) => {
      if (!elide || j < kHead || j >= cols - kTail) return wrap(cell(v, i, j));
      return j === kHead ? wrap(`<span class="more">… ${cols - kHead - kTail} more …</span>`) : "";
    }).join("");
    if (m.length === 1) {  // a row vector wraps (a table of 768 columns is slow to lay out, and wide)
      t.innerHTML = `<span class="vector">${shown(m[0], 0, (c) => c)}</span>`;
    } else {
      const rows = m.map((row, i) => "<tr>" + shown(row, i, (c) => `<td>${c}</td>`) + "</tr>");
      t.innerHTML = `<table class="matrix">${rows.join("")}</table>`;
    }
    return t.content.firstChild;
  }

  // Labelled rows: [label, key] pairs, skipping keys the engine did not send.
  // explain(key), if given, is a step's working, written under it.
  function steps(container, report, keys, explain) {
    const list = el("ol", { class: "step-list" });
    for (const key of keys) {
      if (!(key in report.numbers)) continue;
      const li = el("li");
      li.appendChild(el("span", { class: "label" }, report.labels[key] || key));
      li.appendChild(matrix(key, report.numbers[key]));
      const text = explain ? explain(key) : "";
      if (text) li.appendChild(el("div", { class: "working" }, text));
      list.appendChild(li);
    }
    container.replaceChildren(list);
  }

  // A step's working for row 1, its numbers substituted as the seeds write it:
  // "mean = (3 + 1 + 5 + 7) / 4 = 4". Every number is the engine's (report.numbers);
  // this only writes them down. A long row shows its first kTerms terms and says how many.
  const kTerms = 4;
  const paren = (v) => (v < 0 ? `(${format(v)})` : format(v));
  function terms(row, each, join) {
    const shown = row.slice(0, row.length > kTerms + 1 ? kTerms - 1 : row.length).map(each);
    if (shown.length < row.length) shown.push(`… (${row.length - shown.length - 1} more) …`, each(row[row.length - 1]));
    return shown.join(join);
  }
  function working(report, key) {
    if (key.startsWith("rms.")) return rmsWorking(report, key);  // LayerNorm's numbers may be missing (d = 1)
    const n = report.numbers, at = (k) => n[k][0];
    const x = at("x"), d = x.length, mean = at("ln.0")[0], centred = at("ln.2");
    const variance = at("ln.1")[0], eps = at("eps")[0], std = at("ln.4")[0];
    const xhat = at("ln.5"), scaled = at("ln.6"), gamma = at("gamma"), beta = at("beta");
    const pairs = (f) => terms(x.map((_, j) => j), f, ", ");
    switch (key) {
      case "ln.0": return `mean = (${terms(x, paren, " + ")}) / ${d} = ${format(mean)}`;
      case "ln.1": return `variance = (${terms(centred, (v) => paren(v) + "²", " + ")}) / ${d} = ${format(variance)}`;
      case "ln.2": return `x − mean = ${pairs((j) => `${paren(x[j])} − ${paren(mean)} = ${format(centred[j])}`)}`;
      case "ln.3": return `variance + ε = ${format(variance)} + ${format(eps)} = ${format(at("ln.3")[0])}`;
      case "ln.4": return `std = sqrt(${format(variance)} + ${format(eps)}) = ${format(std)}`;
      case "ln.5": return `x̂ = (x − mean) / std: ${pairs((j) => `${paren(centred[j])} / ${format(std)} = ${format(xhat[j])}`)}`;
      case "ln.6": return `γ · x̂: ${pairs((j) => `${paren(gamma[j])} × ${paren(xhat[j])} = ${format(scaled[j])}`)}`;
      case "ln.7": return `y = γ · x̂ + β: ${pairs((j) => `${paren(scaled[j])} + ${paren(beta[j])} = ${format(at("ln.7")[j])}`)}`;
      default: return "";
    }
  }

  // RMSNorm's steps (rms.0 to rms.5), written the same way.
  function rmsWorking(report, key) {
    const n = report.numbers, at = (k) => n[k][0], x = at("x"), d = x.length;
    const squares = at("rms.0"), rms = at("rms.3")[0], scaled = at("rms.4"), gamma = at("gamma");
    const pairs = (f) => terms(x.map((_, j) => j), f, ", ");
    switch (key) {
      case "rms.0": return `x²: ${pairs((j) => `${paren(x[j])}² = ${format(squares[j])}`)}`;
      case "rms.1": return `mean(x²) = (${terms(squares, paren, " + ")}) / ${d} = ${format(at("rms.1")[0])}`;
      case "rms.2": return `mean(x²) + ε = ${format(at("rms.1")[0])} + ${format(at("eps")[0])} = ${format(at("rms.2")[0])}`;
      case "rms.3": return `rms = sqrt(${format(at("rms.1")[0])} + ${format(at("eps")[0])}) = ${format(rms)}`;
      case "rms.4": return `x / rms: ${pairs((j) => `${paren(x[j])} / ${format(rms)} = ${format(scaled[j])}`)}`;
      case "rms.5": return `γ · (x / rms): ${pairs((j) => `${paren(gamma[j])} × ${paren(scaled[j])} = ${format(at("rms.5")[j])}`)}`;
      default: return "";
    }
  }

  // Row 1 before (x) and after (x̂, then y) as dots on three number lines, each
  // dot joined to its feature's dot below: x and y share one scale, so γ and β's
  // stretch and shift show; x̂ has its own, centred on 0 with ticks at ±1.
  function strip(report) {
    const n = report.numbers, W = 360, left = 34, right = W - 12;
    const rows = [["x", n.x[0]], ["x̂", n["ln.5"][0]], ["y", n["ln.7"][0]]];
    const xy = n.x[0].concat(n["ln.7"][0]);
    let lo = Math.min(...xy), hi = Math.max(...xy);
    if (hi === lo) { lo -= 1; hi += 1; }
    const m = Math.max(1.5, ...n["ln.5"][0].map(Math.abs));
    const scale = (k, v) => left + (right - left) * (k === 1 ? (v + m) / (2 * m) : (v - lo) / (hi - lo));
    const Y = [22, 72, 122], parts = [];
    // One <path> per line of dots or of links, not one element per feature: at d = 768
    // the 3,840 elements took the browser longer to lay out than the engine ran.
    for (let k = 0; k < 2; ++k) {  // each feature's link from x to x̂, then x̂ to y
      const d = rows[k][1].map((v, j) => `M${scale(k, v)} ${Y[k]}L${scale(k + 1, rows[k + 1][1][j])} ${Y[k + 1]}`);
      parts.push(`<path class="link" d="${d.join("")}"/>`);
    }
    rows.forEach(([name, row], k) => {
      parts.push(`<line class="axis" x1="${left}" y1="${Y[k]}" x2="${right}" y2="${Y[k]}"/>`,
                 `<text class="name" x="2" y="${Y[k] + 4}">${name}</text>`);
      const ticks = k === 1 ? [-1, 0, 1] : [lo, hi];
      for (const [i, t] of ticks.entries()) {
        const anchor = k === 1 ? "middle" : i === 0 ? "start" : "end";  // the ends' labels stay inside the box
        parts.push(`<line class="tick" x1="${scale(k, t)}" y1="${Y[k] - 4}" x2="${scale(k, t)}" y2="${Y[k] + 4}"/>`,
                   `<text class="tick-label" x="${scale(k, t)}" y="${Y[k] + 17}" text-anchor="${anchor}">${escape(format(t))}</text>`);
      }
      // Each dot a circle of radius 4 whose move-to is its centre (the test reads them back).
      const dots = row.map((v) => `M${scale(k, v)} ${Y[k]}m-4 0a4 4 0 1 0 8 0a4 4 0 1 0 -8 0`);
      parts.push(`<path class="dot dot-${k}" d="${dots.join("")}"/>`);
    });
    const t = document.createElement("template");
    t.innerHTML = `<svg class="strip" viewBox="0 0 ${W} 142" role="img" aria-label="row 1: x, x̂ and y as dots on number lines">${parts.join("")}</svg>`;
    return t.content.firstChild;
  }

  function message(container, text) {
    container.replaceChildren(el("p", { class: "view-error", role: "status" }, text));
  }

  return {
    el, svg, num, matrix, steps, message, format, working, strip,
    setDigits(d) { digits = d; },
    setShowAll(on) { showAll = on; },
    shownPerRow(cols) { return showAll || cols <= kLong ? cols : kHead + kTail; },
  };
})();
