// The explorer's walks as lists: forward (each op's rule with its inputs'
// numbers in place of its letters), backward (the rule, dy, and the product
// each node adds into each input's gradient, with the running total), and
// forward mode (each tangent by the op's JVP rule). Numbers are the engine's.
"use strict";

const Walk = (() => {
  const digits = 5;
  function num(v) {
    if (v === null) return "NaN/inf";
    const s = Number(v.toPrecision(digits)).toString();
    return s === "-0" ? "0" : s;
  }
  function rowText(r, most) {
    const shown = r.slice(0, most).map(num);
    return "[" + shown.join(", ") + (r.length > most ? ", …" : "") + "]";
  }
  // [a, b] for one row, [[..], [..]] for more, cut after a few.
  function text(m, most = 6) {
    if (!m) return "(too large to show)";
    if (m.length === 1 && m[0].length === 1) return num(m[0][0]);
    if (m.length === 1) return rowText(m[0], most);
    const rows = m.slice(0, 4).map((r) => rowText(r, most));
    return "[" + rows.join(", ") + (m.length > 4 ? ", …" : "") + "]";
  }
  function short(m, shape) {
    if (!m) return shape;
    if (m.length === 1 && m[0].length === 1) return num(m[0][0]);
    if (m.length === 1 && m[0].length <= 4) return rowText(m[0], 4);
    return shape + " " + rowText(m[0], 2);
  }

  // The letters a rule calls its inputs: "y = a * b", "Y = A B", "(x - mean) ... * g + b".
  function symbols(n) {
    const k = n.inputs.length, f = n.forward;
    if (/\bA\b/.test(f)) return ["A", "B", "C"].slice(0, k);
    if (k === 3) return ["x", "g", "b"];
    if (k === 2 && /\bx\b/.test(f)) return ["x", "g"];
    return ["a", "b", "c"].slice(0, k);
  }

  function substitute(rule, values) {
    let out = rule;
    for (const [name, v] of Object.entries(values)) {
      out = out.replace(new RegExp(`(^|[^A-Za-z_0-9])${name}(?![A-Za-z_0-9^])`, "g"), `$1${v}`);
    }
    return out;
  }

  // A node's name: the names bound to it, a named constant's (layernorm's gamma), or its op.
  function name(report, id) {
    const n = report.nodes[id];
    return n.label || (n.kind === "constant" ? n.op : `#${id} ${n.op}`);
  }

  function li(list, id, parts) {
    const item = document.createElement("li");
    item.dataset.node = id;
    for (const [cls, t] of parts) {
      const line = document.createElement("div");
      line.className = cls;
      line.textContent = t;
      item.append(line);
    }
    list.append(item);
  }

  function forward(list, report) {
    list.replaceChildren();
    for (const n of report.nodes) {
      if (n.kind !== "op") {
        li(list, n.id, [["rule", `${name(report, n.id)} = ${text(n.value)}  (${n.kind}, ${n.shape})`]]);
        continue;
      }
      const sym = symbols(n), values = {}, given = [];
      n.inputs.forEach((i, k) => {
        values[sym[k]] = text(report.nodes[i].value, 4);
        given.push(`${sym[k]} = ${name(report, i)}`);
      });
      const rhs = n.forward.split(/;|  \(|, per| \(one/)[0];
      li(list, n.id, [["rule", `${n.label ? n.label + " = " : ""}${n.op}${n.attributes ? " (" + n.attributes + ")" : ""}:  ${n.forward}`],
                      ["with", `${given.join(", ")}:  ${substitute(rhs, values)}`],
                      ["result", `= ${text(n.value)}  (${n.shape})`]]);
    }
  }

  function backward(list, report) {
    list.replaceChildren();
    for (const s of report.backward) {
      const n = report.nodes[s.node], sym = symbols(n);
      const values = { dy: text(n.grad, 4), dY: text(n.grad, 4), y: text(n.value, 4), Y: text(n.value, 4) };
      n.inputs.forEach((i, k) => { values[sym[k]] = text(report.nodes[i].value, 4); });
      const clauses = n.backward.split(";").map((c) => c.trim());
      const lines = [["rule", `${n.label ? n.label + " = " : ""}${n.op}:  ${n.backward}`], ["with", `dy = ${text(n.grad)}`]];
      for (const p of s.parts) {
        const k = n.inputs.indexOf(p.input), clause = clauses.length === n.inputs.length ? clauses[k] : "";
        const worked = clause && clause.includes("=") ? substitute(clause.slice(clause.indexOf("=") + 1).trim(), values) + " = " : "";
        lines.push(["adds", `into ∇${name(report, p.input)}: + ${worked}${text(p.contribution)}  →  ∇${name(report, p.input)} = ${text(p.total)}`]);
      }
      li(list, s.node, lines);
    }
  }

  function tangents(list, hvpBox, report) {
    list.replaceChildren();
    for (const n of report.nodes) {
      if (!n.tangent) continue;
      const rule = n.kind === "op" ? `  by ${n.tangent_rule}` : n.label === report.direction ? `  (the direction v = ${text(report.v)})` : "";
      li(list, n.id, [["rule", `ṫ ${name(report, n.id)} = ${text(n.tangent)}${rule}`]]);
    }
    hvpBox.replaceChildren();
    const out = report.nodes[report.output];
    const p = document.createElement("p");
    p.textContent = out.tangent && out.tangent.length === 1 && out.tangent[0].length === 1
      ? `The output's tangent is ∇${report.output_name} · v = ${num(out.tangent[0][0])}. Differentiating it again (reverse over forward) gives H v:`
      : "H v needs a 1x1 output.";
    hvpBox.append(p);
    const ul = document.createElement("ul");
    for (const n of report.nodes) {
      if (n.kind !== "leaf" || !n.hvp) continue;
      const item = document.createElement("li");
      item.textContent = `H v for ${n.label}: ${text(n.hvp)}`;
      ul.append(item);
    }
    hvpBox.append(ul);
  }

  return { forward, backward, tangents, text, short, num, name };
})();
