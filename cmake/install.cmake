# Install rules (included by CMakeLists.txt when TCC_INSTALL is on): under the prefix,
#   include/tcc/*.h (with the generated version.h)
#   lib/libtensorcc.so* and lib/libtensorcc.a
#   lib/cmake/tensorcc/ (find_package(tensorcc)) and lib/pkgconfig/tensorcc.pc
#   bin/tcc-conv, tcc-matmul, tcc-opt and share/man/man1/ their pages
# (lib/ is GNUInstallDirs' CMAKE_INSTALL_LIBDIR). test/install/run.sh checks all of it.
if(NOT TCC_WITH_LLVM)
  message(STATUS "tensorcc: TCC_WITH_LLVM is off: there is no library to install")
  return()
endif()
include(CMakePackageConfigHelpers)

set(TCC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tensorcc)
set(TCC_LIBRARY_TARGETS tensorcc_static)
if(TCC_BUILD_SHARED)
  list(APPEND TCC_LIBRARY_TARGETS tensorcc)
endif()
install(TARGETS ${TCC_LIBRARY_TARGETS} EXPORT tensorccTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tcc ${PROJECT_BINARY_DIR}/include/tcc
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")

install(EXPORT tensorccTargets NAMESPACE tensorcc:: DESTINATION ${TCC_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tensorccConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tensorccConfig.cmake
                              INSTALL_DESTINATION ${TCC_CMAKE_DIR})
# 0.x: any 0.y.z satisfies find_package(tensorcc 0.1) as far as CMake is concerned; the
# SONAME (libtensorcc.so.0) follows the major version the same way.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tensorccConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tensorccConfig.cmake
        ${PROJECT_BINARY_DIR}/tensorccConfigVersion.cmake DESTINATION ${TCC_CMAKE_DIR})

# tensorcc.pc names its prefix from where it lies (${pcfiledir}), so the tree works from any
# `cmake --install --prefix` and can be moved; absolute install dirs are written as they are.
set(TCC_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${TCC_PC_DIR}")
  set(TCC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH TCC_PC_PREFIX /prefix/${TCC_PC_DIR} /prefix)
  string(REGEX REPLACE "/$" "" TCC_PC_PREFIX "\${pcfiledir}/${TCC_PC_PREFIX}")
endif()
foreach(kind INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(TCC_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(TCC_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/tensorcc.pc.in ${PROJECT_BINARY_DIR}/tensorcc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tensorcc.pc DESTINATION ${TCC_PC_DIR})

if(TCC_BUILD_TOOLS AND TCC_TOOLS)
  install(TARGETS ${TCC_TOOLS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  if(TCC_MAN_PAGES)
    install(FILES ${TCC_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  endif()
endif()
