#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image
# (written into the zip by `autograd grade --pack gradescope`; docs/grading.md, "Packs").
# It installs the Debian/Ubuntu packages the project needs (cmake/run.sh's list, the one
# place they are named) and builds a portable grader: AUTOGRAD_NATIVE=OFF, no -march=native,
# because the image is built on one machine and grades on others. The grader is built, not
# shipped, because a prebuilt binary's shared libraries differ between distributions.
# Assumes an apt-based image: Gradescope's Ubuntu 22.04 base, or Debian 12. Any failure stops it.
set -euo pipefail

source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"   # /autograder/source
# A fixed place outside /tmp (the grader keeps its build's folders visible under /tmp too,
# assignments/grading/sandbox.cpp binds them after the fresh /tmp; /opt outlives a cleaned /tmp).
build="${AUTOGRAD_PACK_BUILD:-/opt/autograd-build}"

export DEBIAN_FRONTEND=noninteractive
apt-get update
bash "$source_dir/autograd/cmake/run.sh" packages
apt-get install -y ninja-build   # the generator; cmake/run.sh falls back to make, this does not need to

cmake -S "$source_dir/autograd" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAUTOGRAD_NATIVE=OFF
# The program and the precompiled Armadillo header (each submission compiles in ~3 s, not ~10).
cmake --build "$build" -j "$(nproc)" --target autograd grade_precompiled_header
ln -sf "$build/cli/autograd" /usr/local/bin/autograd

# The grader must start here, with a sandbox, before the image is accepted: a setup that cannot
# grade fails now, loudly, not on the first student's submission.
autograd grade --help >/dev/null
chmod 0755 "$source_dir/run_autograder"
echo "setup.sh: the grader is $build/cli/autograd (portable build), the exercise $(cat "$source_dir/exercise.txt")"
