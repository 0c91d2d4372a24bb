#include "data/resources.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "autograd/error.h"

namespace ag {

namespace fs = std::filesystem;

std::string installed_prefix() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);  // PREFIX/bin/autograd
  if (ec) return "";
  const fs::path prefix = self.parent_path().parent_path();
  return fs::is_directory(prefix / AUTOGRAD_INSTALL_DATADIR, ec) ? prefix.string() : "";
}

std::string source_tree() {
  const fs::path root = AUTOGRAD_SOURCE_DIR;
  std::error_code ec;
  if (fs::is_regular_file(root / "CMakeLists.txt", ec) && fs::is_regular_file(root / "cmake" / "run.sh", ec)) {
    return root.string();
  }
  throw DataError("the source tree this program was built from (" + root.string() +
                  ") is not there; run the autograd of a build of a source checkout");
}

std::string shipped_file(const std::string& relative) {
  std::vector<fs::path> places;
  if (const char* dir = std::getenv("AUTOGRAD_DATA_DIR"); dir != nullptr && *dir != '\0') {
    places.push_back(fs::path(dir) / relative);
  }
  if (const std::string prefix = installed_prefix(); !prefix.empty()) {
    places.push_back(fs::path(prefix) / AUTOGRAD_INSTALL_DATADIR / relative);
  }
  places.push_back(fs::path(AUTOGRAD_SOURCE_DIR) / relative);
  std::string looked;
  for (const fs::path& p : places) {
    std::error_code ec;
    if (fs::exists(p, ec)) return p.string();
    looked += (looked.empty() ? "" : ", ") + p.string();
  }
  throw DataError("cannot find the shipped file " + relative + " (looked in " + looked +
                  "; set AUTOGRAD_DATA_DIR to the folder that holds it)");
}

}  // namespace ag
