#include "syncscope/core/error.hpp"

namespace syncscope {

Error::Error(std::string message, SourceLocation where)
    : std::runtime_error(std::move(message)), file_(where.file), line_(where.line) {}

CudaError::CudaError(std::string message, int code, SourceLocation where)
    : Error(std::move(message), where), code_(code) {}

}  // namespace syncscope
