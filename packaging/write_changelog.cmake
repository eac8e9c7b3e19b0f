# Writes the Debian changelog of a lockscope package (gzip -9n), for the
# version the binaries were built with (generated/lockscope_version.h).
# cmake -DHEADER=… -DPACKAGE=lockscope -DSOURCE_DIR=… -DOUTPUT=…/changelog.gz -P write_changelog.cmake
file(STRINGS "${HEADER}" line REGEX "define LOCKSCOPE_VERSION ")
string(REGEX REPLACE ".*\"(.*)\".*" "\\1" version "${line}")
# The commit's date, so that the same commit gives the same package.
set(date "")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" log -1 --format=%aD WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE date OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
if(NOT date)
  string(TIMESTAMP date "%a, %d %b %Y %H:%M:%S +0000" UTC)
endif()
string(REGEX MATCH "g[0-9a-f]+" commit "${version}")
if(commit)
  string(SUBSTRING "${commit}" 1 -1 commit)
  set(what "Built from commit ${commit} of lockscope.")
else()
  set(what "Built from a source tree without git history.")
endif()
set(text "${PACKAGE} (${version}) unstable; urgency=medium\n\n  * ${what}\n\n -- ${MAINTAINER}  ${date}\n")
get_filename_component(dir "${OUTPUT}" DIRECTORY)
file(WRITE "${dir}/${PACKAGE}.changelog" "${text}")
execute_process(COMMAND gzip -9nc "${dir}/${PACKAGE}.changelog" OUTPUT_FILE "${OUTPUT}" RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "gzip failed on ${dir}/${PACKAGE}.changelog")
endif()
