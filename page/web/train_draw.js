// The training page's drawings, from the engine's reports: the decision
// boundary with the points, the curves, the gradient norm per layer, the table.
"use strict";

const Plots = (() => {
  const blue = [47, 95, 208], orange = [232, 130, 30];
  const layerColours = ["#2f5fd0", "#e8821e", "#3b8a4c", "#b3261e", "#7b4bb7", "#0f8a8a", "#8a6d1f", "#d14f9c"];

  // P(class 1) on the engine's grid, white at 0.5, then the points.
  function boundary(canvas, report, points) {
    const n = report.grid_size, ctx = canvas.getContext("2d");
    const cell = document.createElement("canvas");
    cell.width = cell.height = n;
    const image = cell.getContext("2d").createImageData(n, n);
    report.grid.forEach((p, k) => {
      const q = p === null ? 0.5 : p, t = Math.abs(q - 0.5) * 2, c = q > 0.5 ? orange : blue;
      for (let ch = 0; ch < 3; ++ch) image.data[4 * k + ch] = Math.round(255 + (c[ch] - 255) * 0.55 * t);
      image.data[4 * k + 3] = 255;
    });
    cell.getContext("2d").putImageData(image, 0, 0);
    ctx.imageSmoothingEnabled = true;
    ctx.drawImage(cell, 0, 0, canvas.width, canvas.height);
    const [x0, x1, y0, y1] = points.extent;
    const px = (x) => (x - x0) / (x1 - x0) * canvas.width, py = (y) => (y1 - y) / (y1 - y0) * canvas.height;
    for (const [set, filled] of [[points.train, true], [points.validation, false]]) {
      for (const [x, y, label] of set) {
        ctx.beginPath();
        ctx.arc(px(x), py(y), 3.5, 0, 2 * Math.PI);
        const colour = `rgb(${(label ? orange : blue).join(",")})`;
        ctx.lineWidth = 1.5;
        if (filled) { ctx.fillStyle = colour; ctx.fill(); ctx.strokeStyle = "#ffffff"; } else { ctx.strokeStyle = colour; }
        ctx.stroke();
      }
    }
  }

  function frame(canvas, title) {
    const ctx = canvas.getContext("2d");
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.fillStyle = "#5b6475";
    ctx.font = "13px system-ui, sans-serif";
    ctx.fillText(title, 8, 16);
    return ctx;
  }

  // Lines of `keys` from `rows` against their steps; `log`: a log y axis.
  function lines(canvas, rows, series, log, title) {
    const ctx = frame(canvas, title);
    const values = [];
    series.forEach((s) => rows.forEach((r) => { const v = s.value(r); if (Number.isFinite(v) && (!log || v > 0)) values.push(v); }));
    if (rows.length < 1 || values.length === 0) return;
    const f = log ? Math.log10 : (v) => v;
    let lo = Math.min(...values.map(f)), hi = Math.max(...values.map(f));
    if (hi - lo < 1e-9) { lo -= 0.5; hi += 0.5; }
    const last = Math.max(1, rows[rows.length - 1].step), w = canvas.width - 60, h = canvas.height - 36;
    const X = (s) => 50 + s / last * w, Y = (v) => 24 + (hi - f(v)) / (hi - lo) * h;
    ctx.fillText((log ? 10 ** hi : hi).toPrecision(3), 2, 30);
    ctx.fillText((log ? 10 ** lo : lo).toPrecision(3), 2, canvas.height - 8);
    ctx.fillText(`step ${last}`, canvas.width - 70, canvas.height - 2);
    series.forEach((s) => {
      ctx.strokeStyle = s.colour;
      ctx.setLineDash(s.dash || []);
      ctx.lineWidth = 1.6;
      ctx.beginPath();
      let started = false;
      for (const r of rows) {
        const v = s.value(r);
        if (!Number.isFinite(v) || (log && v <= 0)) { started = false; continue; }
        if (started) ctx.lineTo(X(r.step), Y(v)); else ctx.moveTo(X(r.step), Y(v));
        started = true;
      }
      ctx.stroke();
    });
    ctx.setLineDash([]);
  }

  function curves(canvas, rows, keys, log, title) {
    lines(canvas, rows, [{ value: (r) => r[keys[0]], colour: "#2f5fd0" }, { value: (r) => r[keys[1]], colour: "#e8821e", dash: [6, 4] }],
          log, title);
  }

  function gradflow(canvas, rows, layers) {
    const series = layers.map((l, i) => ({ value: (r) => r.grads[i], colour: layerColours[i % layerColours.length] }));
    lines(canvas, rows, series, true, "|dL/dW| per layer (layer 1 blue, then orange, green, red, ...)");
  }

  function cellText(v) { return v === null ? "not finite" : Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(2) : v.toFixed(4); }

  function layerTable(table, layers) {
    table.textContent = "";
    const head = table.insertRow();
    for (const t of ["layer", "output mean", "output sd", "|dL/dW|", "update / data"]) head.append(Object.assign(document.createElement("th"), { textContent: t }));
    layers.forEach((l, i) => {
      const row = table.insertRow();
      row.insertCell().append(Object.assign(document.createElement("span"), { textContent: "■ ", style: `color:${layerColours[i % layerColours.length]}` }), l.name);
      for (const v of [l.mean, l.sd, l.grad_norm, l.update_ratio]) row.insertCell().textContent = cellText(v);
    });
  }

  return { boundary, curves, gradflow, layerTable };
})();
