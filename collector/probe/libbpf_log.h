// libbpf's one print hook for the whole program: warnings are kept, not
// printed, so that a load failure says what the verifier said in one
// sentence with a remedy, and a refusal that has a fallback (an optional
// program this kernel does not allow) prints nothing.
#pragma once

#include <string>

namespace lockscope::probe {

// Installs the hook (again is harmless) and forgets the last warning: call
// it before opening a BPF object.
void keep_libbpf_warnings();

// libbpf's last warning or error line since keep_libbpf_warnings(); "" if none.
std::string last_libbpf_warning();

}  // namespace lockscope::probe
