#include "nn/module.h"

namespace ag {

void Module::zero_grad() {
  for (Parameter* p : parameters()) p->zero_grad();
}

std::size_t Module::parameter_count() {
  std::size_t n = 0;
  for (Parameter* p : parameters()) n += p->value().n_elem;
  return n;
}

void Sequential::add(std::unique_ptr<Module> layer) { layers_.push_back(std::move(layer)); }

Var Sequential::forward(Var x) {
  for (const std::unique_ptr<Module>& layer : layers_) x = layer->forward(x);
  return x;
}

std::vector<Parameter*> Sequential::parameters() {
  std::vector<Parameter*> all;
  for (const std::unique_ptr<Module>& layer : layers_) {
    for (Parameter* p : layer->parameters()) all.push_back(p);
  }
  return all;
}

std::vector<Statistic> Sequential::statistics() {
  std::vector<Statistic> all;
  for (const std::unique_ptr<Module>& layer : layers_) {
    for (const Statistic& s : layer->statistics()) all.push_back(s);
  }
  return all;
}

void Sequential::train(bool on) {
  Module::train(on);
  for (const std::unique_ptr<Module>& layer : layers_) layer->train(on);
}

std::string Sequential::describe() const {
  std::string text;
  for (const std::unique_ptr<Module>& layer : layers_) text += layer->describe() + "\n";
  return text;
}

}  // namespace ag
