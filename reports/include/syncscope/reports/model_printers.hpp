// The model's results as text for people, beside the analysis printers: the structs are the
// model's (model/predict.hpp, validate.hpp, trace_calibration.hpp), and so is their JSON.
#pragma once

#include <string>

#include "syncscope/calibrate/trace_calibration.hpp"
#include "syncscope/model/predict.hpp"
#include "syncscope/model/validate.hpp"

namespace syncscope {

// `predict`'s report: per fix and variant the predicted saving and speedup with their 90%
// intervals, the formula, parameters, evidence and notes.
std::string prediction_to_text(const model::PredictionReport& report);
// `validate`'s table: predicted against observed speedup per variant with its error and
// verdict, the rankings (ties printed as "a = b"), MAPE, published figures and notes.
std::string validation_to_table(const model::ValidationReport& report);
// A trace calibration: each estimate with its interval and events, what came from the
// base, the kernel classes, notes and warnings.
std::string calibration_to_text(const calibrate::TraceCalibration& calibration);

}  // namespace syncscope
