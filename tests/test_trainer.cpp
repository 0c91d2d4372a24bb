// The one trainer (train/trainer.h) on a task made up here: its callbacks come
// in order (an evaluation before the first step, steps, an evaluation every half
// epoch, the checkpoint last), the
// rows say where they were taken, the schedule is set before every step; and
// the configuration refuses a bad value once, with one line naming the field.
#define BOOST_TEST_MODULE trainer
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "autograd/memory.h"
#include "ops/ops.h"
#include "train/shards.h"
#include "train/trainer.h"

namespace tt = boost::test_tools;

namespace {

// Fits one number w to the samples 0, 1, ..., 9 by mean squared error: the loss
// of a shard is mean((w - r)^2) over its rows r; evaluation is the loss at w on all ten.
class FakeTask : public ag::TrainingTask {
 public:
  std::size_t train_size() const override { return 10; }
  std::size_t shard_size() const override { return 2; }
  double weight(const arma::uvec& rows) const override { return static_cast<double>(rows.n_elem); }
  ag::Var loss(ag::Tape& tape, const arma::uvec& rows, double& correct) override {
    ag::Var x = tape.constant(arma::conv_to<arma::mat>::from(rows), "r");
    ag::Var d = x - ag::matmul(tape.constant(arma::ones(rows.n_elem, 1), "1"), tape.param(w));
    correct += static_cast<double>(rows.n_elem);  // every prediction "correct": the accuracy columns are 1
    return ag::mean(d * d) + tape.constant(arma::mat(1, 1, arma::fill::value(poison)), "poison");
  }
  bool classifies() const override { return true; }
  ag::Evaluation evaluate(ag::ShardRunner&) override {
    events.push_back("eval");
    const double v = w.value()(0);
    double sum = 0;
    for (int r = 0; r < 10; ++r) sum += (v - r) * (v - r);
    return {sum / 10, 1.0};
  }
  std::vector<ag::Parameter*> parameters() override { return {&w}; }
  std::string describe() const override { return "w"; }
  std::string data_summary() const override { return ""; }
  std::string result_summary(const std::vector<ag::Metrics>&) override { return "w\n"; }
  std::string title() const override { return "w"; }
  ag::PlotStyle plot_style() const override { return {}; }
  std::string checkpoint_description() const override { return "format=fake"; }

