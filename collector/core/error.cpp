#include "core/error.h"

#include <cstring>

namespace lockscope {
namespace {

std::string compose(const std::string& operation, const std::string& object, int err, const std::string& remedy)
{
    std::string s = operation;
    if (!object.empty())
        s += " '" + object + "'";
    if (err != 0)
        s += std::string(": ") + std::strerror(err);
    if (!remedy.empty())
        s += " (" + remedy + ")";
    return s;
}

}  // namespace

Error::Error(std::string operation, std::string object, int err, std::string remedy)
    : std::runtime_error(compose(operation, object, err, remedy)),
      operation_(std::move(operation)),
      object_(std::move(object)),
      err_(err),
      remedy_(std::move(remedy))
{
}

}  // namespace lockscope
