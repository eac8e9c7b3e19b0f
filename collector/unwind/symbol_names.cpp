#include "unwind/symbol_names.h"

#include <cxxabi.h>

#include <cstdlib>

namespace lockscope::unwind {

std::string function_name(std::string_view symbol)
{
    // A version follows '@' or "@@"; mangled C++ names never contain '@'.
    symbol = symbol.substr(0, symbol.find('@'));
    // glibc's hidden_def aliases: what the library calls internally, under
    // the public name with this prefix.
    constexpr std::string_view kGlibcInternal = "__GI_";
    if (symbol.starts_with(kGlibcInternal) && symbol.size() > kGlibcInternal.size()) {
        symbol.remove_prefix(kGlibcInternal.size());
    }
    std::string name(symbol);
    if (!symbol.starts_with("_Z")) {
        return name;
    }
    int status = 0;
    char* plain = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if (status != 0 || plain == nullptr) {
        return name;
    }
    std::string demangled(plain);
    std::free(plain);
    return demangled;
}

}  // namespace lockscope::unwind