  ag::Parameter w{"w", arma::mat(1, 1, arma::fill::zeros)};
  double poison = 0;  // NaN: the loss diverges
  std::vector<std::string> events;
};


ag::RunConfig config() {
  ag::RunConfig c;
  c.optimizer = ag::OptimizerKind::SGD;
  c.momentum = 0;
  c.lr = 0.1;
  c.epochs = 2;
  c.batch_size = 3;  // 4 steps an epoch: 3, 3, 3, 1
  c.evals_per_epoch = 2;
  c.threads = 2;
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(callbacks_come_in_order_and_rows_say_where_they_were_taken) {
  FakeTask task;
  ag::TrainCallbacks callbacks;
  std::vector<double> rates;
  callbacks.on_step = [&](const ag::StepInfo& s) {
    task.events.push_back("step " + std::to_string(s.epoch) + "." + std::to_string(s.step) + "/" + std::to_string(s.steps));
  };
  std::vector<ag::Metrics> seen;
  callbacks.on_eval = [&](const ag::Metrics& m) { seen.push_back(m); };
  callbacks.on_checkpoint = [&](ag::TrainingTask& t, const ag::Metrics& last) {
    task.events.push_back("checkpoint " + t.describe() + " at step " + std::to_string(last.step));
  };
  const std::vector<ag::Metrics> history = ag::train(config(), task, callbacks);
  const std::vector<std::string> expected = {
      "eval", "step 1.1/4", "step 1.2/4", "eval", "step 1.3/4", "step 1.4/4", "eval",
      "step 2.1/4", "step 2.2/4", "eval", "step 2.3/4", "step 2.4/4", "eval", "checkpoint w at step 8"};
  BOOST_TEST(task.events == expected, tt::per_element());
  BOOST_TEST_REQUIRE(history.size() == 5u);
  BOOST_TEST_REQUIRE(seen.size() == 5u);
  const std::vector<long long> steps = {0, 2, 4, 6, 8};
  const std::vector<double> epochs = {0, 0.5, 1.0, 1.5, 2.0};
  for (std::size_t i = 0; i < history.size(); ++i) {
    BOOST_TEST(history[i].step == steps[i]);
    BOOST_TEST(history[i].epoch == epochs[i]);
    BOOST_TEST(seen[i].val_loss == history[i].val_loss);
    BOOST_TEST(history[i].train_accuracy == 1.0);
  }
  BOOST_TEST(history.back().val_loss < history.front().val_loss);  // w moved towards 4.5
  BOOST_TEST(task.w.value()(0) > 1.0);
}

// makemore's first check (the first loss against log V) needs the loss before any step:
// row 0 holds it, the validation set's and the first batch's, both at the initial weights.
BOOST_AUTO_TEST_CASE(the_first_row_is_step_0_the_loss_before_any_step) {
  FakeTask task;
  ag::TrainCallbacks callbacks;
  double first_batch = std::nan("");
  callbacks.on_step = [&](const ag::StepInfo& s) {
    if (s.epoch == 1 && s.step == 1) first_batch = s.loss;  // the first batch's loss at w = 0
  };
  const std::vector<ag::Metrics> history = ag::train(config(), task, callbacks);
  BOOST_TEST_REQUIRE(history.size() == 5u);
  BOOST_TEST(history[0].step == 0);
  BOOST_TEST(history[0].epoch == 0.0);
  BOOST_TEST(history[0].val_loss == 28.5);  // mean of r^2 over 0..9: w = 0, before any step
  BOOST_TEST(history[0].train_loss == first_batch);
  BOOST_TEST(history[0].train_accuracy == 1.0);
  BOOST_TEST(history[1].val_loss < history[0].val_loss);
  const std::string csv = ag::metrics_csv(history, ag::TimeAxis::Step);
  BOOST_TEST(csv.substr(csv.find('\n') + 1, 4) == "0,0,");  // the CSV's first row is step 0, epoch 0
}

// ag::train is a library function: malloc's settings stay as the program left them
// (this one never asks, autograd/memory.h).
BOOST_AUTO_TEST_CASE(training_changes_no_process_wide_setting) {
  FakeTask task;
  ag::train(config(), task);
  BOOST_TEST(!ag::memory_policy_chosen());
}

BOOST_AUTO_TEST_CASE(one_or_two_threads_give_the_same_bits) {
  FakeTask one, two;
  ag::RunConfig c = config();
  c.threads = 1;
  const std::vector<ag::Metrics> a = ag::train(c, one);
  c.threads = 2;
  const std::vector<ag::Metrics> b = ag::train(c, two);
  for (std::size_t i = 0; i < a.size(); ++i) BOOST_TEST(a[i].train_loss == b[i].train_loss);
  BOOST_TEST(one.w.value()(0) == two.w.value()(0));
}

BOOST_AUTO_TEST_CASE(a_nan_loss_stops_before_the_step_and_names_it) {
  FakeTask task;
  task.poison = std::numeric_limits<double>::quiet_NaN();
  try {
    ag::train(config(), task);
    BOOST_FAIL("expected TrainingDiverged");
  } catch (const ag::TrainingDiverged& e) {
    BOOST_TEST(std::string(e.what()) == "the loss became NaN at epoch 1, step 1 of 4 (try a smaller learning rate)");
  }
  BOOST_TEST(task.w.value()(0) == 0.0);  // no update from a NaN gradient
  const std::vector<std::string> only_before = {"eval"};
  BOOST_TEST(task.events == only_before, tt::per_element());  // and no evaluation after step 0's
}

BOOST_AUTO_TEST_CASE(the_config_refuses_a_bad_value_with_one_line_naming_the_field) {
  struct Bad {
    void (*set)(ag::RunConfig&);
    std::string field, message;
  };
  const std::vector<Bad> bad = {
      {[](ag::RunConfig& c) { c.epochs = 0; }, "epochs", "epochs must be from 1 to 1000000, got 0"},
      {[](ag::RunConfig& c) { c.lr = std::nan(""); }, "lr", "lr must be a positive number, got nan"},
      {[](ag::RunConfig& c) { c.batch_size = -1; }, "batch_size", "batch_size must be at least 1, got -1"},
      {[](ag::RunConfig& c) { c.validation_fraction = 1; }, "validation_fraction", "validation_fraction must be in [0, 1), got 1"},
      {[](ag::RunConfig& c) { c.weight_decay = 2000; }, "weight_decay",
       "weight_decay 2000 with lr 0.001: the weights shrink by lr x weight decay a step, which must be below 1 (it is 2)"},
      {[](ag::RunConfig& c) { c.hidden = {8, 0}; }, "hidden", "hidden sizes must be from 1 to 999999"},
  };
  for (const Bad& b : bad) {
    ag::RunConfig c;
    b.set(c);
    try {
      c.validate();
      BOOST_ERROR("accepted: " + b.field);
    } catch (const ag::ConfigError& e) {
      BOOST_TEST(e.field == b.field);
      BOOST_TEST(std::string(e.what()) == b.message);
      BOOST_TEST(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
  FakeTask task;
  ag::RunConfig c = config();
  c.epochs = 0;
  BOOST_CHECK_THROW(ag::train(c, task), ag::ConfigError);  // train() refuses it too, before any step
  BOOST_TEST(task.events.empty());
}

BOOST_AUTO_TEST_CASE(the_gpt_config_refuses_what_only_an_mlp_takes_and_spells_fields_as_asked) {
  ag::RunConfig c = ag::gpt_config();
  BOOST_CHECK_NO_THROW(c.validate());
  c.optimizer = ag::OptimizerKind::SGD;
  const auto spell = [](const std::string& field) { return "<" + field + ">"; };
  try {
    c.validate(spell);
    BOOST_FAIL("sgd accepted for a GPT");
  } catch (const ag::ConfigError& e) {
    BOOST_TEST(std::string(e.what()) == "<optimizer> 'sgd' is not one of adam, adamw (<model> gpt)");
  }
  c = ag::gpt_config();
  c.width = 10;
  BOOST_CHECK_THROW(c.validate(), ag::ConfigError);
  c = ag::gpt_config();
  c.norm = ag::Norm::None;
  BOOST_CHECK_THROW(c.validate(), ag::ConfigError);
}

BOOST_AUTO_TEST_CASE(one_schedule_for_both_models) {
  ag::RunConfig mlp;
  mlp.schedule = ag::Schedule::Kind::Cosine;
  mlp.lr = 0.1;
  mlp.epochs = 10;
  const ag::Schedule m = ag::make_schedule(mlp, 450);
  BOOST_TEST(!ag::schedule_in_steps(mlp));
  BOOST_TEST(m.at(0) == 0.1);
  BOOST_TEST(m.at(5) == 0.05, tt::tolerance(1e-14));  // per epoch, to 0 at epoch 10
  ag::RunConfig gpt = ag::gpt_config();
  const ag::Schedule g = ag::make_schedule(gpt, 3594);
  BOOST_TEST(ag::schedule_in_steps(gpt));
  BOOST_TEST(g.at(0) == 3e-3 / 200, tt::tolerance(1e-14));  // warm-up
  BOOST_TEST(g.at(199) == 3e-3, tt::tolerance(1e-14));
  BOOST_TEST(g.at(3593) == 3e-4, tt::tolerance(1e-12));     // lr / 10 at the last step
}
