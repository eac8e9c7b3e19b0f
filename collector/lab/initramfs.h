// The guest's initramfs: a newc cpio archive holding busybox, lockscope and
// its shared libraries, the modules the guest needs and an init script.
// Written straight from the host's files, every write checked, so a full
// disk is one clear error instead of a guest that fails to boot.
#pragma once

#include <string>
#include <vector>

#include "lab/guest_modules.h"

namespace lockscope::lab {

struct InitramfsSpec {
    std::string lockscope_binary;      // installed as /bin/lockscope
    std::string busybox;               // installed as /bin/busybox
    std::string kernel_config;         // installed as /boot/lab-config when set
    std::vector<GuestModule> modules;  // installed as /lib/modules/lab/<name>.ko
    std::string init_script;           // installed as /init
};

// Writes the archive to `path`. Throws lockscope::Error naming the file and
// errno when a write fails (e.g. no space left).
void build_initramfs(const std::string& path, const InitramfsSpec& spec);

// The shared libraries `binary` needs (its ELF interpreter included), as
// absolute paths the guest's loader will look for. Throws when ldd fails.
std::vector<std::string> shared_libraries(const std::string& binary);

// The busybox to put in the guest: a statically linked one is preferred
// (busybox-static installs it as /bin/busybox). Empty when there is none.
std::string find_busybox();

}  // namespace lockscope::lab
