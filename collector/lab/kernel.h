// A guest kernel ready to boot: its image and, when known, its modules and
// config. Built from --kernel PATH [--modules DIR] or from a Debian package.
#pragma once

#include <string>

namespace lockscope::lab {

struct GuestKernel {
    std::string image;        // bzImage / vmlinuz
    std::string modules_dir;  // lib/modules/<release>; empty: drivers built in
    std::string config;       // config file shipped with the kernel; may be empty
    std::string release;      // uname -r when known before booting; else empty
    std::string package;      // Debian package it came from, if any
    std::string label;        // for progress lines: release, package or file name
};

// --kernel PATH [--modules DIR]: checks that the files exist and finds a
// config file next to the image (config-<suffix> for vmlinuz-<suffix>).
GuestKernel local_kernel(const std::string& image, const std::string& modules_dir);

// The directory where downloaded kernels are kept between runs:
// $LOCKSCOPE_LAB_CACHE, else $XDG_CACHE_HOME/lockscope/lab when set, else
// /var/cache/lockscope/lab.
std::string default_cache_dir();

// --debian-kernel SPEC: a package name (linux-image-…) or VERSION[-FLAVOUR]
// ("6.1", "6.1-rt"), resolved to the newest matching unsigned image package
// apt knows. Downloads it with apt-get download and unpacks it into the
// cache on first use; later runs reuse it. `progress` gets one line per step.
GuestKernel debian_kernel(const std::string& spec, const std::string& cache_dir,
                          void (*progress)(const std::string& line));

// The package name SPEC resolves to among `available` package names
// (exposed for tests); empty when none matches.
std::string resolve_debian_package(const std::string& spec, const std::string& available_names);

}  // namespace lockscope::lab
