// The training page's settings (docs/training-page.md): the keys of its URL
// hash, their defaults, choices and limits, said once here. The page reads
// them from settings_json() and draws its controls from them; a hash becomes
// an ag::RunConfig for the one trainer (train/trainer.h), and the same config
// is written back as the `autograd train` command that reproduces the run.
#pragma once

#include <string>

#include "train/config.h"

namespace playground {

// A bad setting: the message is one line and names the key.
struct SettingsError : ag::Error {
  using ag::Error::Error;
};

// The page's limits: a tab must stay responsive (every size is per step, in the browser).
constexpr long long kMaxDepth = 16, kMaxWidth = 256, kMaxPoints = 2000, kMaxBatch = 2000, kMaxSteps = 100000;

struct Settings {
  ag::RunConfig config;     // what the trainer runs (config.steps: the target, kMaxSteps when none)
  long long depth = 2;      // hidden layers, each `width` wide
  long long width = 16;
  std::string optimizer = "adam";  // sgd, momentum (sgd with 0.9), adam, adamw
  long long target = 0;     // `steps=K`: train K steps and stop; 0: until paused
};

// The defaults, with no key given: moons, 200 points, 2 tanh layers of 16, Adam.
Settings default_settings();

// "dataset=moons&depth=3&lr=0.03" (a leading '#' is skipped; %XX decoded).
// Throws SettingsError for an unknown key, a bad value or one out of its range.
Settings parse_settings(const std::string& hash);

// The command that runs the same training natively, `steps` steps: "autograd train --dataset moons ...".
std::string command_line(const Settings& s, long long steps);

// Every key: its default, its choices or range, and what it means, as JSON for the page.
std::string settings_json();

// `v` with the fewest significant digits that read back as the same double.
std::string shortest(double v);

}  // namespace playground
