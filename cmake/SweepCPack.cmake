# The .deb (cpack -G DEB; scripts/package makes it): the CPU + MPI build of sweep for Debian 12,
# installed under /usr. Its dependencies are computed by dpkg-shlibdeps from what bin/sweep links.
# CUDA's libraries are in no Debian package, so a build with CUDA makes no .deb (checked when
# cpack runs: cmake/SweepCPackOptions.cmake.in); GPU users build from source.
set(CPACK_PACKAGE_NAME sweep)
set(CPACK_PACKAGE_VENDOR "the sweep authors")
set(CPACK_PACKAGE_CONTACT "sweep maintainers <sweep@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "hyperparameter sweeps over its own C++ training engine (CPU build)")
set(CPACK_PACKAGE_DESCRIPTION
    "sweep trains every combination of the hyperparameters you list on its own engine
 (OpenBLAS + oneTBB on CPUs in this package), streams every metric into SQLite, stops
 hopeless trials early and writes one HTML report. Sweeps run on one machine or over
 MPI ranks and Slurm. Includes the C++ libraries and headers (find_package(sweep)), the
 Python helper sweep_trial for external trainers, and the shipped configs.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # sweep_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
# What find_package(sweep) needs to link the static libraries, and mpirun for sweeps over ranks.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "openmpi-bin, libtbb-dev, libopenblas-dev, zlib1g-dev, libdeflate-dev, libpng-dev, libturbojpeg0-dev, libyaml-cpp-dev, libsqlite3-dev, nlohmann-json3-dev, libopenmpi-dev, python3-torch")
set(CPACK_GENERATOR DEB)
configure_file(${PROJECT_SOURCE_DIR}/cmake/SweepCPackOptions.cmake.in
               ${PROJECT_BINARY_DIR}/SweepCPackOptions.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/SweepCPackOptions.cmake)
include(CPack)
