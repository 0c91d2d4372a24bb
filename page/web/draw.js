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
  function steps(container, report, keys) {
    const list = el("ol", { class: "step-list" });
    for (const key of keys) {
      if (!(key in report.numbers)) continue;
      const li = el("li");
      li.appendChild(el("span", { class: "label" }, report.labels[key] || key));
      li.appendChild(matrix(key, report.numbers[key]));
      list.appendChild(li);
    }
    container.replaceChildren(list);
  }

  function message(container, text) {
    container.replaceChildren(el("p", { class: "view-error", role: "status" }, text));
  }

  return {
    el, svg, num, matrix, steps, message, format,
    setDigits(d) { digits = d; },
    setShowAll(on) { showAll = on; },
    shownPerRow(cols) { return showAll || cols <= kLong ? cols : kHead + kTail; },
  };
})();
