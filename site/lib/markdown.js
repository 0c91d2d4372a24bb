// The prose of lessons and exercises as HTML: markdown-it (CommonMark, tables),
// TeX typeset by KaTeX when the site is built ($...$ inline, $$...$$ display;
// a page needs KaTeX's CSS and fonts, no script), C++ highlighted by highlight.js.
// A `$` inside code (`...` or a code block) is code, never math.
"use strict";

const MarkdownIt = require("markdown-it");
const katex = require("katex");
const hljs = require("highlight.js/lib/core");
hljs.registerLanguage("cpp", require("highlight.js/lib/languages/cpp"));
hljs.registerLanguage("bash", require("highlight.js/lib/languages/bash"));

function escapeHtml(s) {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

// C++ (or sh) as highlighted HTML; any other language as escaped text.
function highlight(code, language) {
  if (language === "sh") language = "bash";
  if (!hljs.getLanguage(language)) return escapeHtml(code);
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}

// TeX to HTML. A TeX error stops the build with the source it came from.
function tex(source, displayMode, where) {
  try {
    return katex.renderToString(source, {
      displayMode, throwOnError: true,
      // Unicode letters (γ, β) inside math are fine in KaTeX; anything else it would warn about fails.
      strict: (code) => (code === "unicodeTextInMathMode" ? "ignore" : "error"),
    });
  } catch (e) {
    throw new Error(`${where}: cannot typeset $${source}$: ${e.message}`);
  }
}

// $$ on a line of its own (or $$ ... $$ on one line) opens a display formula.
function mathBlock(state, startLine, endLine, silent) {
  const lineText = (n) => state.src.slice(state.bMarks[n] + state.tShift[n], state.eMarks[n]);
  if (state.sCount[startLine] - state.blkIndent >= 4) return false;  // an indented code block
  const first = lineText(startLine).trim();
  if (!first.startsWith("$$")) return false;
  let body, last = startLine;
  if (first.length > 4 && first.endsWith("$$")) {
    body = first.slice(2, -2);
  } else {
    const lines = [first.slice(2)];
    for (last = startLine + 1; last < endLine; last++) {
      const text = lineText(last).trim();
      if (text.endsWith("$$")) { lines.push(text.slice(0, -2)); break; }
      lines.push(text);
    }
    if (last >= endLine) return false;  // never closed: not math
    body = lines.join("\n");
  }
  if (silent) return true;
  const token = state.push("math_block", "math", 0);
  token.content = body.trim();
  token.map = [startLine, last + 1];
  state.line = last + 1;
  return true;
}

// $x$ inline (pandoc's rule: no space just inside either $, no digit right after
// the closing one, so "$5 and $10" stays text; and no backtick inside, so a `$`
// of inline code never closes it); $$x$$ inline is a display formula.
function mathInline(state, silent) {
  const src = state.src, start = state.pos;
  if (src[start] !== "$") return false;
  const display = src[start + 1] === "$";
  const open = display ? 2 : 1;
  let end = start + open;
  for (;;) {
    end = src.indexOf(display ? "$$" : "$", end);
    if (end < 0) return false;
    if (src[end - 1] !== "\\") break;
    end += 1;
  }
  const body = src.slice(start + open, end);
  if (!body.trim() || body.includes("`")) return false;  // a backtick: the $ closes inside code, so this is no math
  if (!display && (/^\s/.test(body) || /\s$/.test(body) || /[0-9]/.test(src[end + 1] || ""))) return false;
  if (!silent) {
    const token = state.push(display ? "math_display_inline" : "math_inline", "math", 0);
    token.content = body;
  }
  state.pos = end + open;
  return true;
}

// A heading's id: its text, lower case, words joined by '-' (unique on the page).
function slugger() {
  const seen = new Map();
  return (text) => {
    const base = text.toLowerCase().replace(/<[^>]*>/g, "").replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "section";
    const n = seen.get(base) || 0;
    seen.set(base, n + 1);
    return n ? `${base}-${n + 1}` : base;
  };
}

// "lesson 04" in prose becomes a link to lesson 04's page (`lessonHref` maps "04" to
// its address, or null), outside headings, links and code.
function linkLessons(md, lessonHref) {
  md.core.ruler.push("lesson_links", (state) => {
    state.tokens.forEach((block, b) => {
      if (block.type !== "inline" || (b > 0 && state.tokens[b - 1].type === "heading_open")) return;
      const out = [];
      let inLink = 0;
      for (const t of block.children) {
        if (t.type === "link_open") inLink++;
        if (t.type === "link_close") inLink--;
        if (t.type !== "text" || inLink) { out.push(t); continue; }
        let last = 0;
        for (const m of t.content.matchAll(/\b[Ll]esson (\d\d)\b/g)) {
          const href = lessonHref(m[1]);
          if (!href) continue;
          const text = (s) => Object.assign(new state.Token("text", "", 0), { content: s });
          if (m.index > last) out.push(text(t.content.slice(last, m.index)));
          const open = new state.Token("link_open", "a", 1);
          open.attrs = [["href", href]];
          out.push(open, text(m[0]), new state.Token("link_close", "a", -1));
          last = m.index + m[0].length;
        }
        if (last === 0) out.push(t);
        else if (last < t.content.length) out.push(Object.assign(new state.Token("text", "", 0), { content: t.content.slice(last) }));
      }
      block.children = out;
    });
  });
}

// A Markdown renderer for one page. `where` names the source in errors;
// `links` rewrites a link target (lesson -> page, live: -> the live page);
// `headings` collects the page's h2/h3 for its table of contents; `lessonHref`
// links "lesson NN" to its page.
function createMarkdown(where, links, headings, lessonHref) {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false,
                              highlight: (code, lang) => highlight(code, lang || "") });
  md.block.ruler.before("fence", "math_block", mathBlock, { alt: ["paragraph", "reference", "blockquote", "list"] });
  md.inline.ruler.after("escape", "math_inline", mathInline);
  md.renderer.rules.math_block = (tokens, i) => `<div class="math">${tex(tokens[i].content, true, where)}</div>\n`;
  // A long inline formula (it cannot wrap inside its brackets) scrolls inside its own box on a phone.
  md.renderer.rules.math_inline = (tokens, i) => (tokens[i].content.length > 40
    ? `<span class="math-wide">${tex(tokens[i].content, false, where)}</span>` : tex(tokens[i].content, false, where));
  md.renderer.rules.math_display_inline = (tokens, i) => `<span class="math">${tex(tokens[i].content, true, where)}</span>`;
  // Wide tables scroll inside their own box on a phone.
  md.renderer.rules.table_open = () => '<div class="wide"><table>\n';
  md.renderer.rules.table_close = () => "</table></div>\n";
  const slug = slugger();
  md.renderer.rules.heading_open = (tokens, i, options, env, self) => {
    const text = tokens[i + 1].children.filter((t) => t.type === "text" || t.type === "code_inline").map((t) => t.content).join("");
    const id = slug(text);
    tokens[i].attrSet("id", id);
    if (headings && (tokens[i].tag === "h2" || tokens[i].tag === "h3")) headings.push({ level: tokens[i].tag, id, html: md.renderInline(tokens[i + 1].content) });
    return self.renderToken(tokens, i, options);
  };
  const defaultLink = md.renderer.rules.link_open || ((tokens, i, options, env, self) => self.renderToken(tokens, i, options));
  md.renderer.rules.link_open = (tokens, i, options, env, self) => {
    const href = tokens[i].attrGet("href");
    if (links && href) tokens[i].attrSet("href", links(href));
    return defaultLink(tokens, i, options, env, self);
  };
  if (lessonHref) linkLessons(md, lessonHref);
  // Fenced and indented code both scroll inside their own box.
  md.renderer.rules.code_block = (tokens, i) => `<pre class="prose-code"><code>${escapeHtml(tokens[i].content)}</code></pre>\n`;
  return md;
}

module.exports = { createMarkdown, highlight, escapeHtml, slugger };
