#include "syncscope/core/error.hpp"

namespace syncscope {

Error::Error(std::string message, std::source_location where)
    : std::runtime_error(std::move(message)), file_(where.file_name()), line_(where.line()) {}

CudaError::CudaError(std::string message, int code, std::source_location where)
    : Error(std::move(message), where), code_(code) {}

}  // namespace syncscope
