// The ways traces are produced: simulated from the step program with a GPU profile, or
// measured on a CUDA GPU through the measured backend (LibTorch steps under the tracer).
#pragma once

#include <memory>
#include <string>

#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/pipeline/backend.hpp"
#include "syncscope/pipeline/plan.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::pipeline {

class Producer {
 public:
  virtual ~Producer() = default;
  virtual Trace produce(const Job& job, const scenario::Scenario& s, const std::string& name) = 0;
};

class SimProducer : public Producer {
 public:
  explicit SimProducer(model::GpuProfile p) : profile_(std::move(p)) {}
  // Deterministic: warm-up steps would be identical copies; only the measured ones run.
  Trace produce(const Job& job, const scenario::Scenario& s, const std::string& name) override;
  const model::GpuProfile& profile() const { return profile_; }

 private:
  model::GpuProfile profile_;
};

class MeasuredProducer : public Producer {
 public:
  explicit MeasuredProducer(std::shared_ptr<const MeasuredBackend> backend) : backend_(std::move(backend)) {}
  Trace produce(const Job& job, const scenario::Scenario& s, const std::string& name) override;

 private:
  std::shared_ptr<const MeasuredBackend> backend_;
};

}  // namespace syncscope::pipeline
