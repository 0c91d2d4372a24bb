// Training end to end: short runs reach a stated accuracy, the same seed gives
// the same numbers, composed and fused norms give the same curves, a diverging
// run stops with the epoch and the step; the configuration refuses bad values
// with one line naming the field; the one trainer calls its callbacks in order.
#define BOOST_TEST_MODULE training
#include <boost/test/unit_test.hpp>

#include <memory>

#include "autograd/error.h"
#include "ops/ops.h"
#include "train/metrics.h"
#include "train/model_description.h"
#include "train/table_task.h"
#include "train/trainer.h"

namespace tt = boost::test_tools;

namespace {
ag::RunConfig digits(int epochs, ag::Norm norm, ag::Impl impl) {
  ag::RunConfig c;
  c.dataset = "digits";
  c.hidden = {128};
  c.norm = norm;
  c.impl = impl;
  c.epochs = epochs;
  return c;
}

// The data loaded once and handed to the task, as the command line does.
struct Run {
  std::unique_ptr<ag::TableTask> task;
  std::vector<ag::Metrics> history;
};
Run train(const ag::RunConfig& c) {
  Run r;
  r.task = std::make_unique<ag::TableTask>(c, ag::make_dataset(c.dataset, c.seed, c.label_column, c.generated));
  r.history = ag::train(c, *r.task);
  return r;
}
}  // namespace

BOOST_AUTO_TEST_CASE(moons_reach_97_percent_validation_accuracy_in_15_epochs) {
  ag::RunConfig c;
  c.dataset = "moons";
  c.hidden = {32, 32};
  c.lr = 0.01;
  c.epochs = 15;
  const Run run = train(c);
  BOOST_TEST(run.history.size() == 16u);  // step 0, then one row an epoch
  BOOST_TEST(run.history.front().epoch == 0.0);
  BOOST_TEST(run.history.back().val_accuracy >= 0.97);
  BOOST_TEST(run.history.back().train_loss < run.history.front().train_loss);
  BOOST_TEST(run.history.back().epoch == 15.0);
}

BOOST_AUTO_TEST_CASE(digits_with_layernorm_reach_90_percent_in_5_epochs) {
  const Run run = train(digits(5, ag::Norm::LayerNorm, ag::Impl::Fused));
  BOOST_TEST(run.task->split.train.size() == 1438u);
  BOOST_TEST(run.task->split.validation.size() == 359u);
  BOOST_TEST(run.history.back().val_accuracy >= 0.90);
  BOOST_TEST(run.history.back().step == 5 * 45);  // ceil(1438 / 32) steps an epoch
}

BOOST_AUTO_TEST_CASE(the_same_seed_gives_bit_identical_metrics) {
  const ag::RunConfig c = digits(2, ag::Norm::LayerNorm, ag::Impl::Composed);
  const Run a = train(c), b = train(c);
  for (std::size_t e = 0; e < a.history.size(); ++e) {
    BOOST_TEST(a.history[e].train_loss == b.history[e].train_loss);
    BOOST_TEST(a.history[e].val_loss == b.history[e].val_loss);
    BOOST_TEST(a.history[e].val_accuracy == b.history[e].val_accuracy);
  }
  ag::RunConfig other = c;
  other.seed = 1;
  BOOST_TEST(train(other).history[0].train_loss != a.history[0].train_loss);
}

BOOST_AUTO_TEST_CASE(composed_and_fused_norms_give_the_same_curves) {
  for (ag::Norm norm : {ag::Norm::LayerNorm, ag::Norm::RMSNorm}) {
    const Run c = train(digits(3, norm, ag::Impl::Composed));
    const Run f = train(digits(3, norm, ag::Impl::Fused));
    const ag::CurveDifference d = ag::curve_difference(c.history, f.history);
    BOOST_TEST(d.train_loss <= 1e-9);
    BOOST_TEST(d.val_loss <= 1e-9);
    BOOST_TEST(d.val_accuracy == 0.0);
  }
}

BOOST_AUTO_TEST_CASE(evaluate_matches_the_last_epoch) {
  Run run = train(digits(1, ag::Norm::None, ag::Impl::Composed));
  ag::Tape tape;
  const ag::Evaluation e = ag::evaluate(run.task->model, run.task->split.validation, tape);
  BOOST_TEST(e.loss == run.history.back().val_loss);
  BOOST_TEST(e.accuracy == run.history.back().val_accuracy);
}

BOOST_AUTO_TEST_CASE(regression_learns_the_sine) {
  ag::RunConfig c;
  c.dataset = "sine";
  c.lr = 0.01;
  c.epochs = 30;
  const Run run = train(c);
  BOOST_TEST(run.history.back().val_loss < 0.05);  // the noise alone is 0.01
  BOOST_TEST(std::isnan(run.history.back().val_accuracy));
}

BOOST_AUTO_TEST_CASE(a_diverging_run_stops_with_the_epoch_and_step) {
  ag::RunConfig c;
  c.dataset = "sine";
  c.optimizer = ag::OptimizerKind::SGD;
  c.lr = 1e6;
  c.epochs = 5;
  try {
    train(c);
    BOOST_FAIL("expected TrainingDiverged");
  } catch (const ag::TrainingDiverged& e) {
    const std::string msg = e.what();
    BOOST_TEST(msg.find("at epoch 1, step ") != std::string::npos, msg);
  }
}

