#include "notebooks/render.h"

#include <sstream>
#include "autograd/error.h"
#include "notebooks/markers.h"

namespace render {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// A prose line: "// text" -> "text", "//" -> "".
std::string uncomment(const std::string& line) {
  if (starts_with(line, "// ")) return line.substr(3);
  if (starts_with(line, "//")) return line.substr(2);
  return line;
}

std::string trim_blank_lines(const std::string& text) {
  std::size_t begin = 0;
  while (begin < text.size() && text[begin] == '\n') ++begin;
  std::size_t end = text.size();
  while (end > begin && (text[end - 1] == '\n' || text[end - 1] == ' ')) --end;
  return text.substr(begin, end - begin);
}

void finish(std::vector<NotebookCell>& cells, NotebookCell& cell, int last_line) {
  cell.last_line = last_line;
  cell.text = trim_blank_lines(cell.text);
  if (!cell.text.empty() || cell.markdown) cells.push_back(cell);
}

// "<<<nb:cell 42>>>" -> "42"; empty when the line is not that marker.
std::string marker_value(const std::string& line, const char* marker) {
  const std::string end = nb::kMarkerEnd;
  if (!starts_with(line, marker) || line.size() < end.size() ||
      line.compare(line.size() - end.size(), end.size(), end) != 0) {
    return "";
  }
  const std::size_t begin = std::string(marker).size();
  return line.substr(begin, line.size() - end.size() - begin);
}

// Alt text inside ![...]: its brackets escaped.
std::string markdown_alt(const std::string& alt) {
  std::string out;
  for (char c : alt) {
    if (c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::vector<NotebookCell> parse_notebook(const std::string& source) {
  std::vector<NotebookCell> cells;
  NotebookCell cell;  // text before the first "// %%" is a code cell
  cell.first_line = 1;
  std::istringstream in(source);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (starts_with(line, "// %%")) {
      finish(cells, cell, number - 1);
      cell = NotebookCell{};
      cell.markdown = line.find("[markdown]") != std::string::npos;
      cell.first_line = number + 1;
      continue;
    }
    cell.text += (cell.markdown ? uncomment(line) : line) + "\n";
  }
  finish(cells, cell, number);
  return cells;
}

void attach_output(std::vector<NotebookCell>& cells, const std::string& program_output) {
  NotebookCell* current = nullptr;
  std::string pending;  // printed lines not yet stored
  auto flush_text = [&]() {
    if (current == nullptr || pending.empty()) return;
    current->output.push_back({false, pending, ""});  // printed text has no alt
    pending.clear();
  };
  std::istringstream in(program_output);
  std::string line;
  while (std::getline(in, line)) {
    const std::string cell_line = marker_value(line, nb::kCellMarker);
    const std::string image = marker_value(line, nb::kImageMarker);
    if (!cell_line.empty()) {
      flush_text();
      const int at = std::stoi(cell_line);
      current = nullptr;
      for (NotebookCell& c : cells) {
        if (!c.markdown && c.first_line <= at && at <= c.last_line) current = &c;
      }
      if (current == nullptr) {
        throw ag::Error("the program ran a cell at line " + cell_line +
                                 ", which is not inside any code cell of the source");
      }
    } else if (!image.empty()) {
      flush_text();
      if (current == nullptr) throw ag::Error("a plot was drawn before the first cell");
      const std::size_t alt = image.find(nb::kImageAlt);  // older lessons print no alt text
      if (alt == std::string::npos) {
        current->output.push_back({true, image, image});
      } else {
        current->output.push_back(
            {true, image.substr(0, alt), image.substr(alt + std::string(nb::kImageAlt).size())});
      }
    } else {
      pending += line + "\n";
    }
  }
  flush_text();
}

std::string to_markdown(const std::vector<NotebookCell>& cells, const std::string& images_folder) {
  std::ostringstream md;
  for (const NotebookCell& cell : cells) {
    if (cell.markdown) {
      md << cell.text << "\n\n";
      continue;
    }
    md << "```cpp\n" << cell.text << "\n```\n\n";
    for (const CellOutput& out : cell.output) {
      if (out.is_image) {
        md << "![" << markdown_alt(out.alt) << "](" << images_folder << "/" << out.text << ")\n\n";
      } else {
        md << "```text\n" << out.text << "```\n\n";
      }
    }
  }
  return md.str();
}

std::vector<std::string> failed_checks(const std::vector<NotebookCell>& cells) {
  std::vector<std::string> failed;
  for (const NotebookCell& cell : cells) {
    for (const CellOutput& out : cell.output) {
      if (out.is_image) continue;
      std::istringstream in(out.text);
      for (std::string line; std::getline(in, line);) {
        if (starts_with(line, nb::kCheckFailed)) failed.push_back(line);
      }
    }
  }
  return failed;
}

}  // namespace render
