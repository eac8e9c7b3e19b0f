# The version lockscope reports: the project version and, in a git checkout,
# the commit it was built from: 0.1.0+git92.g162c94f1a2b3 (commits since
# the root, then the commit), ".dirty" when tracked files differ from it.
# The count keeps Debian package versions of later commits ordered after
# earlier ones. Without git (a tarball) it is the project version alone.
#
# Included by the build (lockscope_version_header(), refreshed on every build
# so a new commit is never reported with an old name) and run by CPack
# (cmake/CPackProjectConfig.cmake) so a package is named like its binaries.

function(lockscope_version_string base source_dir out_var)
  set(version "${base}")
  find_package(Git QUIET)
  if(GIT_FOUND AND EXISTS "${source_dir}/.git")
    execute_process(COMMAND "${GIT_EXECUTABLE}" rev-list --count HEAD WORKING_DIRECTORY "${source_dir}"
                    OUTPUT_VARIABLE count RESULT_VARIABLE count_failed OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD WORKING_DIRECTORY "${source_dir}"
                    OUTPUT_VARIABLE commit RESULT_VARIABLE commit_failed OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT count_failed AND NOT commit_failed)
      set(version "${base}+git${count}.g${commit}")
      # Refresh stat data first, or a touched but unchanged file counts as a change.
      execute_process(COMMAND "${GIT_EXECUTABLE}" update-index -q --refresh WORKING_DIRECTORY "${source_dir}"
                      OUTPUT_QUIET ERROR_QUIET)
      execute_process(COMMAND "${GIT_EXECUTABLE}" diff-index --quiet HEAD -- WORKING_DIRECTORY "${source_dir}"
                      RESULT_VARIABLE dirty OUTPUT_QUIET ERROR_QUIET)
      if(dirty)
        string(APPEND version ".dirty")
      endif()
    endif()
  endif()
  set(${out_var} "${version}" PARENT_SCOPE)
endfunction()

# Script mode: cmake -DBASE=… -DSOURCE_DIR=… -DTEMPLATE=… -DOUTPUT=… -P LockscopeVersion.cmake
# configure_file() rewrites OUTPUT only when the text changes, so an
# unchanged commit recompiles nothing.
if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE AND DEFINED OUTPUT)
  lockscope_version_string("${BASE}" "${SOURCE_DIR}" LOCKSCOPE_FULL_VERSION)
  configure_file("${TEMPLATE}" "${OUTPUT}" @ONLY)
endif()
