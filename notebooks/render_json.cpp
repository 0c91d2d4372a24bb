// A rendered lesson as JSON: the course site's build (site/build.js) reads it
// and lays the cells out as a web page (typeset math, highlighted code, folded checks).
#include <cstdio>
#include <sstream>

#include "autograd/text.h"
#include "notebooks/render.h"

namespace render {

namespace {

void write_output(std::ostringstream& json, const CellOutput& out) {
  if (out.is_image) {
    json << "{\"image\": " << ag::json_string(out.text) << ", \"alt\": " << ag::json_string(out.alt) << "}";
  } else {
    json << "{\"text\": " << ag::json_string(out.text) << "}";
  }
}

}  // namespace

std::string to_json(const std::vector<NotebookCell>& cells, const std::string& lesson) {
  std::ostringstream json;
  json << "{\"lesson\": " << ag::json_string(lesson) << ",\n \"failed_checks\": [";
  const std::vector<std::string> failed = failed_checks(cells);
  for (std::size_t i = 0; i < failed.size(); ++i) json << (i ? ", " : "") << ag::json_string(failed[i]);
  json << "],\n \"cells\": [\n";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const NotebookCell& cell = cells[i];
    json << (i ? ",\n" : "") << "  {\"kind\": " << (cell.markdown ? "\"markdown\"" : "\"code\"")
         << ", \"first_line\": " << cell.first_line << ", \"last_line\": " << cell.last_line
         << ", \"text\": " << ag::json_string(cell.text) << ", \"output\": [";
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
