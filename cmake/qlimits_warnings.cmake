# qlimits_strict(<target>): our warning set, for our own targets only (tests, lab, benchmarks).
# Never applied to the INTERFACE target: users choose their own flags.
function(qlimits_strict target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion
    -Wshadow -Wold-style-cast -Wundef -Wnon-virtual-dtor
    $<$<BOOL:${QLIMITS_WERROR}>:-Werror>)
endfunction()
