// The explorer's tape as a layered graph (Sugiyama's layout, simply): an op's
// layer is its longest path from a leaf, a leaf's the one before its first use; an edge that skips layers runs
// through a dummy point in each layer it crosses, so no edge passes behind a
// box; two barycentre sweeps order each layer. Layers run left to right, or
// top to bottom on a narrow screen; the SVG keeps its size (12 px text) and
// its box scrolls, never the page.
"use strict";

const Graph = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const box = { w: 158, h: 58 };
  const gapMain = 46, gapCross = 14, dummy = 10;

  function el(name, attrs, text) {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Layers of real and dummy nodes; edges as chains of keys.
  function layout(nodes) {
    const depth = nodes.map(() => 0);
    for (const n of nodes) for (const i of n.inputs) depth[n.id] = Math.max(depth[n.id], depth[i] + 1);
    // A leaf or constant sits just before its first consumer, not far back in layer 0.
    const first = new Map();
    for (const n of nodes) for (const i of n.inputs) first.set(i, Math.min(first.has(i) ? first.get(i) : Infinity, depth[n.id]));
    for (const n of nodes) if (n.inputs.length === 0 && first.has(n.id)) depth[n.id] = first.get(n.id) - 1;
    const layers = [];
    const put = (key, d) => { (layers[d] = layers[d] || []).push(key); };
    nodes.forEach((n) => put(n.id, depth[n.id]));
    const chains = [];
    for (const n of nodes) {
      n.inputs.forEach((from, slot) => {
        const chain = [from];
        for (let d = depth[from] + 1; d < depth[n.id]; d++) {
          const key = `d${from}-${n.id}-${slot}-${d}`;
          put(key, d);
          chain.push(key);
        }
        chain.push(n.id);
        chains.push({ chain, slot, arity: n.inputs.length, from, to: n.id });
      });
    }
    order(layers, chains);
    return { layers, chains };
  }

  // Barycentre sweeps: down by predecessors, then up by successors.
  function order(layers, chains) {
    const pred = new Map(), succ = new Map();
    const link = (m, a, b) => { if (!m.has(a)) m.set(a, []); m.get(a).push(b); };
    for (const c of chains) for (let k = 1; k < c.chain.length; k++) {
      link(pred, c.chain[k], c.chain[k - 1]);
      link(succ, c.chain[k - 1], c.chain[k]);
    }
    const sweep = (range, near) => {
      for (const d of range) {
        const pos = new Map();
        for (const l of [layers[d - 1], layers[d + 1]]) (l || []).forEach((k, i) => pos.set(k, i));
        const bary = (k) => {
          const ns = (near.get(k) || []).filter((n) => pos.has(n));
          return ns.length ? ns.reduce((s, n) => s + pos.get(n), 0) / ns.length : layers[d].indexOf(k);
        };
        const keyed = layers[d].map((k) => [bary(k), k]);
        keyed.sort((a, b) => a[0] - b[0]);
        layers[d] = keyed.map((p) => p[1]);
      }
    };
    const n = layers.length, down = [...Array(n).keys()].slice(1), up = [...Array(n).keys()].slice(0, -1).reverse();
    for (let k = 0; k < 2; k++) { sweep(down, pred); sweep(up, succ); }
  }

  // Centre of every key, for layers along x (wide) or along y (narrow).
  function place(layers, vertical) {
    const main = vertical ? box.h : box.w, cross = vertical ? box.w : box.h;
    const size = (k) => (typeof k === "string" ? dummy : cross);
    const extent = layers.map((l) => l.reduce((s, k) => s + size(k), 0) + gapCross * (l.length - 1));
    const widest = Math.max(...extent);
    const at = new Map();
    layers.forEach((l, d) => {
      let c = (widest - extent[d]) / 2;
      for (const k of l) {
        const m = 12 + d * (main + gapMain) + main / 2, x = 12 + c + size(k) / 2;
        at.set(k, vertical ? { x, y: m } : { x: m, y: x });
        c += size(k) + gapCross;
      }
    });
    const w = vertical ? widest + 24 : 24 + layers.length * (main + gapMain) - gapMain;
    const h = vertical ? 24 + layers.length * (main + gapMain) - gapMain : widest + 24;
    return { at, w, h };
  }

  // Out of the source's far side, straight through each crossed layer in its
  // dummy's slot (which no box shares), into the target's near side: every
  // slanted segment lies in a gap between layers, never behind a box.
  function edgePath(c, at, vertical) {
    const half = vertical ? box.h / 2 : box.w / 2;
    const pts = [];
    c.chain.forEach((k, i) => {
      const p = at.get(k);
      if (i === 0 || i === c.chain.length - 1) { pts.push({ ...p }); return; }
      pts.push(vertical ? { x: p.x, y: p.y - half } : { x: p.x - half, y: p.y });
      pts.push(vertical ? { x: p.x, y: p.y + half } : { x: p.x + half, y: p.y });
    });
    const spread = ((c.slot + 1) / (c.arity + 1) - 0.5) * (vertical ? box.w : box.h) * 0.8;
    if (vertical) { pts[0].y += half; pts[pts.length - 1].y -= half + 2; pts[pts.length - 1].x += spread; }
    else { pts[0].x += half; pts[pts.length - 1].x -= half + 2; pts[pts.length - 1].y += spread; }
    return "M" + pts.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" L");
  }

  function nodeBox(n, p, report, fmt, active) {
    const g = el("g", { class: `node ${n.kind}${n.id === report.output ? " output" : ""}${active.has(n.id) ? " active" : ""}`,
                        "data-id": n.id, transform: `translate(${p.x - box.w / 2},${p.y - box.h / 2})` });
    g.append(el("rect", { width: box.w, height: box.h, rx: 6 }));
    const head = n.kind === "op" ? (n.label ? `${n.label} = ${n.op}` : n.op) : (n.label || n.op);
    const clip = (s) => (s.length > 21 ? s.slice(0, 20) + "…" : s);
    g.append(el("text", { x: 7, y: 16, class: "head" }, clip(head + (n.kind === "leaf" ? " (leaf)" : ""))));
    g.append(el("text", { x: 7, y: 33, class: "value" }, clip(fmt.short(n.value, n.shape))));
    g.append(el("text", { x: 7, y: 50, class: "grad" }, clip(n.grad ? "∇ " + fmt.short(n.grad, n.shape) : n.kind === "constant" ? "constant: no gradient" : "∇ none")));
    g.append(el("title", {}, `node ${n.id}: ${n.op}${n.attributes ? " (" + n.attributes + ")" : ""} ${n.shape}`));
    return g;
  }

  // The holder's width, asked for once per window width (explorer.js redraws on a
  // resize): asked on every keystroke, after the handler's other changes to the
  // page, it forced a layout of the whole page, 8 ms of a small program's 10.
  let measured = { window: -1, width: 0 };
  function holderWidth(holder) {
    if (measured.window !== window.innerWidth || measured.width === 0) measured = { window: window.innerWidth, width: holder.clientWidth };
    return measured.width;
  }

  // Draws `report` into `holder`; `active` is a set of node ids to highlight,
  // `hot` a set of "from>to" edges.
  function draw(holder, report, fmt, active, hot) {
    const vertical = holderWidth(holder) < 600;
    const { layers, chains } = layout(report.nodes);
    const { at, w, h } = place(layers, vertical);
    const svg = el("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img",
                            "aria-label": `the tape: ${report.nodes.length} nodes`, class: vertical ? "vertical" : "horizontal" });
    const defs = el("defs");
    for (const [id, cls] of [["arrow", "edge-head"], ["arrow-hot", "edge-head hot"]]) {
      const m = el("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
      m.append(el("path", { d: "M0,0 L10,5 L0,10 z", class: cls }));
      defs.append(m);
    }
    svg.append(defs);
    for (const c of chains) {
      const isHot = hot.has(`${c.from}>${c.to}`);
      svg.append(el("path", { d: edgePath(c, at, vertical), class: "edge" + (isHot ? " hot" : ""),
                              "marker-end": `url(#${isHot ? "arrow-hot" : "arrow"})` }));
    }
    for (const n of report.nodes) svg.append(nodeBox(n, at.get(n.id), report, fmt, active));
    holder.replaceChildren(svg);
    return svg;
  }

  return { draw, layout };
})();
