# Installing sweep: the binary, the libraries and their headers, a CMake package, the Python
# helper and the shipped configs.
#
#   cmake --install build --prefix /usr/local
#     bin/sweep
#     include/sweep/<room>/*.h               the repository's layout, so "sweep/queue/queue.h",
#                                            "scheduler/scheduler.h" resolve as in the source tree
#     lib/libsweep_*.a
#     lib/cmake/sweep/sweepConfig.cmake ...  find_package(sweep): targets sweep::<room>
#     share/sweep/python/sweep_trial.py      the helper external trainers import
#     share/sweep/configs/, share/sweep/examples/
#
# Every library target sweep_X is exported as sweep::X (sweep_queue → sweep::queue), and the same
# name is an ALIAS in the build tree, so examples/ links the same names inside the project and
# through find_package. The binary is sweep::sweep.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SWEEP_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/sweep)
set(SWEEP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/sweep)
set(SWEEP_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/sweep)
# The .deb also puts sweep_trial.py on the system Python's path (scripts/package sets this to
# lib/python3/dist-packages); empty: share/sweep/python only.
set(SWEEP_INSTALL_PYTHON_SITE_DIR "" CACHE STRING
    "Also install sweep_trial.py here (relative to the prefix), e.g. lib/python3/dist-packages")
# An installed binary keeps the paths of libraries outside the system's (CUDA's lib), so
# bin/sweep of a CUDA build runs without LD_LIBRARY_PATH. The .deb needs none (scripts/package
# turns it off).
if(NOT DEFINED CMAKE_INSTALL_RPATH_USE_LINK_PATH)
  set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)
endif()

# sweep_install(TARGETS t... [HEADERS] [EXCLUDE_HEADERS regex...]): installs the targets into the
# export set; with HEADERS, also every .h below the calling directory (minus EXCLUDE_HEADERS) at
# include/sweep/<its path in the repository>.
function(sweep_install)
  cmake_parse_arguments(arg "HEADERS" "" "TARGETS;EXCLUDE_HEADERS" ${ARGN})
  foreach(target IN LISTS arg_TARGETS)
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "EXECUTABLE")
      string(REGEX REPLACE "^sweep_" "" name ${target})
      set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
      add_library(sweep::${name} ALIAS ${target})
    endif()
  endforeach()
  install(TARGETS ${arg_TARGETS} EXPORT sweepTargets
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${SWEEP_INSTALL_INCLUDEDIR})
  if(arg_HEADERS)
    file(RELATIVE_PATH room ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
    file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
         ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
    foreach(regex IN LISTS arg_EXCLUDE_HEADERS)
      list(FILTER headers EXCLUDE REGEX "${regex}")
    endforeach()
    foreach(header IN LISTS headers)
      get_filename_component(subdir ${header} DIRECTORY)
      install(FILES ${header} DESTINATION ${SWEEP_INSTALL_INCLUDEDIR}/${room}/${subdir})
    endforeach()
  endif()
endfunction()

# Called once, after every room: the export set, sweepConfig.cmake, the data files and CPack.
function(sweep_install_package)
  install(EXPORT sweepTargets NAMESPACE sweep:: DESTINATION ${SWEEP_INSTALL_CMAKEDIR})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sweepConfig.cmake.in
    ${PROJECT_BINARY_DIR}/sweepConfig.cmake INSTALL_DESTINATION ${SWEEP_INSTALL_CMAKEDIR})
  # 0.x: a minor version may change the API, so only the same minor version is compatible.
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/sweepConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/sweepConfig.cmake ${PROJECT_BINARY_DIR}/sweepConfigVersion.cmake
          DESTINATION ${SWEEP_INSTALL_CMAKEDIR})

  install(FILES ${PROJECT_SOURCE_DIR}/python/sweep_trial.py DESTINATION ${SWEEP_INSTALL_DATADIR}/python)
  if(SWEEP_INSTALL_PYTHON_SITE_DIR)
    install(FILES ${PROJECT_SOURCE_DIR}/python/sweep_trial.py DESTINATION ${SWEEP_INSTALL_PYTHON_SITE_DIR})
  endif()
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${SWEEP_INSTALL_DATADIR}/configs
          USE_SOURCE_PERMISSIONS PATTERN __pycache__ EXCLUDE)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${SWEEP_INSTALL_DATADIR}/examples
          USE_SOURCE_PERMISSIONS PATTERN __pycache__ EXCLUDE)

  include(${PROJECT_SOURCE_DIR}/cmake/SweepCPack.cmake)
endfunction()
