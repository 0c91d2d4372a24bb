// Rendering a lesson: its source cells (jupytext "percent" format) interleaved
// with what its program printed and drew, as Markdown and as one HTML file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace render {

// One piece of a code cell's output: printed text or a PNG it drew.
struct CellOutput {
  bool is_image = false;
  std::string text;  // the printed lines, or the image's file name
};

struct NotebookCell {
  bool markdown = false;
  std::string text;           // prose without the leading "// ", or the code
  int first_line = 0;         // source lines the cell spans (1-based, inclusive)
  int last_line = 0;
  std::vector<CellOutput> output;
};

// Splits a lesson's source at its "// %%" lines.
std::vector<NotebookCell> parse_notebook(const std::string& source);

// Puts each part of the program's stdout under the code cell that printed it.
// Throws ag::Error when a marker names a line outside every code cell.
void attach_output(std::vector<NotebookCell>& cells, const std::string& program_output);

// Markdown: prose as it is, code in ```cpp blocks, output in ```text blocks,
// plots as ![name](images_folder/name.png).
std::string to_markdown(const std::vector<NotebookCell>& cells, const std::string& images_folder);

// One self-contained HTML page: the plots are embedded (base64), read from images_path.
std::string to_html(const std::vector<NotebookCell>& cells, const std::string& title,
                    const std::string& images_path);

// The lessons in `source_dir`: its NN_name.cpp files, by name, in order
// (a DataError when it is no folder).
std::vector<std::string> lesson_names(const std::filesystem::path& source_dir);

// Runs BIN/notebook_NAME into a private folder beside OUT; only once it has
// succeeded do its plots, OUT/NAME.md and OUT/NAME.html replace the last
// render's (a failing lesson leaves the last good render as it was), all
// together or none: a target that cannot be replaced (a directory where
// NAME.html goes) is a DataError naming it, and the old files stay as they were.
void render_lesson(const std::string& name, const std::filesystem::path& source_dir,
                   const std::filesystem::path& bin_dir, const std::filesystem::path& out_dir, bool md, bool html);

}  // namespace render
