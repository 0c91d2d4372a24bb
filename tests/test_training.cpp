// Training end to end: short runs reach a stated accuracy, the same seed gives
// the same numbers, composed and fused norms give the same curves, and a
// diverging run stops with the epoch and the step.
#define BOOST_TEST_MODULE training
#include <boost/test/unit_test.hpp>

#include "train/metrics.h"
#include "train/trainer.h"

namespace tt = boost::test_tools;

namespace {
ag::TrainConfig digits(int epochs, ag::Norm norm, ag::Impl impl) {
  ag::TrainConfig c;
  c.dataset = "digits";
  c.hidden = {128};
  c.norm = norm;
  c.impl = impl;
  c.epochs = epochs;
  return c;
}
}  // namespace

BOOST_AUTO_TEST_CASE(moons_reach_97_percent_validation_accuracy_in_15_epochs) {
  ag::TrainConfig c;
  c.dataset = "moons";
  c.hidden = {32, 32};
  c.lr = 0.01;
  c.epochs = 15;
  const ag::TrainRun run = ag::train(c);
  BOOST_TEST(run.history.size() == 15u);
  BOOST_TEST(run.history.back().val_accuracy >= 0.97);
  BOOST_TEST(run.history.back().train_loss < run.history.front().train_loss);
}

BOOST_AUTO_TEST_CASE(digits_with_layernorm_reach_90_percent_in_5_epochs) {
  const ag::TrainRun run = ag::train(digits(5, ag::Norm::LayerNorm, ag::Impl::Fused));
  BOOST_TEST(run.split.train.size() == 1438u);
  BOOST_TEST(run.split.validation.size() == 359u);
  BOOST_TEST(run.history.back().val_accuracy >= 0.90);
}

BOOST_AUTO_TEST_CASE(the_same_seed_gives_bit_identical_metrics) {
  const ag::TrainConfig c = digits(2, ag::Norm::LayerNorm, ag::Impl::Composed);
  const ag::TrainRun a = ag::train(c), b = ag::train(c);
  for (std::size_t e = 0; e < a.history.size(); ++e) {
    BOOST_TEST(a.history[e].train_loss == b.history[e].train_loss);
    BOOST_TEST(a.history[e].val_loss == b.history[e].val_loss);
    BOOST_TEST(a.history[e].val_accuracy == b.history[e].val_accuracy);
  }
  ag::TrainConfig other = c;
  other.seed = 1;
  BOOST_TEST(ag::train(other).history[0].train_loss != a.history[0].train_loss);
}

BOOST_AUTO_TEST_CASE(composed_and_fused_norms_give_the_same_curves) {
  for (ag::Norm norm : {ag::Norm::LayerNorm, ag::Norm::RMSNorm}) {
    const ag::TrainRun c = ag::train(digits(3, norm, ag::Impl::Composed));
    const ag::TrainRun f = ag::train(digits(3, norm, ag::Impl::Fused));
    const ag::CurveDifference d = ag::curve_difference(c.history, f.history);
    BOOST_TEST(d.train_loss <= 1e-9);
    BOOST_TEST(d.val_loss <= 1e-9);
    BOOST_TEST(d.val_accuracy == 0.0);
  }
}

BOOST_AUTO_TEST_CASE(evaluate_matches_the_last_epoch) {
  ag::TrainRun run = ag::train(digits(1, ag::Norm::None, ag::Impl::Composed));
  ag::Tape tape;
  const ag::Evaluation e = ag::evaluate(run.model, run.split.validation, tape);
  BOOST_TEST(e.loss == run.history.back().val_loss);
  BOOST_TEST(e.accuracy == run.history.back().val_accuracy);
}

BOOST_AUTO_TEST_CASE(regression_learns_the_sine) {
  ag::TrainConfig c;
  c.dataset = "sine";
  c.lr = 0.01;
  c.epochs = 30;
  const ag::TrainRun run = ag::train(c);
  BOOST_TEST(run.history.back().val_loss < 0.05);  // the noise alone is 0.01
  BOOST_TEST(std::isnan(run.history.back().val_accuracy));
}

BOOST_AUTO_TEST_CASE(a_diverging_run_stops_with_the_epoch_and_step) {
  ag::TrainConfig c;
  c.dataset = "sine";
  c.optimizer = "sgd";
  c.lr = 1e6;
  c.epochs = 5;
  try {
    ag::train(c);
    BOOST_FAIL("expected TrainingDiverged");
  } catch (const ag::TrainingDiverged& e) {
    const std::string msg = e.what();
    BOOST_TEST(msg.find("at epoch 1, step ") != std::string::npos, msg);
  }
}

BOOST_AUTO_TEST_CASE(bad_configs_are_refused) {
  ag::TrainConfig c;
  c.epochs = 0;
  BOOST_CHECK_THROW(ag::train(c), ag::Error);
  c.epochs = 1;
  c.optimizer = "rmsprop";
  BOOST_CHECK_THROW(ag::train(c), ag::Error);
}

BOOST_AUTO_TEST_CASE(metrics_csv_has_a_header_and_a_row_per_epoch) {
  std::vector<ag::EpochMetrics> h = {{1, 0.5, 0.25, 0.75, 0.8, 0.1}, {2, 0.125, 0.2, 0.9, 0.85, 0.2}};
  BOOST_TEST(ag::metrics_csv(h) ==
             "epoch,train_loss,val_loss,train_accuracy,val_accuracy,seconds\n"
             "1,0.5,0.25,0.75,0.80000000000000004,0.10000000000000001\n"
             "2,0.125,0.20000000000000001,0.90000000000000002,0.84999999999999998,0.20000000000000001\n");
  BOOST_TEST(ag::compare_csv({{"a", h}}).rfind("run,epoch,", 0) == 0);
  const ag::RunDescription d = ag::parse_run_description(
      ag::describe_run(digits(1, ag::Norm::RMSNorm, ag::Impl::Fused), ag::MlpSpec{{64, 128, 10}, ag::Norm::RMSNorm, ag::Impl::Fused}), "x");
  BOOST_TEST(d.spec.sizes.size() == 3u);
  BOOST_TEST((d.spec.norm == ag::Norm::RMSNorm));
  BOOST_TEST(d.config.dataset == "digits");
}
