// The name a frame is shown under, from the symbol a binary's symbol table or
// debuginfo gives: the same function must read the same on every machine,
// whether or not its debuginfo is installed.
#pragma once

#include <string>
#include <string_view>

namespace lockscope::unwind {

// Drops the symbol version ("pthread_mutex_lock@@GLIBC_2.2.5"), glibc's
// internal alias prefix (its debuginfo names __lll_lock_wait
// "__GI___lll_lock_wait") and demangles C++ names.
std::string function_name(std::string_view symbol);

}  // namespace lockscope::unwind
