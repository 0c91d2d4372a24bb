#include "page/playground/session.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "autograd/format.h"
#include "nn/linear.h"
#include "page/explorer/json.h"

namespace playground {

namespace {

std::string text12(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

std::string percent(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * v);
  return buf;
}

// A short number for what is only drawn (the boundary's probabilities): 4 digits.
std::string short_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::vector<arma::mat> weights_of(ag::Sequential& model) {
  std::vector<arma::mat> w;
  for (std::size_t i = 0; i < model.size(); ++i) {
    if (auto* linear = dynamic_cast<ag::Linear*>(&model.layer(i))) w.push_back(linear->weight.value());
  }
  return w;
}

std::string points(const ag::Dataset& d) {
  std::string out = "[";
  for (arma::uword i = 0; i < d.size(); ++i) {
    out += (i ? ",[" : "[") + explorer::number(d.x(i, 0)) + "," + explorer::number(d.x(i, 1)) + "," +
           std::to_string(static_cast<int>(d.y(i))) + "]";
  }
  return out + "]";
}

}  // namespace

Session::Session(const Settings& settings) : settings_(settings) {
  const ag::RunConfig& c = settings_.config;
  try {
    data_ = ag::make_generated(c.dataset, c.seed, c.generated);
    task_ = std::make_unique<ag::TableTask>(c, data_);
    trainer_ = std::make_unique<ag::Trainer>(c, *task_);
    const arma::rowvec lo = arma::min(data_.x, 0), hi = arma::max(data_.x, 0);
    const double pad = 0.1 * std::max(hi(0) - lo(0), hi(1) - lo(1));
    extent_[0] = lo(0) - pad, extent_[1] = hi(0) + pad, extent_[2] = lo(1) - pad, extent_[3] = hi(1) + pad;
  } catch (const ag::Error& e) {
    throw SettingsError(e.what());
  }
}

// A divergence is kept as a message, not thrown: the page shows it and stops.
void Session::advance(long long steps) {
  for (long long k = 0; k < steps && !done(); ++k) {
    before_ = weights_of(task_->model);
    try {
      trainer_->step();
    } catch (const ag::TrainingDiverged& e) {
      diverged_ = "diverged at step " + std::to_string(trainer_->steps()) + ": " + divergence_site() + " (" + e.what() + ")";
    }
  }
}

// The first layer whose output over the training set is not finite, else the first parameter.
std::string Session::divergence_site() {
  ag::Sequential& model = task_->model;
  tape_.clear();
  ag::NoGrad no_grad(tape_);
  model.eval();
  ag::Var x = tape_.constant(task_->split.train.x, "x");
  int layer = 0;
  std::string site;
  for (std::size_t i = 0; i < model.size() && site.empty(); ++i) {
    if (dynamic_cast<ag::Linear*>(&model.layer(i))) ++layer;
    x = model.layer(i)(x);
    if (!x.value().is_finite()) site = "the values stopped being finite in layer " + std::to_string(layer) + " (" + model.layer(i).describe() + ")";
  }
  model.train();
  for (ag::Parameter* p : model.parameters()) {
    if (site.empty() && !p->value().is_finite()) site = "the parameter " + p->name() + " stopped being finite";
  }
  return site.empty() ? "every layer's values are finite, the loss is not" : site;
}

ag::Evaluation Session::train_evaluation() { return ag::evaluate(task_->model, task_->split.train, tape_); }
ag::Evaluation Session::validation_evaluation() { return ag::evaluate(task_->model, task_->split.validation, tape_); }

// Each Linear starts a layer; its norm and activation belong to it; its output is what the next Linear reads.
std::vector<LayerStats> Session::layer_stats() {
  ag::Sequential& model = task_->model;
  tape_.clear();
  ag::NoGrad no_grad(tape_);
  model.eval();
  ag::Var x = tape_.constant(task_->split.train.x, "x");
  std::vector<LayerStats> stats;
  for (std::size_t i = 0; i < model.size(); ++i) {
    x = model.layer(i)(x);
    if (auto* linear = dynamic_cast<ag::Linear*>(&model.layer(i))) {
      LayerStats s;
      s.name = "layer " + std::to_string(stats.size() + 1) + ": " + linear->describe();
      s.grad_norm = arma::norm(linear->weight.grad(), "fro");
      const arma::mat& w = linear->weight.value();
      const arma::mat& old = stats.size() < before_.size() ? before_[stats.size()] : w;
      s.update_ratio = arma::norm(w - old, "fro") / arma::norm(old, "fro");
      stats.push_back(s);
    } else {
      stats.back().name += ", " + model.layer(i).describe();
    }
    stats.back().mean = arma::mean(arma::vectorise(x.value()));
    stats.back().sd = arma::stddev(arma::vectorise(x.value()), 1);
  }
  model.train();
  return stats;
}

arma::mat Session::boundary() {
  arma::mat grid(kGrid * kGrid, 2);
  for (int i = 0; i < kGrid; ++i) {
    for (int j = 0; j < kGrid; ++j) {
      grid(i * kGrid + j, 0) = extent_[0] + (extent_[1] - extent_[0]) * (j + 0.5) / kGrid;
      grid(i * kGrid + j, 1) = extent_[3] - (extent_[3] - extent_[2]) * (i + 0.5) / kGrid;
    }
  }
  ag::Sequential& model = task_->model;
  tape_.clear();
  ag::NoGrad no_grad(tape_);
  model.eval();
  const arma::mat logits = model(tape_.constant(grid, "grid")).value();
  model.train();
  return 1.0 / (1.0 + arma::exp(logits.col(0) - logits.col(1)));  // softmax's class 1 of two
}

std::string Session::report_json() {
  const ag::Evaluation train = train_evaluation(), val = validation_evaluation();
  std::string layers = "[";
  for (const LayerStats& s : layer_stats()) {
    explorer::Object o;
    o.text("name", s.name).num("mean", s.mean).num("sd", s.sd).num("grad_norm", s.grad_norm).num("update_ratio", s.update_ratio);
    layers += (layers.size() > 1 ? "," : "") + o.str();
  }
  std::string grid = "[";
  const arma::mat p = boundary();
  for (arma::uword k = 0; k < p.n_elem; ++k) grid += (k ? "," : "") + short_number(p(k));
  explorer::Object o;
  o.num("step", static_cast<double>(step())).num("target", static_cast<double>(settings_.target));
  o.raw("done", done() ? "true" : "false").text("diverged", diverged_);
  o.num("train_loss", train.loss).text("train_loss_text", text12(train.loss)).num("train_accuracy", train.accuracy);
  o.num("val_loss", val.loss).num("val_accuracy", val.accuracy).text("val_accuracy_text", percent(val.accuracy));
  o.raw("layers", layers + "]").raw("grid", grid + "]").num("grid_size", kGrid);
  o.text("command", command_line(settings_, step()));
  return o.str();
}

// A fresh model of each implementation records one batch's forward and loss:
// what the tape holds for backward differs, the weights do not matter.
std::string Session::tape_json() const {
  explorer::Object out;
  for (ag::Impl impl : ag::impl_kinds()) {
    if (settings_.config.norm == ag::Norm::BatchNorm && impl == ag::Impl::Fused) continue;
    ag::RunConfig c = settings_.config;
    c.impl = impl;
    ag::TableTask task(c, data_);
    const arma::uword rows = std::min<arma::uword>(static_cast<arma::uword>(c.batch_size), task.split.train.size());
    ag::Tape tape;
    double correct = 0;
    task.loss(tape, arma::regspace<arma::uvec>(0, rows - 1), correct);
    explorer::Object o;
    o.num("nodes", static_cast<double>(tape.size())).num("saved_bytes", static_cast<double>(tape.saved_bytes()));
    out.raw(ag::impl_name(impl), o.str());
  }
  return out.str();
}

std::string Session::points_json() const {
  explorer::Object o;
  o.raw("train", points(task_->split.train)).raw("validation", points(task_->split.validation));
  o.raw("extent", "[" + explorer::number(extent_[0]) + "," + explorer::number(extent_[1]) + "," +
                      explorer::number(extent_[2]) + "," + explorer::number(extent_[3]) + "]");
  o.text("model", task_->describe()).num("parameters", static_cast<double>(task_->model.parameter_count()));
  o.raw("tape", tape_json());
  return o.str();
}

namespace {
std::unique_ptr<Session> current;

std::string error_json(const std::string& message) { return explorer::Object().text("error", message).str(); }
}  // namespace

std::string start(const std::string& hash) {
  current.reset();
  try {
    current = std::make_unique<Session>(parse_settings(hash));
    return explorer::Object().raw("points", current->points_json()).raw("report", current->report_json()).str();
  } catch (const ag::Error& e) {
    return error_json(ag::one_line(e.what()));
  }
}

std::string advance(long long steps) {
  if (!current) return error_json("no run: start one first");
  try {
    current->advance(steps);
    return current->report_json();
  } catch (const ag::Error& e) {  // a setting that fails only while training (none known): a message, not a crash
    current.reset();
    return error_json(ag::one_line(e.what()));
  }
}

std::string settings() { return settings_json(); }

namespace {
struct Experiment {
  explicit Experiment(const Settings& settings) : session(settings), initial(session.train_evaluation().loss) {}
  Session session;
  double initial;
};
std::unique_ptr<Experiment> experiment;

std::string experiment_summary(Session& s, double initial) {
  const ag::Evaluation end = s.train_evaluation(), val = s.validation_evaluation();
  std::string grads = "[";
  for (const LayerStats& l : s.layer_stats()) grads += (grads.size() > 1 ? "," : "") + explorer::number(l.grad_norm);
  explorer::Object o;
  o.raw("done", "true").num("initial", initial).num("final", s.diverged().empty() ? end.loss : std::numeric_limits<double>::quiet_NaN());
  o.num("val_accuracy", val.accuracy).num("steps", static_cast<double>(s.step())).raw("grad_norms", grads + "]");
  return o.text("diverged", s.diverged()).str();
}
}  // namespace

std::string experiment_start(const std::string& hash) {
  experiment.reset();
  try {
    experiment = std::make_unique<Experiment>(parse_settings(hash));
    return explorer::Object().raw("started", "true").str();
  } catch (const ag::Error& e) {
    return error_json(ag::one_line(e.what()));
  }
}

std::string experiment_advance(long long steps) {
  if (!experiment) return error_json("no experiment run: start one first");
  try {
    Session& s = experiment->session;
    s.advance(steps);
    if (!s.done()) return explorer::Object().raw("done", "false").num("step", static_cast<double>(s.step())).str();
    const std::string summary = experiment_summary(s, experiment->initial);
    experiment.reset();
    return summary;
  } catch (const ag::Error& e) {
    experiment.reset();
    return error_json(ag::one_line(e.what()));
  }
}

std::string run_to_end(const std::string& hash) {
  const std::string started = experiment_start(hash);
  if (started.find("\"error\"") != std::string::npos) return started;
  for (;;) {
    const std::string r = experiment_advance(1000);
    if (r.find("\"done\":false") == std::string::npos) return r;
  }
}

}  // namespace playground
