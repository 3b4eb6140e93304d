# cmake -P script: checks snippets.cmake on small pages (tests/docs/CMakeLists.txt runs it), so a
# change to how blocks are read cannot silently leave some uncompiled.
cmake_minimum_required(VERSION 3.21)
include(${CMAKE_CURRENT_LIST_DIR}/snippets.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(expect what condition)
  if(NOT condition)
    message(FATAL_ERROR "snippets.cmake: ${what}")
  endif()
endfunction()

# A page with every kind of block, a given, a hoisted include, a block of another language and
# a last fence without a final newline.
file(WRITE ${WORK_DIR}/page.md [=[
# A page
```sh
echo not C++
```
<!-- given: int* p = nullptr;
  auto f = [&] { return p->x; }; -->
```cpp no_run
#include <mase/io/onnx.hpp>
int a = f();
```
```cpp17
not read
```
```cpp global
struct op {};
```
```cpp members
  int member;
```
```cpp
#include <mase/search.hpp>
assert(true);
```]=])
mase_doc_snippets_program(${WORK_DIR}/page.md page.md ${WORK_DIR}/page.cpp page)
file(READ ${WORK_DIR}/page.cpp program)
expect("4 blocks, 1 run: got ${page_blocks}, ${page_runs}" "${page_blocks}.${page_runs}" STREQUAL "4.1")
expect("components onnx;toml: got '${page_components}'" "${page_components}" STREQUAL "onnx;toml")
foreach(line IN ITEMS
    "\n#include <mase/io/onnx.hpp>\n#include <mase/search.hpp>\n"
    "[[maybe_unused]] static void block_1() {\n#line 5 \"page.md\"\n int* p = nullptr;\n  auto f = [&] { return p->x; }; \n#line 8 \"page.md\"\n\nint a = f();\n}\n"
    "\n#line 15 \"page.md\"\nstruct op {};\n"
    "struct block_3_members {\n#line 18 \"page.md\"\n  int member;\n};\n"
    "static void block_4() {\n#line 21 \"page.md\"\n\nassert(true);\n}\n"
    "failed += run_block(block_4, 21);"
    "page.md: 4 C++ blocks compiled, 1 ran")
  string(FIND "${program}" "${line}" at)
  expect("the program lacks:\n${line}\nIt is:\n${program}" NOT at EQUAL -1)
endforeach()
string(FIND "${program}" "not read" at)
expect("a ```cpp17 block was read" at EQUAL -1)

# Pages it must refuse: C++ that would not be compiled, or a word it does not know.
foreach(case IN ITEMS "```c++\nint a;\n```\n" "- item\n  ```cpp\n  int a;\n  ```\n" "```cpp norun\nint a;\n```\n"
                      "```cpp global\nint a;\n```\n<!-- given: int b; -->\n```cpp members\nint c;\n```\n")
  file(WRITE ${WORK_DIR}/bad.md "${case}")
  file(WRITE ${WORK_DIR}/bad.cmake "cmake_minimum_required(VERSION 3.21)\ninclude(${CMAKE_CURRENT_LIST_DIR}/snippets.cmake)\nmase_doc_snippets_program(${WORK_DIR}/bad.md bad.md ${WORK_DIR}/bad.cpp bad)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -P ${WORK_DIR}/bad.cmake RESULT_VARIABLE result OUTPUT_QUIET ERROR_VARIABLE err)
  expect("it accepted the page\n${case}" NOT result EQUAL 0 AND err MATCHES "bad.md: |bad.md:[0-9]+: ")
endforeach()
message("snippets.cmake: every kind of block read, and the pages it must refuse refused")
