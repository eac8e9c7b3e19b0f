# Warning and sanitizer flags shared by every C++ target of the project.
add_library(lockscope_warnings INTERFACE)
target_compile_options(lockscope_warnings INTERFACE -Wall -Wextra -Wshadow -Wnon-virtual-dtor
                                                    -Wno-missing-field-initializers)
if(LOCKSCOPE_WERROR)
  target_compile_options(lockscope_warnings INTERFACE -Werror)
endif()
if(LOCKSCOPE_SANITIZE)
  target_compile_options(lockscope_warnings INTERFACE -fsanitize=${LOCKSCOPE_SANITIZE} -fno-omit-frame-pointer)
  target_link_options(lockscope_warnings INTERFACE -fsanitize=${LOCKSCOPE_SANITIZE})
endif()
