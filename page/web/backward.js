// The backward views: the tape as an SVG graph (value and gradient per node,
// walked one node at a time), composed against fused, the Jacobian heatmap,
// the saved bytes. Drawing only; the numbers are the engine's.
"use strict";

const Backward = (() => {
  const { el, svg, num, matrix } = Draw;
  const kShown = 4;  // numbers per node box; more are elided

  // Column of each node: its longest path from a leaf.
  function depths(tape) {
    const depth = [];
    tape.forEach((n, k) => { depth[k] = n.inputs.length ? 1 + Math.max(...n.inputs.map((i) => depth[i])) : 0; });
    return depth;
  }

  // Node n's gradient is complete once every node that consumes it has run
  // (walk: nodes with index >= running have run; the output is seeded first).
  function complete(tape, n, running) {
    if (running === null || n === tape.length - 1) return true;
    const consumers = tape.map((m, k) => (m.inputs.includes(n) ? k : -1)).filter((k) => k >= 0);
    return consumers.length > 0 && Math.min(...consumers) >= running;
  }

  function box(report, tape, k, running, x, y, w) {
    const g = svg("g", { class: "node" + (k === running ? " running" : ""), "data-node": k });
    const value = report.numbers[tape[k].key + ".v"][0];
    const grad = report.numbers[tape[k].key + ".g"][0];
    const lines = Math.min(value.length, kShown) + (value.length > kShown ? 1 : 0);
    const h = 40 + 16 * lines;
    g.appendChild(svg("rect", { x, y, width: w, height: h, rx: 6 }));
    g.appendChild(svg("text", { x: x + 8, y: y + 16, class: "op" }, k + ": " + tape[k].op));
    g.appendChild(svg("text", { x: x + 8, y: y + 32, class: "head" }, "value"));
    g.appendChild(svg("text", { x: x + w / 2 + 4, y: y + 32, class: "head" }, "gradient"));
    const done = complete(tape, k, running);
    for (let j = 0; j < Math.min(value.length, kShown); ++j) {
      const t = num(tape[k].key + ".v", 0, j, value[j], "svg");
      t.setAttribute("x", x + 8);
      t.setAttribute("y", y + 48 + 16 * j);
      g.appendChild(t);
      const d = done ? num(tape[k].key + ".g", 0, j, grad[j], "svg") : svg("text", { class: "pending" }, "…");
      d.setAttribute("x", x + w / 2 + 4);
      d.setAttribute("y", y + 48 + 16 * j);
      g.appendChild(d);
    }
    if (value.length > kShown) g.appendChild(svg("text", { x: x + 8, y: y + 48 + 16 * kShown, class: "head" }, `… ${value.length} in all`));
    return { g, h };
  }

  function drawTape(container, report, running) {
    const tape = report.tape;
    const depth = depths(tape);
    const w = Draw.format(Math.PI).length > 10 ? 300 : 160, gapX = 34, gapY = 14;
    const nextY = [];
    const at = [];
    const boxes = tape.map((n, k) => {
      const c = depth[k];
      const b = box(report, tape, k, running, c * (w + gapX) + 4, (nextY[c] || 4), w);
      at[k] = { x: c * (w + gapX) + 4, y: nextY[c] || 4, h: b.h };
      nextY[c] = (nextY[c] || 4) + b.h + gapY;
      return b.g;
    });
    const width = (Math.max(...depth) + 1) * (w + gapX), height = Math.max(...nextY) + 4;
    // Scaled down to the card's width when wider (viewBox), never up (max-width).
    const root = svg("svg", { width: "100%", style: `max-width: ${width}px`, viewBox: `0 0 ${width} ${height}`, role: "img",
                              "aria-label": "the tape of the composed LayerNorm" });
    tape.forEach((n, k) => n.inputs.forEach((i) => {
      const active = running !== null && k === running;
      root.appendChild(svg("line", { x1: at[i].x + w, y1: at[i].y + 20, x2: at[k].x, y2: at[k].y + 20,
                                     class: "edge" + (active ? " active" : "") }));
    }));
    boxes.forEach((g) => root.appendChild(g));
    container.replaceChildren(root);
  }

  function compare(container, report) {
    const table = el("table", { class: "compare" });
    const head = el("tr");
    ["", "composed (tape)", "fused (one node)", "finite differences"].forEach((t) => head.appendChild(el("th", {}, t)));
    table.appendChild(head);
    for (const name of ["dx", "dgamma", "dbeta"]) {
      const tr = el("tr");
      tr.appendChild(el("th", {}, name));
      for (const key of ["composed." + name, "fused." + name, "fd." + name]) {
        const td = el("td");
        if (key in report.numbers) td.appendChild(matrix(key, report.numbers[key]));
        tr.appendChild(td);
      }
      table.appendChild(tr);
    }
    const p = el("p");
    p.append("Largest |composed − fused| over dx, dγ, dβ: ", num("maxdiff", 0, 0, report.numbers.maxdiff[0][0]), ". ");
    if (report.errors.fd) p.append(report.errors.fd, ".");
    else p.append("Largest |tape − finite difference| in dx: ", num("fd.err", 0, 0, report.numbers["fd.err"][0][0]),
                  " (central differences of L = Σ dy·y, h = 1e-6).");
    container.replaceChildren(table, p);
  }

  // A value's colour as [r, g, b]: red positive, blue negative, white 0.
  function heatRgb(v, max) {
    const t = max > 0 ? Math.max(-1, Math.min(1, v / max)) : 0;
    const a = Math.round(255 * (1 - Math.abs(t)));
    return t >= 0 ? [255, a, a] : [a, a, 255];
  }
  const heat = (v, max) => `rgb(${heatRgb(v, max).join(",")})`;

  // The heatmap's cells on a canvas, a pixel per cell, shown D x D cells wide:
  // at d = 64 the 4,096 <rect> elements (with a <title> each) took longer to
  // build and lay out than the engine ran.
  function paintCells(canvas, J, max) {
    const D = J.length, context = canvas.getContext("2d"), image = context.createImageData(D, D);
    J.forEach((row, i) => row.forEach((v, j) => {
      const [r, g, b] = heatRgb(v, max), at = 4 * (i * D + j);
      image.data[at] = r; image.data[at + 1] = g; image.data[at + 2] = b; image.data[at + 3] = 255;
    }));
    context.putImageData(image, 0, 0);
  }

  // The colour scale under the heatmap: -max (blue) through 0 (white) to +max (red).
  function colourScale(max) {
    const width = 200, root = svg("svg", { width: width + 2, height: 14, role: "img", "aria-label": "the colour scale" });
    for (let k = 0; k < 40; ++k) {
      const v = max * (2 * (k + 0.5) / 40 - 1);
      root.appendChild(svg("rect", { x: 1 + k * width / 40, y: 1, width: width / 40 + 0.5, height: 12, fill: heat(v, max) }));
    }
    const p = el("p", { class: "jac-scale" });
    const end = (sign) => el("span", {}, sign + Draw.format(max));  // drawing's scale, not one of the engine's numbers
    p.append(end("−"), " ", root, " ", end("+"));
    return p;
  }

  // What the rank says, from what was measured: (1, …, 1) is always lost; x̂'s
  // direction is kept, shrunk by ε / (σ² + ε), unless that factor is below the
  // rank's tolerance (a tiny ε), when it counts as lost too.
  function rankText(p, report, D) {
    const rank = report.numbers["jac.rank"][0][0];
    p.append("Rank ", num("jac.rank", 0, 0, rank), ` of ${D}. `,
             "Largest |J·(1, …, 1)|: ", num("jac.ones", 0, 0, report.numbers["jac.ones"][0][0]),
             ". Adding the same number to every feature leaves y unchanged, so the direction (1, …, 1)/√d is lost. ");
    if (!("jac.xhat" in report.numbers)) return;
    const xhat = num("jac.xhat", 0, 0, report.numbers["jac.xhat"][0][0]);
    if (rank === D - 1) {
      p.append(`That is the one direction lost (d − 1 = ${D - 1}). The direction of x̂ itself is kept but shrunk: |J·x̂| / |x̂| = `, xhat,
               ", which is (γ / std) · ε / (σ² + ε) when γ is one number: without ε this direction would be lost too. ");
    } else if (rank === D - 2) {
      p.append(`The direction of x̂ is lost as well (d − 2 = ${D - 2}): |J·x̂| / |x̂| = `, xhat,
               ", which is (γ / std) · ε / (σ² + ε) when γ is one number, too small beside J's other entries to count at this ε. " +
               "With a larger ε it is kept, shrunk, and the rank is d − 1. ");
    } else {
      p.append("|J·x̂| / |x̂| = ", xhat, ". ");
    }
  }

  function jacobian(container, report) {
    if (report.errors.jac) { Draw.message(container, report.errors.jac); return; }
    const J = report.numbers.jac, D = J.length;
    const wide = D <= 8 ? Draw.format(-0.0123456789012345678).length * 7.5 + 10 : 0;  // room for the numbers
    const cell = Math.max(6, Math.min(64, Math.floor(480 / D)), wide);
    const max = Math.max(...J.flat().map(Math.abs));
    const pad = 18;  // the axes' indices: rows are y_i, columns x_j
    const size = pad + cell * D + 2;
    // The cells' canvas under an SVG of the axes' indices (and the numbers, for a small D).
    const map = el("div", { class: "jac-map", role: "img", "aria-label": "the Jacobian heatmap", style: `width: ${size}px; height: ${size}px` });
    const canvas = el("canvas", { class: "jac-cells", width: D, height: D,
                                  style: `left: ${pad + 1}px; top: ${pad + 1}px; width: ${cell * D}px; height: ${cell * D}px` });
    paintCells(canvas, J, max);
    const root = svg("svg", { width: size, height: size });
    const label = (text, x, y) => root.appendChild(svg("text", { x, y, "text-anchor": "middle", "font-size": 11, class: "jac-axis" }, text));
    if (D <= 16) {
      for (let k = 0; k < D; ++k) {
        label(`x${k + 1}`, pad + 1 + k * cell + cell / 2, 12);
        label(`y${k + 1}`, pad / 2, pad + 1 + k * cell + cell / 2 + 4);
      }
    }
    if (D <= 8) {
      J.forEach((row, i) => row.forEach((v, j) => {
        const t = num("jac", i, j, v, "svg");
        t.setAttribute("x", pad + 1 + j * cell + cell / 2);
        t.setAttribute("y", pad + 1 + i * cell + cell / 2 + 4);
        t.setAttribute("text-anchor", "middle");
        root.appendChild(t);
      }));
    }
    map.append(canvas, root);
    const axes = el("p", {}, "Row i, column j: dy_i / dx_j (how output i moves when input j does). ");
    const hover = el("span", { class: "jac-hover" }, "Point at a cell for its value.");
    map.addEventListener("pointermove", (event) => {
      const box = map.getBoundingClientRect();
      const j = Math.floor((event.clientX - box.left - pad - 1) / cell), i = Math.floor((event.clientY - box.top - pad - 1) / cell);
      hover.textContent = i >= 0 && j >= 0 && i < D && j < D ? `dy${i + 1}/dx${j + 1} = ${J[i][j]}` : "Point at a cell for its value.";
    });
    axes.append(hover);
    const p = el("p");
    rankText(p, report, D);
    p.append("Red: positive, blue: negative.");
    container.replaceChildren(map, colourScale(max), axes, p);
  }

  function memory(container, report) {
    const p = el("p");
    const ops = report.tape.filter((n) => n.inputs.length > 0).length;
    p.append("Composed: ", num("saved.composed", 0, 0, report.numbers["saved.composed"][0][0]), ` bytes (the tensors its ${ops} nodes keep); fused: `,
             num("saved.fused", 0, 0, report.numbers["saved.fused"][0][0]), " bytes (x and γ, plus one mean and one rstd per row), for this row.");
    container.replaceChildren(p);
  }

  // The running node's step of the walk: the op's backward rule (its local
  // derivative, times dy), the gradient it got, and what it adds into each input.
  function walkDetail(container, report, running) {
    if (running === null) { container.replaceChildren(); return; }
    const tape = report.tape, node = tape[running];
    const rule = el("p", { class: "walk-rule" });
    rule.append(`node ${running} (${node.op}) runs its backward, the op's rule: `, el("code", {}, node.rule));
    const got = el("p");
    got.append("its gradient dy: ", matrix(node.key + ".g", report.numbers[node.key + ".g"]));
    const list = el("ul", { class: "walk-adds" });
    node.inputs.forEach((i) => {
      const key = `${node.key}.into.${i}`;
      if (!(key in report.numbers)) return;  // an input that needs no gradient
      const li = el("li");
      li.append(`adds into node ${i} (${tape[i].op}): `, matrix(key, report.numbers[key]));
      list.appendChild(li);
    });
    container.replaceChildren(rule, got, list);
  }

  // dx = rstd·dxhat − rstd·mean(dxhat) − rstd·x̂·mean(dxhat·x̂), each term beside
  // the node of the composed tape whose backward adds it into x.
  function terms(container, report) {
    const n = report.numbers, tape = report.tape;
    const table = el("table", { class: "compare terms" });
    const row = (what, key, note) => {
      const tr = el("tr");
      tr.appendChild(el("th", {}, what));
      const td = el("td");
      td.appendChild(matrix(key, n[key]));
      tr.appendChild(td);
      const td2 = el("td", { class: "note" });
      if (note) td2.appendChild(note);
      tr.appendChild(td2);
      table.appendChild(tr);
    };
    const path = (k) => {
      const id = n[`terms.${k}.node`][0][0];
      const note = el("span");
      note.append("x's path through node ", num(`terms.${k}.node`, 0, 0, id), ` (${tape[id].op}): what its backward adds into x`);
      return note;
    };
    row("dxhat = dy · γ", "terms.dxhat");
    row("term 1 = rstd · dxhat", "terms.1", path(1));
    row("term 2 = −rstd · mean(dxhat)", "terms.2", path(2));
    row("term 3 = −rstd · x̂ · mean(dxhat · x̂)", "terms.3", path(3));
    row("dx = term 1 + term 2 + term 3", "terms.sum");
    const p = el("p");
    p.append("mean(dxhat) = ", num("terms.dxhat_mean", 0, 0, n["terms.dxhat_mean"][0][0]),
             ", mean(dxhat · x̂) = ", num("terms.dxhat_xhat_mean", 0, 0, n["terms.dxhat_xhat_mean"][0][0]),
             ". Largest |three terms − fused dx|: ", num("terms.err", 0, 0, n["terms.err"][0][0]),
             ". x reaches y three ways on the tape: straight into x − mean, through the mean, and through the variance; " +
             "each term is what one of them sends back (largest |term − what its node adds|: ",
             num("terms.paths", 0, 0, n["terms.paths"][0][0]), "). Term 2 takes away dx's mean, term 3 its part along x̂: " +
             "shifting or scaling x leaves y unchanged, so dx has no part along either.");
    container.replaceChildren(table, p);
  }

  return { drawTape, compare, jacobian, memory, walkDetail, terms };
})();
