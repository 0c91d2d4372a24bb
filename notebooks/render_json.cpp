// A rendered lesson as JSON: the course site's build (site/build.js) reads it
// and lays the cells out as a web page (typeset math, highlighted code, folded checks).
#include <cstdio>
#include <sstream>

#include "notebooks/render.h"

namespace render {

namespace {

// A JSON string: quotes, backslashes and control characters escaped; UTF-8 passes through.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned char>(c));
      out += code;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void write_output(std::ostringstream& json, const CellOutput& out) {
  if (out.is_image) {
    json << "{\"image\": " << quoted(out.text) << ", \"alt\": " << quoted(out.alt) << "}";
  } else {
    json << "{\"text\": " << quoted(out.text) << "}";
  }
}

}  // namespace

std::string to_json(const std::vector<NotebookCell>& cells, const std::string& lesson) {
  std::ostringstream json;
  json << "{\"lesson\": " << quoted(lesson) << ",\n \"failed_checks\": [";
  const std::vector<std::string> failed = failed_checks(cells);
  for (std::size_t i = 0; i < failed.size(); ++i) json << (i ? ", " : "") << quoted(failed[i]);
  json << "],\n \"cells\": [\n";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const NotebookCell& cell = cells[i];
    json << (i ? ",\n" : "") << "  {\"kind\": " << (cell.markdown ? "\"markdown\"" : "\"code\"")
         << ", \"first_line\": " << cell.first_line << ", \"last_line\": " << cell.last_line
         << ", \"text\": " << quoted(cell.text) << ", \"output\": [";
    for (std::size_t k = 0; k < cell.output.size(); ++k) {
      json << (k ? ", " : "");
      write_output(json, cell.output[k]);
    }
    json << "]}";
  }
  json << "\n]}\n";
  return json.str();
}

}  // namespace render
