// %% [markdown]
// # Lesson 06: training a tiny model
//
// Everything so far computed gradients. Training uses them: a loop that takes a
// small batch of examples, records the model's loss on a fresh tape, runs
// backward, and lets the optimizer (Adam here) nudge every parameter against its
// gradient. We train a small multilayer perceptron on the 8x8 handwritten digits
// (1797 images of 64 pixels, 10 classes; 80% to train, 20% to validate) three ways:
//
// 1. without normalisation: Linear(64 -> 64), ReLU, Linear(64 -> 10);
// 2. with a LayerNorm after the hidden Linear, **composed** from primitive ops;
// 3. the same with the **fused** LayerNorm node.
//
// All three start from the same initial weights (the norms draw no random
// numbers), see the same batches in the same order, and run 10 epochs.

// %%
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

#include "notebooks/notebook.h"
#include "train/trainer.h"

ag::TrainConfig config(ag::Norm norm, ag::Impl impl) {
  ag::TrainConfig c;
  c.dataset = "digits";
  c.hidden = {64};
  c.norm = norm;
  c.impl = impl;
  c.optimizer = "adam";
  c.lr = 1e-3;
  c.epochs = 10;
  c.batch_size = 32;
  c.seed = 0;
  return c;
}

std::vector<ag::EpochMetrics> plain, composed, fused;

// %%
NB_CELL {
  plain = ag::train(config(ag::Norm::None, ag::Impl::Composed)).history;
  composed = ag::train(config(ag::Norm::LayerNorm, ag::Impl::Composed)).history;
  fused = ag::train(config(ag::Norm::LayerNorm, ag::Impl::Fused)).history;
  std::printf("epoch | no norm: train loss  val acc | LayerNorm composed: train loss  val acc | fused: train loss\n");
  for (std::size_t e = 0; e < plain.size(); ++e) {
    std::printf("%5d |          %8.4f  %6.3f |                     %8.4f  %6.3f |        %8.4f\n", plain[e].epoch,
                plain[e].train_loss, plain[e].val_accuracy, composed[e].train_loss, composed[e].val_accuracy,
                fused[e].train_loss);
  }
  nb::check(plain.size() == 10 && composed.size() == 10 && fused.size() == 10, "each run trained 10 epochs");
  nb::check(composed.back().val_accuracy >= 0.9, "with LayerNorm, validation accuracy reaches 90% in 10 epochs");
  nb::check(composed.back().train_loss < composed.front().train_loss / 2, "the training loss at least halves");
}

// %% [markdown]
// ## The curves
//
// Loss against epoch, training (solid) and validation (dashed): without
// normalisation, and with LayerNorm composed and fused. The fused run is drawn
// with points on top of the composed one.

// %%
NB_CELL {
  std::vector<double> epochs;
  auto series = [](const std::vector<ag::EpochMetrics>& h, bool val) {
    std::vector<double> v;
    for (const ag::EpochMetrics& m : h) v.push_back(val ? m.val_loss : m.train_loss);
    return v;
  };
  for (const ag::EpochMetrics& m : plain) epochs.push_back(m.epoch);
  nb::Plot plot{"loss_curves", "Digits, MLP 64-64-10, Adam 1e-3, batch 32", "epoch", "cross-entropy loss",
                false, true, {}, {"set key top right"}};
  plot.add("no norm, train", epochs, series(plain, false), "lines lc rgb '#999999'");
  plot.add("no norm, validation", epochs, series(plain, true), "lines dt 2 lc rgb '#999999'");
  plot.add("LayerNorm composed, train", epochs, series(composed, false), "lines lc rgb '#1f77b4'");
  plot.add("LayerNorm composed, validation", epochs, series(composed, true), "lines dt 2 lc rgb '#1f77b4'");
  plot.add("LayerNorm fused, train", epochs, series(fused, false), "points pt 6 ps 1.5 lc rgb '#d62728'");
  plot.add("LayerNorm fused, validation", epochs, series(fused, true), "points pt 4 ps 1.5 lc rgb '#d62728'");
  nb::draw(plot);
}

// %% [markdown]
// ## Composed and fused are the same model
//
// The fused node computes the same function with a different order of floating
// point operations, so the two runs may differ by rounding, and rounding does
// not grow into anything visible over a short run.

// %%
NB_CELL {
  double largest = 0;
  for (std::size_t e = 0; e < composed.size(); ++e) {
    largest = std::max(largest, std::abs(composed[e].train_loss - fused[e].train_loss));
    largest = std::max(largest, std::abs(composed[e].val_loss - fused[e].val_loss));
  }
  std::cout << "largest difference between the composed and fused loss curves: " << largest << "\n";
  nb::check(largest < 1e-9, "composed and fused loss curves agree to 1e-9 at every epoch");
}

// %% [markdown]
// ## With and without LayerNorm
//
// With the same weights and batches, the LayerNorm model learns faster in the
// first epochs: normalising the hidden layer keeps its activations on a scale
// where ReLU and the next Linear layer work well, whatever the scale of the
// pixels and of the initial weights.

// %%
NB_CELL {
  std::printf("after epoch 1: train loss %.4f without, %.4f with LayerNorm\n", plain[0].train_loss,
              composed[0].train_loss);
  nb::check(composed[0].train_loss < plain[0].train_loss, "LayerNorm is ahead after the first epoch");
}

// %% [markdown]
// ## What to remember
//
// - A training step is forward on a fresh tape, backward, then an optimizer update of every parameter.
// - The fused LayerNorm is a drop-in for the composed one: the curves coincide to rounding.
// - The CLI runs the same experiment at full size: `autograd train --dataset digits --norm layernorm`
//   and `autograd compare --norm none,layernorm`.
