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
  std::string alt;   // an image's alt text (what the plot shows), from its marker
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

// The cells as JSON, for the course site (site/build.js): {"lesson", "failed_checks",
// "cells": [{"kind": "markdown"|"code", "text", "first_line", "last_line",
// "output": [{"text"} or {"image", "alt"}]}]}.
std::string to_json(const std::vector<NotebookCell>& cells, const std::string& lesson);

// The lines of the program's output that start "check FAILED: " (--explore), in order.
std::vector<std::string> failed_checks(const std::vector<NotebookCell>& cells);

// The lessons in `source_dir`: its NN_name.cpp files, by name, in order
// (a DataError when it is no folder).
std::vector<std::string> lesson_names(const std::filesystem::path& source_dir);

// Which files a render writes: NAME.md, NAME.html, NAME.json.
struct Formats {
  bool md = true, html = true, json = false;
};

// Runs BIN/notebook_NAME --explore into a private folder beside OUT; only once
// it has run every cell do its plots and OUT/NAME.{md,html,json} replace the
// last render's, all together or none: a target that cannot be replaced (a
// directory where NAME.html goes) is a DataError naming it, and the old files
// stay as they were. A lesson whose checks failed (it printed "check FAILED: ..."
// and exited 1) is written with its failures shown, then reported: an
// ag::Error naming the lesson and its first failed check. A lesson that failed
// otherwise (a crash, a missing program) leaves the last good render as it was.
void render_lesson(const std::string& name, const std::filesystem::path& source_dir,
                   const std::filesystem::path& bin_dir, const std::filesystem::path& out_dir, Formats formats);

}  // namespace render
