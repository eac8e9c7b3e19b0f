# lockscope_bpf_skeleton(NAME SOURCE <file.bpf.c> [DEPENDS headers...] [INCLUDES dirs...])
#
# DEPENDS: headers the source includes, relative to the calling folder (or
# absolute).
# INCLUDES: more header directories (a test program using bpf/'s headers).
# Compiles a BPF C source with clang for the BPF target (CO-RE, BTF debug
# info), links it with bpftool and generates a libbpf skeleton header.
# Defines the INTERFACE target NAME whose include directory holds
# NAME.skel.h and which links libbpf.
find_program(BPF_CLANG NAMES clang clang-16 clang-15 clang-14 REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED)

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(BPF_TARGET_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(BPF_TARGET_ARCH arm64)
else()
  message(FATAL_ERROR "lockscope: no BPF target arch mapping for ${CMAKE_SYSTEM_PROCESSOR}")
endif()
# Debian keeps <asm/types.h> under the multiarch include directory.
execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch
                OUTPUT_VARIABLE BPF_MULTIARCH OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)

function(lockscope_bpf_skeleton name)
  cmake_parse_arguments(ARG "" "SOURCE" "DEPENDS;INCLUDES" ${ARGN})
  if(NOT ARG_SOURCE)
    message(FATAL_ERROR "lockscope_bpf_skeleton(${name}): SOURCE is required")
  endif()
  get_filename_component(src "${ARG_SOURCE}" ABSOLUTE)
  get_filename_component(src_dir "${src}" DIRECTORY)
  set(depends)
  foreach(header ${ARG_DEPENDS})
    get_filename_component(header "${header}" ABSOLUTE)
    list(APPEND depends "${header}")
  endforeach()
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  set(obj "${out_dir}/${name}.bpf.o")
  set(linked "${out_dir}/${name}.linked.o")
  set(skel "${out_dir}/${name}.skel.h")
  set(include_flags)
  foreach(dir ${ARG_INCLUDES})
    list(APPEND include_flags -I "${dir}")
  endforeach()

  add_custom_command(
    OUTPUT "${skel}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${out_dir}"
    COMMAND ${BPF_CLANG} -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_${BPF_TARGET_ARCH}
            -Wall -Werror -Wno-unused-function
            -I "${src_dir}" ${include_flags} -I "/usr/include/${BPF_MULTIARCH}"
            -c "${src}" -o "${obj}"
    COMMAND ${BPFTOOL} gen object "${linked}" "${obj}"
    COMMAND sh -c "'${BPFTOOL}' gen skeleton '${linked}' name ${name} > '${skel}.tmp' && mv '${skel}.tmp' '${skel}'"
    DEPENDS "${src}" ${depends}
    COMMENT "BPF ${name}: clang -target bpf, bpftool gen skeleton"
    VERBATIM)
  add_custom_target(${name}_gen DEPENDS "${skel}")
  add_library(${name} INTERFACE)
  add_dependencies(${name} ${name}_gen)
  target_include_directories(${name} INTERFACE "${out_dir}" "${src_dir}")
  target_link_libraries(${name} INTERFACE PkgConfig::LIBBPF)
  # bpftool writes a bool of the programs' .kconfig (libbpf's
  # LINUX_HAS_BPF_COOKIE) as C's _Bool, which g++ takes in C++ and clang++
  # does not.
  target_compile_definitions(${name} INTERFACE "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:Clang>>:_Bool=bool>")
endfunction()
