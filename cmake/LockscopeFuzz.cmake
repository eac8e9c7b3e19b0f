# LOCKSCOPE_FUZZ: libFuzzer targets in tests/fuzz. Needs clang++; every
# project target gets libFuzzer's coverage instrumentation (fuzzer-no-link)
# and, unless LOCKSCOPE_SANITIZE says otherwise, ASan + UBSan, so that a
# bug the fuzzer reaches in the core library is reported where it happens.
option(LOCKSCOPE_FUZZ "Build the libFuzzer targets in tests/fuzz (needs CMAKE_CXX_COMPILER=clang++)" OFF)
if(LOCKSCOPE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LOCKSCOPE_FUZZ needs clang++ (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  target_compile_options(lockscope_warnings INTERFACE -fsanitize=fuzzer-no-link)
  if(NOT LOCKSCOPE_SANITIZE)
    target_compile_options(lockscope_warnings INTERFACE -fsanitize=address,undefined
                           -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(lockscope_warnings INTERFACE -fsanitize=address,undefined
                        -fno-sanitize-recover=undefined)
  endif()
endif()
