# autograd_warnings(target): the warnings this codebase keeps at zero.
function(autograd_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
endfunction()
