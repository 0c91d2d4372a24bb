// The marker lines a notebook program prints and the renderer looks for.
// Shared by notebooks/notebook.cpp (writes them) and notebooks/render.cpp
// (splits the output at them). Each marker is a whole line of stdout.
#pragma once

namespace nb {

// "<<<nb:cell 42>>>": the output that follows belongs to the NB_CELL on source line 42.
inline constexpr const char* kCellMarker = "<<<nb:cell ";
// "<<<nb:image loss.png | Plot: ...>>>": the cell drew this PNG (a file in the images
// folder); after kImageAlt, its alt text (one line, no '>').
inline constexpr const char* kImageMarker = "<<<nb:image ";
inline constexpr const char* kImageAlt = " | ";
inline constexpr const char* kMarkerEnd = ">>>";
// A failed check under --explore: "check FAILED: MESSAGE  [line N]".
inline constexpr const char* kCheckFailed = "check FAILED: ";

}  // namespace nb