BOOST_AUTO_TEST_CASE(metrics_csv_has_a_header_and_a_row_per_evaluation) {
  std::vector<ag::Metrics> h = {{45, 1, 0.5, 0.25, 0.75, 0.8, 0.1}, {90, 2, 0.125, 0.2, 0.9, 0.85, 0.2}};
  BOOST_TEST(ag::metrics_csv(h) ==
             "epoch,train_loss,val_loss,train_accuracy,val_accuracy,seconds\n"
             "1,0.5,0.25,0.75,0.80000000000000004,0.10000000000000001\n"
             "2,0.125,0.20000000000000001,0.90000000000000002,0.84999999999999998,0.20000000000000001\n");
  BOOST_TEST(ag::metrics_csv(h, ag::TimeAxis::Step) ==
             "step,epoch,train_loss,val_loss,seconds\n"
             "45,1,0.5,0.25,0.10000000000000001\n"
             "90,2,0.125,0.20000000000000001,0.20000000000000001\n");
  BOOST_TEST(ag::compare_csv({{"a", h}}).rfind("run,epoch,", 0) == 0);
  BOOST_TEST(ag::metrics_line(h[1], ag::TimeAxis::Step, 900) == "step  90/900  epoch 2.00  train loss 0.1250  val loss 0.2000  0.2s");
  BOOST_TEST(ag::curve_difference(h, {h[0], h[0]}, ag::TimeAxis::Step).worst_loss_at == 90.0);
}

BOOST_AUTO_TEST_CASE(a_checkpoint_description_names_its_model_kind) {
  const ag::MlpSpec spec{{64, 128, 10}, ag::Norm::RMSNorm, ag::Impl::Fused};
  ag::Checkpoint ckpt{ag::describe_model(digits(1, ag::Norm::RMSNorm, ag::Impl::Fused), spec), {}};
  ckpt.params.push_back({"fc1.weight", arma::mat(64, 128)});
  ckpt.params.push_back({"fc2.weight", arma::mat(128, 10)});
  const ag::ModelDescription d = ag::read_description(ckpt, "x");
  BOOST_TEST((d.kind == ag::ModelKind::Mlp));
  BOOST_TEST(d.mlp.sizes.size() == 3u);
  BOOST_TEST((d.mlp.norm == ag::Norm::RMSNorm));
  BOOST_TEST(d.config.dataset == "digits");
  BOOST_TEST(d.config.hidden == std::vector<arma::uword>{128});
  BOOST_CHECK_THROW(ag::read_description(ckpt, "x", ag::ModelKind::Gpt), ag::DataError);
}

// A run of `steps` stops there, mid-epoch, with its last evaluation at that step;
// stepping a Trainer by hand (as the training page does, a slice at a time) is the same run.
BOOST_AUTO_TEST_CASE(a_run_of_k_steps_stops_at_k_and_stepping_by_hand_is_the_same_run) {
  ag::RunConfig c;
  c.dataset = "moons";
  c.generated = {200, 0.1};
  c.hidden = {16, 16};
  c.steps = 13;  // 160 training points in batches of 32: 5 a epoch, so step 13 is mid-epoch
  const Run whole = train(c);
  BOOST_TEST(whole.history.back().step == 13);
  BOOST_TEST(whole.history.back().epoch == 2.6, boost::test_tools::tolerance(1e-12));
  ag::TableTask task(c, ag::make_dataset(c.dataset, c.seed, "", c.generated));
  ag::Trainer trainer(c, task);
  for (int k = 0; k < 5; ++k) trainer.step();
  BOOST_TEST(!trainer.done());
  while (!trainer.done()) trainer.step();
  BOOST_TEST(trainer.steps() == 13);
  BOOST_REQUIRE(trainer.history().size() == whole.history.size());
  BOOST_TEST(trainer.history().back().val_loss == whole.history.back().val_loss);  // bit for bit
  BOOST_TEST(task.model.parameters()[0]->value()(0, 0) == whole.task->model.parameters()[0]->value()(0, 0));
}

// BatchNorm in the MLP: it learns, and evaluation (eval mode, running statistics)
// leaves the running statistics as they were.
BOOST_AUTO_TEST_CASE(an_mlp_with_batchnorm_learns_and_evaluating_changes_nothing) {
  ag::RunConfig c;
  c.dataset = "moons";
  c.norm = ag::Norm::BatchNorm;
  c.epochs = 5;
  const Run r = train(c);
  BOOST_TEST(r.history.back().val_accuracy > 0.95);
  auto& bn = dynamic_cast<ag::BatchNorm&>(r.task->model.layer(1));
  const arma::mat before = bn.running_mean;
  ag::Tape tape;
  ag::evaluate(r.task->model, r.task->split.validation, tape);
  BOOST_TEST(arma::approx_equal(bn.running_mean, before, "absdiff", 0.0));
  BOOST_TEST(r.task->model.training());
}
