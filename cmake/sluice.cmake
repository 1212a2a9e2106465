# sluice_add_library(name SOURCES a.cc b.cc DEPS other_lib ...)
# One module = one folder = one library. Include paths are rooted at src/ ("common/error.h").
function(sluice_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# sluice_add_test(name SOURCES a_test.cc DEPS lib ...): a GoogleTest binary registered with CTest.
function(sluice_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    SLUICE_SOURCE_DIR="${PROJECT_SOURCE_DIR}" SLUICE_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
endfunction()
