# pfvm's CMake package (installed as <prefix>/lib/cmake/pfvm/):
#
#   find_package(pfvm 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE pfvm::pfvm)   # pfvm.h (and libm)
#   target_link_libraries(app PRIVATE pfvm::onnx)   # pfvm_onnx.h (and nanopb's runtime)
#
# The headers are single-file libraries: one source file of the program
# defines PFVM_IMPLEMENTATION before including them (README, "Using the
# headers"). The same targets come from add_subdirectory or FetchContent of
# the source tree (CMakeLists.txt).
get_filename_component(_pfvm_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET pfvm::pfvm)
  add_library(pfvm::pfvm INTERFACE IMPORTED)
  set_target_properties(pfvm::pfvm PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_pfvm_prefix}/include")
  if(UNIX)
    set_property(TARGET pfvm::pfvm PROPERTY INTERFACE_LINK_LIBRARIES m)
  endif()
endif()
if(NOT TARGET pfvm::onnx)
  add_library(pfvm::onnx INTERFACE IMPORTED)
  set_target_properties(pfvm::onnx PROPERTIES INTERFACE_LINK_LIBRARIES "pfvm::pfvm;protobuf-nanopb")
endif()
unset(_pfvm_prefix)
