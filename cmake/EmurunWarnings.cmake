# Warnings for our own targets only; linked PRIVATE so consumers never inherit them.
add_library(emurun_warnings INTERFACE)
target_compile_options(emurun_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                                                 $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>)
if(EMURUN_DEVELOP)
  target_compile_options(emurun_warnings INTERFACE -Werror)
endif()
