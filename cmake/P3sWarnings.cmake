# SPDX-License-Identifier: BSD-3-Clause
# Warning flags shared by every p3s target: p3s_enable_warnings(target [WERROR]).
function(p3s_enable_warnings target)
  cmake_parse_arguments(ARG "WERROR" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
  if(ARG_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-Werror>)
  endif()
endfunction()
