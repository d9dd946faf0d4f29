# Runs the differential driver built with and without software_limit's inline look over seeds
# and configurations, and fails on the first run whose outputs differ (sw_inline_look.cpp).
# -DFAST=<driver> -DSLOW=<driver built with QLIMITS_SOFTWARE_LIMIT_NO_INLINE_LOOK>
# -DCALLS=<calls per run> -DSEEDS=<count>
foreach(_seed RANGE 1 ${SEEDS})
  foreach(_config RANGE 0 9)
    foreach(_side FAST SLOW)
      execute_process(COMMAND ${${_side}} ${_seed} ${_config} ${CALLS}
                      OUTPUT_VARIABLE _out_${_side} RESULT_VARIABLE _rc)
      if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "${${_side}} ${_seed} ${_config} ${CALLS} exited with ${_rc}")
      endif()
    endforeach()
    if(NOT _out_FAST STREQUAL _out_SLOW)
      string(REPLACE "\n" ";" _fast "${_out_FAST}")
      string(REPLACE "\n" ";" _slow "${_out_SLOW}")
      foreach(_line IN LISTS _fast)
        list(POP_FRONT _slow _other)
        if(NOT _line STREQUAL _other)
          message(FATAL_ERROR "seed ${_seed} config ${_config}: the inline look changed the "
                  "policy's behaviour; first differing hash (calls, hash): fast '${_line}', "
                  "slow path only '${_other}'")
        endif()
      endforeach()
      message(FATAL_ERROR "seed ${_seed} config ${_config}: outputs differ in length")
    endif()
  endforeach()
endforeach()
message(STATUS "${SEEDS} seeds x 10 configurations x ${CALLS} calls: the same behaviour")
