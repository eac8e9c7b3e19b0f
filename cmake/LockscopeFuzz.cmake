# LOCKSCOPE_FUZZ: libFuzzer targets in tests/fuzz. Needs clang++; every
# project target gets libFuzzer's coverage instrumentation (fuzzer-no-link)
# and ASan + UBSan, so that a bug the fuzzer reaches in the core library is
# reported where it happens. With LOCKSCOPE_SANITIZE, both go only where
# that puts the sanitizers.
option(LOCKSCOPE_FUZZ "Build the libFuzzer targets in tests/fuzz (needs CMAKE_CXX_COMPILER=clang++)" OFF)
if(LOCKSCOPE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LOCKSCOPE_FUZZ needs clang++ (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(LOCKSCOPE_SANITIZE)
    # Built beside the sanitizers' suite (CI's one instrumented build): the
    # coverage goes where the sanitizers do, the tests' own code kept plain.
    target_compile_options(lockscope_warnings INTERFACE "$<${instrumented}:-fsanitize=fuzzer-no-link>")
  else()
    target_compile_options(lockscope_warnings INTERFACE -fsanitize=fuzzer-no-link)
    target_compile_options(lockscope_warnings INTERFACE -fsanitize=address,undefined
                           -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(lockscope_warnings INTERFACE -fsanitize=address,undefined
                        -fno-sanitize-recover=undefined)
  endif()
endif()
