// The HTML page of a rendered lesson: the prose through cmark-gfm (Debian's
// libcmark-gfm: headings, lists, tables, code, emphasis, links), <pre> for
// code and output, plots embedded as base64 PNGs so the page is one
// self-contained file.
#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "notebooks/render.h"

namespace render {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string base64(const std::string& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (unsigned char)bytes[i] << 16 | (unsigned char)bytes[i + 1] << 8 | (unsigned char)bytes[i + 2];
    out += {table[v >> 18 & 63], table[v >> 12 & 63], table[v >> 6 & 63], table[v & 63]};
  }
  if (i + 1 == bytes.size()) {
    const unsigned v = (unsigned char)bytes[i] << 16;
    out += {table[v >> 18 & 63], table[v >> 12 & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    const unsigned v = (unsigned char)bytes[i] << 16 | (unsigned char)bytes[i + 1] << 8;
    out += {table[v >> 18 & 63], table[v >> 12 & 63], table[v >> 6 & 63], '='};
  }
  return out;
}

// The prose of a Markdown cell as HTML, by cmark-gfm (CommonMark plus GitHub's
// tables, strikethrough and autolinks). Raw HTML in the prose is not passed
// through (CMARK_OPT_DEFAULT is the safe mode).
std::string prose_to_html(const std::string& text) {
  cmark_gfm_core_extensions_ensure_registered();
  std::unique_ptr<cmark_parser, void (*)(cmark_parser*)> parser(cmark_parser_new(CMARK_OPT_DEFAULT),
                                                                 cmark_parser_free);
  for (const char* name : {"table", "strikethrough", "autolink"}) {
    if (cmark_syntax_extension* extension = cmark_find_syntax_extension(name)) {
      cmark_parser_attach_syntax_extension(parser.get(), extension);
    }
  }
  cmark_parser_feed(parser.get(), text.data(), text.size());
  std::unique_ptr<cmark_node, void (*)(cmark_node*)> document(cmark_parser_finish(parser.get()), cmark_node_free);
  std::unique_ptr<char, void (*)(void*)> html(
      cmark_render_html(document.get(), CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(parser.get())),
      std::free);
  return html ? std::string(html.get()) : std::string();
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace

std::string to_html(const std::vector<NotebookCell>& cells, const std::string& title,
                    const std::string& images_path) {
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << escape(title) << "</title>\n"
       << "<style>body{max-width:60rem;margin:2rem auto;font-family:sans-serif;line-height:1.45;padding:0 1rem}"
       << "pre{padding:.6rem;margin:.2rem 0;overflow-x:auto;font-size:.85rem;background:#f8f8f8}pre.code{background:#f4f4f8;border-left:3px solid #557}"
       << "pre.output{background:#fff;border-left:3px solid #aaa}pre code{background:none;padding:0}"
       << "img{max-width:100%;display:block;margin:.5rem 0}code{background:#f0f0f0;padding:0 .2rem}"
       << "table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #ccc;padding:.2rem .6rem}"
       << "th{background:#f4f4f8}</style>\n"
       << "</head><body>\n";
  for (const NotebookCell& cell : cells) {
    if (cell.markdown) {
      html << prose_to_html(cell.text);
      continue;
    }
    html << "<pre class=\"code\">" << escape(cell.text) << "</pre>\n";
    for (const CellOutput& out : cell.output) {
      if (out.is_image) {
        html << "<img alt=\"" << escape(out.alt) << "\" src=\"data:image/png;base64,"
             << base64(read_bytes(images_path + "/" + out.text)) << "\">\n";
      } else {
        html << "<pre class=\"output\">" << escape(out.text) << "</pre>\n";
      }
    }
  }
  html << "</body></html>\n";
  return html.str();
}

}  // namespace render
