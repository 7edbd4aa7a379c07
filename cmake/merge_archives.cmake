# cmake -DAR=ar -DSCRIPT=file.mri -DARCHIVE=libtensorcc.a -P merge_archives.cmake
#
# Runs `ar -M` on SCRIPT (written by CMakeLists.txt: CREATE ARCHIVE.merged, ADDLIB ARCHIVE and
# each LLVM, zlib, zstd and SQLite archive, SAVE), then puts ARCHIVE.merged in ARCHIVE's place: a
# libtensorcc.a that needs no other archive. Run after every build of the archive, which CMake
# always makes afresh from the objects. An MRI script cannot name paths with spaces.
foreach(variable AR SCRIPT ARCHIVE)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "merge_archives.cmake: -D${variable}=... is required")
  endif()
endforeach()
file(REMOVE ${ARCHIVE}.merged)
execute_process(COMMAND ${AR} -M INPUT_FILE ${SCRIPT} RESULT_VARIABLE status
                ERROR_VARIABLE errors)
if(NOT status EQUAL 0 OR errors)
  message(FATAL_ERROR "merge_archives.cmake: ${AR} -M < ${SCRIPT} failed (${status}): ${errors}")
endif()
file(RENAME ${ARCHIVE}.merged ${ARCHIVE})
