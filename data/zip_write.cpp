#include "data/zip_write.h"

#include <zlib.h>

#include <cstdint>
#include <set>

#include "autograd/error.h"
#include "data/atomic_write.h"

namespace ag {

namespace {

constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, the format's first day
constexpr std::uint16_t kUtf8Names = 0x0800;                  // general purpose flag bit 11
constexpr std::uint16_t kMadeByUnix = (3 << 8) | 20;         // host 3 (Unix, so the mode counts), spec 2.0
constexpr std::uint16_t kVersionStored = 10;                  // 1.0: stored, no folders needed

void put16(std::string& out, std::uint32_t v) {
  out += char(v & 0xff);
  out += char((v >> 8) & 0xff);
}
void put32(std::string& out, std::uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

void check_name(const std::string& name, std::set<std::string>& seen) {
  const bool bad = name.empty() || name[0] == '/' || name.back() == '/' || name == ".." ||
                   name.rfind("../", 0) == 0 || name.find("/../") != std::string::npos ||
                   (name.size() >= 3 && name.compare(name.size() - 3, 3, "/..") == 0);
  if (bad) throw DataError("zip: the entry name '" + name + "' is empty, absolute or leaves the archive's folder");
  if (name.size() > 0xffff) throw DataError("zip: the entry name '" + name.substr(0, 80) + "...' is too long");
  if (!seen.insert(name).second) throw DataError("zip: two entries are named '" + name + "'");
}

// The fields a local header and a central directory record share, from "version needed" on.
void common_fields(std::string& out, const ZipEntry& e, std::uint32_t crc) {
  put16(out, kVersionStored);
  put16(out, kUtf8Names);
  put16(out, 0);  // method 0: stored
  put16(out, 0);  // time 00:00
  put16(out, kDosDate);
  put32(out, crc);
  put32(out, std::uint32_t(e.contents.size()));  // compressed size: the same, stored
  put32(out, std::uint32_t(e.contents.size()));
  put16(out, std::uint32_t(e.name.size()));
  put16(out, 0);  // no extra field
}

}  // namespace

std::string zip_bytes(const std::vector<ZipEntry>& entries) {
  if (entries.size() > 0xffff) throw DataError("zip: " + std::to_string(entries.size()) + " entries, over the format's 65535");
  std::set<std::string> seen;
  std::string out, directory;
  for (const ZipEntry& e : entries) {
    check_name(e.name, seen);
    if (e.contents.size() > 0xfffffffeULL || out.size() > 0xfffffffeULL - e.contents.size()) {
      throw DataError("zip: '" + e.name + "' takes the archive past the format's 4 GiB");
    }
    const std::uint32_t crc = std::uint32_t(
        ::crc32(0L, reinterpret_cast<const Bytef*>(e.contents.data()), uInt(e.contents.size())));
    const std::uint32_t offset = std::uint32_t(out.size());
    put32(out, 0x04034b50);  // local file header
    common_fields(out, e, crc);
    out += e.name;
    out += e.contents;

    put32(directory, 0x02014b50);  // central directory record
    put16(directory, kMadeByUnix);
    common_fields(directory, e, crc);
    put16(directory, 0);  // no comment
    put16(directory, 0);  // disk 0
    put16(directory, 0);  // internal attributes
    put32(directory, std::uint32_t(e.executable ? 0100755 : 0100644) << 16);  // a regular file and its mode
    put32(directory, offset);
    directory += e.name;
  }
  const std::uint32_t directory_offset = std::uint32_t(out.size());
  out += directory;
  put32(out, 0x06054b50);  // end of central directory
  put16(out, 0);
  put16(out, 0);
  put16(out, std::uint32_t(entries.size()));
  put16(out, std::uint32_t(entries.size()));
  put32(out, std::uint32_t(directory.size()));
  put32(out, directory_offset);
  put16(out, 0);  // no comment
  return out;
}

void write_zip(const std::string& path, const std::vector<ZipEntry>& entries) {
  write_file_atomic(path, zip_bytes(entries));  // refuses a folder, a link or another odd file at `path`
}

}  // namespace ag
