#include "syncscope/reports/analysis_printers.hpp"

// Filled by the analysis work (issue 2).
