# ctest script (cmake -P): install the foldkit build tree to a prefix inside the build directory,
# then configure, build and run examples/consumer against that prefix via find_package(foldkit).
# Any failing step fails the test and prints that step's output.
#
# -D inputs: BUILD_DIR, SOURCE_DIR, WORK_DIR (required); CONFIG, GENERATOR, CXX_COMPILER,
# CUDA_COMPILER, CUDA_ROOT (optional; the CUDA ones only for builds with the CUDA backend).
cmake_minimum_required(VERSION 3.25)

foreach(var BUILD_DIR SOURCE_DIR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "consumer_test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")  # every run starts from nothing: no stale install or cache

function(run_step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmdline "${ARGN}")
    message(FATAL_ERROR "consumer test: step '${name}' failed (${rc})\n  command: ${cmdline}\n${out}")
  endif()
  message(STATUS "consumer test: step '${name}' ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(config_args)
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()

run_step(install "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" ${config_args})

set(configure_args -S "${SOURCE_DIR}" -B "${build}" "-DCMAKE_PREFIX_PATH=${prefix}")
if(GENERATOR)
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(CONFIG)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(CUDA_COMPILER)
  list(APPEND configure_args "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}")
endif()
if(CUDA_ROOT)
  list(APPEND configure_args "-DCUDAToolkit_ROOT=${CUDA_ROOT}")
endif()
run_step(configure "${CMAKE_COMMAND}" ${configure_args})
run_step(build "${CMAKE_COMMAND}" --build "${build}" ${config_args})

set(exe "${build}/foldkit_consumer")
if(CONFIG AND EXISTS "${build}/${CONFIG}/foldkit_consumer")  # multi-config generators
  set(exe "${build}/${CONFIG}/foldkit_consumer")
endif()
run_step(run "${exe}")
message(STATUS "consumer output:\n${step_output}")
