// A lesson's code cell as a reader sees it: the #include lines and the
// NB_CELL { ... } wrapper hidden, the nb::check statements moved out of the
// code into the cell's folded checks, and its output split into what it
// printed and the checks it reported.
"use strict";

// Lines of one statement starting at `from`: up to the ';' that closes its parentheses.
function statementEnd(lines, from) {
  let depth = 0;
  for (let i = from; i < lines.length; i++) {
    for (const c of lines[i].replace(/"(?:[^"\\]|\\.)*"/g, '""')) {
      if (c === "(") depth++;
      else if (c === ")") depth--;
    }
    if (depth <= 0 && /;\s*(\/\/.*)?$/.test(lines[i])) return i;
  }
  return -1;
}

// A check may be moved out only where it is a statement of its own (not the body of a bare if or for).
function standsAlone(kept) {
  for (let i = kept.length - 1; i >= 0; i--) {
    const t = kept[i].trim();
    if (t === "" || t.startsWith("//")) continue;
    return /[;{}]$/.test(t);
  }
  return true;
}

// Removes the NB_CELL { line and its closing } (a line "}" at column 0), dedenting the body.
function unwrapCells(lines) {
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "NB_CELL {") { out.push(lines[i]); continue; }
    let end = i + 1;
    while (end < lines.length && lines[end] !== "}") end++;
    for (let k = i + 1; k < end; k++) out.push(lines[k].startsWith("  ") ? lines[k].slice(2) : lines[k]);
    i = end;
  }
  return out;
}

function tidy(lines) {
  const out = [];
  for (const line of lines) {
    if (line.trim() === "" && (out.length === 0 || out[out.length - 1].trim() === "")) continue;
    out.push(line);
  }
  while (out.length && out[out.length - 1].trim() === "") out.pop();
  return out.join("\n");
}

function readerCode(text) {
  const lines = unwrapCells(text.split("\n").filter((l) => !/^\s*#\s*include\b/.test(l)));
  const kept = [], checks = [];
  for (let i = 0; i < lines.length; i++) {
    const end = /^\s*nb::check/.test(lines[i]) && standsAlone(kept) ? statementEnd(lines, i) : -1;
    if (end < 0) { kept.push(lines[i]); continue; }
    const indent = lines[i].match(/^\s*/)[0].length;
    checks.push(lines.slice(i, end + 1).map((l) => l.slice(Math.min(indent, l.match(/^\s*/)[0].length))).join("\n"));
    i = end;
  }
  return { code: tidy(kept), checks };
}

// A cell's printed text without its check lines; the checks, passed and failed.
function splitOutput(text) {
  const printed = [], passed = [], failed = [];
  for (const line of text.replace(/\n$/, "").split("\n")) {
    if (line.startsWith("check FAILED: ")) failed.push(line.slice("check FAILED: ".length));
    else if (line.startsWith("check: ") && line.endsWith("[ok]")) passed.push(line.slice(7, -4).trim());
    else printed.push(line);
  }
  return { printed: printed.join("\n").replace(/^\n+|\s+$/g, ""), passed, failed };
}

module.exports = { readerCode, splitOutput };
