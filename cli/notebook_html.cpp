// The HTML page of a rendered lesson: a small Markdown subset for the prose
// (headings, paragraphs, lists, tables kept as text, fenced code, `code`,
// **bold**), <pre> for code and output, plots embedded as base64 PNGs so the
// page is one self-contained file.
#include <fstream>
#include <sstream>

#include "cli/notebook_render.h"

namespace cli {

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

// `code` and **bold** inside one line of prose (already a single paragraph line).
std::string inline_markup(const std::string& line) {
  std::string out;
  bool code = false, bold = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '`') {
      out += code ? "</code>" : "<code>";
      code = !code;
    } else if (!code && line.compare(i, 2, "**") == 0) {
      out += bold ? "</b>" : "<b>";
      bold = !bold;
      ++i;
    } else {
      out += escape(std::string(1, line[i]));
    }
  }
  if (code) out += "</code>";
  if (bold) out += "</b>";
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

std::string prose_to_html(const std::string& text) {
  std::ostringstream html;
  std::istringstream in(text);
  std::string line;
  bool in_list = false, in_code = false, in_para = false;
  auto close_blocks = [&]() {
    if (in_para) html << "</p>\n";
    if (in_list) html << "</ul>\n";
    in_para = in_list = false;
  };
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      close_blocks();
      html << (in_code ? "</pre>\n" : "<pre class=\"prose\">");
      in_code = !in_code;
    } else if (in_code) {
      html << escape(line) << "\n";
    } else if (line.rfind("    ", 0) == 0) {  // an indented code block (formulas)
      close_blocks();
      html << "<pre class=\"prose\">" << escape(line.substr(4)) << "</pre>\n";
    } else if (line.empty()) {
      close_blocks();
    } else if (line[0] == '#') {
      close_blocks();
      const std::size_t level = std::min<std::size_t>(line.find_first_not_of('#'), 6);
      html << "<h" << level << ">" << inline_markup(line.substr(level + 1)) << "</h" << level << ">\n";
    } else if (line.rfind("- ", 0) == 0 || line.rfind("* ", 0) == 0) {
      if (in_para) html << "</p>\n";
      in_para = false;
      if (!in_list) html << "<ul>\n";
      in_list = true;
      html << "<li>" << inline_markup(line.substr(2)) << "</li>\n";
    } else if (line[0] == '|') {
      close_blocks();
      html << "<pre class=\"prose\">" << escape(line) << "</pre>\n";
    } else {
      if (!in_para && !in_list) html << "<p>";
      in_para = in_para || !in_list;
      html << inline_markup(line) << "\n";
    }
  }
  close_blocks();
  if (in_code) html << "</pre>\n";
  return html.str();
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
       << "pre{padding:.6rem;margin:.2rem 0;overflow-x:auto;font-size:.85rem}pre.code{background:#f4f4f8;border-left:3px solid #557}"
       << "pre.output{background:#fff;border-left:3px solid #aaa}pre.prose{background:#f8f8f8}"
       << "img{max-width:100%;display:block;margin:.5rem 0}code{background:#f0f0f0;padding:0 .2rem}</style>\n"
       << "</head><body>\n";
  for (const NotebookCell& cell : cells) {
    if (cell.markdown) {
      html << prose_to_html(cell.text);
      continue;
    }
    html << "<pre class=\"code\">" << escape(cell.text) << "</pre>\n";
    for (const CellOutput& out : cell.output) {
      if (out.is_image) {
        html << "<img alt=\"" << escape(out.text) << "\" src=\"data:image/png;base64,"
             << base64(read_bytes(images_path + "/" + out.text)) << "\">\n";
      } else {
        html << "<pre class=\"output\">" << escape(out.text) << "</pre>\n";
      }
    }
  }
  html << "</body></html>\n";
  return html.str();
}

}  // namespace cli
