#!/usr/bin/env bash
# The project's two entry points, for a fresh Debian 12 machine:
#   bash cmake/run.sh main   install what is missing, build, run the main job
#   bash cmake/run.sh test   install what is missing, build, run every test
#   bash cmake/run.sh site   install what is missing, build the course site: build/site/ (every lesson a page)
#   bash cmake/run.sh demo   build the course site, serve it on 127.0.0.1, print its URL
#   bash cmake/run.sh packages   install what is missing for `main`, and stop (the Gradescope pack's setup.sh)
# As root it installs the missing Debian packages itself; otherwise it prints
# the one apt-get line to run.
set -euo pipefail

mode="${1:-main}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AUTOGRAD_BUILD_DIR:-$root/build}"

packages=(cmake g++ make libarmadillo-dev libopenblas-dev libboost-test-dev libboost-program-options-dev
          libboost-iostreams-dev libboost-filesystem-dev libgnuplot-iostream-dev gnuplot-nox graphviz
          libcmark-gfm-dev libcmark-gfm-extensions-dev
          zlib1g-dev wamerican bubblewrap)
# The live page (page/, docs/live-page.md): emscripten builds it, chromium and
# node run its browser tests (a node already on the machine is used as it is).
# The course site (site/, docs/publishing.md) holds the live page, and node and
# npm lay its lessons out.
if [[ "$mode" == test || "$mode" == demo || "$mode" == site ]]; then packages+=(emscripten); fi
# The test command also builds the libraries with Clang and libc++ (tests/libcxx).
if [[ "$mode" == test ]]; then packages+=(chromium clang libc++-dev libc++abi-dev); fi
if [[ "$mode" == demo ]]; then packages+=(python3); fi
if [[ "$mode" == test || "$mode" == demo || "$mode" == site ]] && ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
installed=0
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
    installed=1
  else
    echo "missing packages; run:  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

if [[ "$mode" == packages ]]; then exit 0; fi

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
# configure DIR [cmake options...]: configure when no complete earlier configure
# left its build files behind, when this run installed packages, or when the
# last configure found a program missing (DIR/missing-tools.txt lists them: a
# tree configured by `main` before `test` installed emscripten must find emcc).
configure() {
  local dir="$1"; shift
  if [[ ! -f "$dir/build.ninja" && ! -f "$dir/Makefile" ]]; then
    rm -f "$dir/CMakeCache.txt"
  elif ((!installed)) && [[ ! -s "$dir/missing-tools.txt" ]]; then
    return 0
  fi
  local g=("${generator[@]}")
  # An existing tree keeps the generator it was made with.
  if [[ -f "$dir/CMakeCache.txt" ]]; then g=(); fi
  cmake -S "$root" -B "$dir" "${g[@]}" "$@"
}
configure "$build" -DCMAKE_BUILD_TYPE=Release
# main builds the autograd program and what it links, nothing else: the first run a
# newcomer waits for. site and demo build the course site (the program, the lessons,
# the page; then every lesson runs). test builds everything else (tests, lessons,
# benchmarks) before ctest; the page and the site are built by their own tests.
site_status=0
if [[ "$mode" == main ]]; then
  cmake --build "$build" -j "$(nproc)" --target autograd
elif [[ "$mode" == site || "$mode" == demo ]]; then
  # A lesson whose checks failed is still a page (showing where); the build then exits 1 naming it.
  cmake --build "$build" -j "$(nproc)" --target site || site_status=$?
  [[ -f "$build/site/index.html" ]] || exit "$((site_status ? site_status : 1))"
else
  cmake --build "$build" -j "$(nproc)"
fi

# One BLAS thread: sums come out the same on every run, and ctest -j does not oversubscribe.
export OPENBLAS_NUM_THREADS=1
case "$mode" in
  main)
    # A LayerNorm MLP on the 8x8 digits: a line per epoch, then
    # runs/digits/metrics.csv, runs/digits/curves.png and runs/digits/model.ckpt.
    "$build/cli/autograd" train --dataset digits --hidden 128 --norm layernorm --epochs 20 --out "$root/runs/digits"
    ;;
  test)
    ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
    # Then the whole suite once more under AddressSanitizer + UndefinedBehaviorSanitizer
    # (leaks included; at -O1), in a tree of its own, all but the five lessons that
    # train models (notebooks/CMakeLists.txt says why): built incrementally after the
    # first time. AUTOGRAD_SANITIZE=0 skips it (a quick loop).
    if [[ "${AUTOGRAD_SANITIZE:-1}" != 0 ]]; then
      echo "== the whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer =="
      sanitize="${build}-asan"
      configure "$sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUTOGRAD_SANITIZE=ON
      cmake --build "$sanitize" -j "$(nproc)"
      # A report fails its test: UBSan aborts (-fno-sanitize-recover), ASan and
      # LeakSanitizer exit non-zero, and the CLI tests also see the extra stderr.
      UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir "$sanitize" --output-on-failure -j "$(nproc)"
    fi
    ;;
  site)
    echo "the course: open file://$build/site/index.html  (bash cmake/run.sh demo serves it; docs/publishing.md puts it online)"
    exit "$site_status"
    ;;
  demo)
    # The site is static (it also opens from file://); served on this machine only.
    port="${AUTOGRAD_DEMO_PORT:-8021}"
    if ((site_status)); then echo "(a lesson failed: its page shows which check; serving the site anyway)" >&2; fi
    echo "the course: open http://127.0.0.1:$port/index.html  (or file://$build/site/index.html); Ctrl-C stops"
    exec python3 -m http.server "$port" --bind 127.0.0.1 --directory "$build/site"
    ;;
  *)
    echo "usage: bash cmake/run.sh main|test|site|demo|packages" >&2
    exit 2
    ;;
esac
