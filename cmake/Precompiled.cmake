# Armadillo's header takes 2.2 s of a translation unit's 3 (g++ 12, -O3, this
# machine: an empty file with `#include <armadillo>` against ops/layernorm.cpp).
# Precompiled once a target, or once for targets built with the same flags
# (the tests, the lessons), it is read instead of parsed. Every source still
# includes what it uses; -DAUTOGRAD_PCH=OFF builds without, to check that.
option(AUTOGRAD_PCH "Precompile Armadillo's header (shorter builds)" ON)

# autograd_precompile_library(target): a library or program compiled with the
# build's own flags shares the engine's precompiled header: one header for all
# of them instead of one each (7.5-8.5 s each under the sanitizers). Their
# defines differ, which Armadillo's header does not read.
function(autograd_precompile_library target)
  autograd_precompile_shared(${target} libraries)
endfunction()

# autograd_precompile_shared(target group): targets of one group share the
# first one's precompiled header; their compile flags must be the same.
function(autograd_precompile_shared target group)
  if(NOT AUTOGRAD_PCH)
    return()
  endif()
  get_property(owner GLOBAL PROPERTY autograd_pch_${group})
  if(owner)
    target_precompile_headers(${target} REUSE_FROM ${owner})
  else()
    target_precompile_headers(${target} PRIVATE <armadillo>)
    set_property(GLOBAL PROPERTY autograd_pch_${group} ${target})
  endif()
endfunction()
