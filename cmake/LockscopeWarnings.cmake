# Warning and sanitizer flags shared by every C++ target of the project.
add_library(lockscope_warnings INTERFACE)
target_compile_options(lockscope_warnings INTERFACE -Wall -Wextra -Wshadow -Wnon-virtual-dtor
                                                    -Wno-missing-field-initializers)
if(LOCKSCOPE_UNITY AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # In a unity batch each source file is an included file, so GCC takes a
  # class that holds a type of the file's anonymous namespace for a header's
  # class that other files could see; compiled alone, the same file is
  # warning-free.
  target_compile_options(lockscope_warnings INTERFACE -Wno-subobject-linkage)
endif()
if(LOCKSCOPE_WERROR)
  target_compile_options(lockscope_warnings INTERFACE -Werror)
endif()
# A directory (tests/, with LOCKSCOPE_SANITIZE_TESTS off) or a target whose
# LOCKSCOPE_UNINSTRUMENTED is on compiles without the sanitizers' flags.
define_property(DIRECTORY PROPERTY LOCKSCOPE_UNINSTRUMENTED INHERITED
                BRIEF_DOCS "compile without the sanitizers" FULL_DOCS "see cmake/LockscopeWarnings.cmake")
define_property(TARGET PROPERTY LOCKSCOPE_UNINSTRUMENTED INHERITED
                BRIEF_DOCS "compile without the sanitizers" FULL_DOCS "see cmake/LockscopeWarnings.cmake")
if(LOCKSCOPE_SANITIZE)
  set(instrumented "$<NOT:$<BOOL:$<TARGET_PROPERTY:LOCKSCOPE_UNINSTRUMENTED>>>")
  target_compile_options(lockscope_warnings INTERFACE
                         "$<${instrumented}:-fsanitize=${LOCKSCOPE_SANITIZE};-fno-omit-frame-pointer>")
  target_link_options(lockscope_warnings INTERFACE -fsanitize=${LOCKSCOPE_SANITIZE})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC's flow analysis sees the sanitizers' instrumentation, not the
    # program, and reports uninitialized reads inside libstdc++ (std::regex,
    # std::function) that do not exist; the plain build keeps the warning.
    target_compile_options(lockscope_warnings INTERFACE -Wno-maybe-uninitialized)
  endif()
  if(LOCKSCOPE_SANITIZE MATCHES "undefined")
    # UBSan only prints and carries on by default; a test must fail instead.
    target_compile_options(lockscope_warnings INTERFACE "$<${instrumented}:-fno-sanitize-recover=undefined>")
    target_link_options(lockscope_warnings INTERFACE -fno-sanitize-recover=undefined)
  endif()
endif()
include(LockscopeFuzz)
