// The output folder of a run (`autograd train`, `autograd compare`): its
// files are all from one run, all new or all old, whatever happens to it.
//
//   RunFolder out("runs/digits", {"metrics.csv", "model.ckpt", "curves.png"});
//   out.write("metrics.csv", csv);                      // into a staging folder
//   plot_curves(out.staged("curves.png"), ...);         // anything that writes a file
//   for (const std::string& p : out.commit()) ...       // moved into place together
//
// - One run at a time: the folder is locked (flock on DIR/.autograd.lock) from
//   construction to destruction; a second run into it is refused by name.
// - Nothing is replaced until every file of the run is complete: files are
//   written into DIR/.autograd-run-XXXXXX (mkdtemp) and moved in by commit().
//   A run that fails or is killed before commit() leaves the old files as they
//   were; an output the run did not produce (no gnuplot: no curves.png) is
//   removed at commit, so no old file sits beside new ones.
// - An output that is there but is not a regular file (a symbolic link, a FIFO,
//   a directory) is refused by name, at construction and again at commit():
//   renaming would replace it, and writing through it would write elsewhere.
// - commit() first writes DIR/.autograd-run-XXXXXX/COMMIT, then renames. A run
//   killed during those renames is finished by the next run into DIR (it
//   finds the COMMIT mark and moves the rest); a staging folder without the
//   mark is deleted.
// - Nothing is removed that this program did not make: the lock file holds a
//   journal of the staging folders made in DIR (name, device, inode), and the
//   next run cleans only those, and only while they are still those folders.
//   A user's files that merely look like temporaries (".x.tmp.AB12cd",
//   ".autograd-run-MINE") are never touched; a lock file holding anything but a
//   journal is refused by name rather than overwritten.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace cli {

class RunFolder {
 public:
  // Creates `dir` if needed, takes its lock, recovers or cleans what an earlier
  // killed run left, and makes the staging folder. Throws UsageError naming the
  // folder when it cannot be created or written, or another run holds it.
  RunFolder(std::string dir, std::vector<std::string> outputs);
  // An uncommitted run's staging folder is removed (and the folder itself, if
  // this run created it); the lock is released.
  ~RunFolder();
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  // Where output `name` is written before commit().
  std::string staged(const std::string& name) const;
  // Writes output `name` into the staging folder (ag::write_file_atomic).
  void write(const std::string& name, const std::string& contents) const;
  // Runs write(staged(name)); an error it throws names DIR/NAME, not the staging path.
  void produce(const std::string& name, const std::function<void(const std::string& path)>& write) const;
  // Moves every staged output into the folder and removes the ones this run did
  // not produce. Returns the final paths of the outputs moved in, in order.
  std::vector<std::string> commit();

 private:
  std::string dir_;
  std::vector<std::string> outputs_;
  std::string staging_;
  int lock_fd_ = -1;
  bool committed_ = false;
  bool created_ = false;  // the folder did not exist: a run that fails removes it again
};

}  // namespace cli
