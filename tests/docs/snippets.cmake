# The C++ blocks of a Markdown page as one program: mase_doc_snippets_program(<page> <name>
# <output.cpp> <prefix>) reads <page> (a path; <name> is how messages and #line name it, such as
# docs/ir.md) and writes <output.cpp>, in which every ```cpp block of the page is compiled:
#
#   ```cpp            the body of a function that main() calls: the block runs;
#   ```cpp no_run     the body of a function never called: compiled only (it needs files, tools
#                     or values the page does not have);
#   ```cpp global     code at namespace scope (an op's struct that later blocks use);
#   ```cpp members    members of a class: compiled inside a struct of their own.
#
# A block's #include lines move to the top of the program; every block also has
# #include <mase/mase.hpp>, a few standard headers and `using namespace mase;` above it. An HTML
# comment on the line before a block, <!-- given: C++ statements -->, is not shown by Markdown
# viewers and goes before the block in its function: the values a fragment takes as given. Blocks
# that are not C++ take another fence tag (sh, cmake, text, console).
#
# It sets <prefix>_blocks (the page's C++ blocks), <prefix>_runs (how many main() runs) and
# <prefix>_components (the components of find_package(mase) the page's includes need: onnx for
# mase/io/onnx*, toml for mase/io/quant_config.hpp and mase/search*), and fails on a page whose
# fences it cannot read. Used by tests/docs (in the build tree) and by tests/install (against the
# installed package).

cmake_policy(VERSION 3.21)  # for this file only (include() gives it a policy scope of its own)

function(mase_doc_snippets_program page name output prefix)
  file(READ "${page}" text)
  # `text` always starts with the newline that ends line number `line` of the page.
  string(PREPEND text "\n")
  # C++ that would escape the test: an indented fence (in a list) or another tag for C++.
  if(text MATCHES "\n[ \t]+```[ \t]*cpp")
    message(FATAL_ERROR "${name}: a ```cpp fence is indented; the docs' test reads only fences at the start of a line")
  endif()
  if(text MATCHES "\n```[ \t]*([cC]\\+\\+|[cC][xX][xX]|cc|hpp|CPP|Cpp)([ \t]|\n)")
    message(FATAL_ERROR "${name}: C++ fenced as ```${CMAKE_MATCH_1}: tag it cpp, which the docs' test compiles")
  endif()
  set(line 0)
  set(includes "")
  set(code "")
  set(calls "")
  set(blocks 0)
  set(runs 0)
  while(TRUE)
    string(FIND "${text}" "\n```cpp" at)
    if(at EQUAL -1)
      break()
    endif()
    string(SUBSTRING "${text}" 0 ${at} before)
    string(REGEX MATCHALL "\n" newlines "${before}")
    list(LENGTH newlines n)
    math(EXPR fence_line "${line} + ${n} + 1")
    math(EXPR after "${at} + 7")
    string(SUBSTRING "${text}" ${after} -1 text)
    string(FIND "${text}" "\n" eol)
    if(eol EQUAL -1)
      message(FATAL_ERROR "${name}:${fence_line}: a ```cpp fence ends the page")
    endif()
    string(SUBSTRING "${text}" 0 ${eol} info)
    string(SUBSTRING "${text}" ${eol} -1 text)
    set(line ${fence_line})
    if(NOT info STREQUAL "" AND NOT info MATCHES "^[ \t]")
      continue()  # ```cppfront or the like: another language
    endif()

    # The words after "cpp".
    string(REGEX MATCHALL "[^ \t]+" words "${info}")
    set(mode run)
    foreach(word IN LISTS words)
      if(word MATCHES "^(no_run|global|members)$" AND mode STREQUAL "run")
        set(mode ${word})
      else()
        message(FATAL_ERROR "${name}:${fence_line}: '${word}' after ```cpp: one of no_run, global or members, or nothing")
      endif()
    endforeach()

    # The block: up to the closing fence at the start of a line.
    string(FIND "${text}" "\n```" stop)
    if(stop EQUAL -1)
      message(FATAL_ERROR "${name}:${fence_line}: the ```cpp block is never closed")
    endif()
    string(SUBSTRING "${text}" 1 ${stop} block)  # from its first line, with its last newline
    string(REGEX MATCHALL "\n" newlines "${block}")
    list(LENGTH newlines n)
    math(EXPR first_line "${fence_line} + 1")
    math(EXPR line "${fence_line} + ${n} + 1")  # the closing fence
    math(EXPR rest "${stop} + 1")
    string(SUBSTRING "${text}" ${rest} -1 text)
    string(FIND "${text}" "\n" eol)
    if(eol EQUAL -1)
      set(text "\n")
    else()
      string(SUBSTRING "${text}" ${eol} -1 text)
    endif()

    # The statements given to it: an HTML comment that ends on the line before the fence.
    set(given "")
    string(REGEX REPLACE "[ \t]+$" "" before "${before}")
    if(before MATCHES "-->$")
      string(FIND "${before}" "<!--" open REVERSE)
      if(NOT open EQUAL -1)
        math(EXPR open "${open} + 4")
        string(SUBSTRING "${before}" ${open} -1 comment)
        string(LENGTH "${comment}" length)
        math(EXPR length "${length} - 3")
        string(SUBSTRING "${comment}" 0 ${length} comment)
        if(comment MATCHES "^[ \t\n]*given:")
          if(NOT mode STREQUAL "run" AND NOT mode STREQUAL "no_run")
            message(FATAL_ERROR "${name}:${fence_line}: a ${mode} block takes no given statements")
          endif()
          string(FIND "${comment}" "given:" colon)
          math(EXPR colon "${colon} + 6")
          string(SUBSTRING "${comment}" ${colon} -1 comment)
          string(REGEX MATCHALL "\n" newlines "${comment}")
          list(LENGTH newlines n)
          math(EXPR given_line "${fence_line} - 1 - ${n}")
          set(given "#line ${given_line} \"${name}\"\n${comment}\n")
        endif()
      endif()
    endif()

    # Its includes, hoisted (the line stays, empty, so that #line stays true).
    string(REGEX MATCHALL "(^|\n)[ \t]*#[ \t]*include[ \t]*<[^>\n]+>" found "${block}")
    foreach(include IN LISTS found)
      string(STRIP "${include}" include)
      if(NOT include IN_LIST includes)
        list(APPEND includes "${include}")
      endif()
    endforeach()
    string(REGEX REPLACE "(^|\n)[ \t]*#[ \t]*include[^\n]*" "\\1" block "${block}")

    math(EXPR blocks "${blocks} + 1")
    set(body "#line ${first_line} \"${name}\"\n${block}")
    if(mode STREQUAL "global")
      string(APPEND code "// block ${blocks}, ${name}:${first_line}\n${body}\n")
    elseif(mode STREQUAL "members")
      string(APPEND code "// block ${blocks}, ${name}:${first_line}\nstruct block_${blocks}_members {\n${body}};\n\n")
    elseif(mode STREQUAL "no_run")
      string(APPEND code "// block ${blocks}, ${name}:${first_line}: compiled, not run\n[[maybe_unused]] static void block_${blocks}() {\n${given}${body}}\n\n")
    else()
      math(EXPR runs "${runs} + 1")
      string(APPEND code "// block ${blocks}, ${name}:${first_line}\nstatic void block_${blocks}() {\n${given}${body}}\n\n")
      string(APPEND calls "  failed += run_block(block_${blocks}, ${first_line});\n")
    endif()
  endwhile()

  set(components "")
  foreach(include IN LISTS includes)
    if(include MATCHES "<mase/io/onnx")
      list(APPEND components onnx)
    elseif(include MATCHES "<mase/(io/quant_config\\.hpp|search)")
      list(APPEND components toml)
    endif()
  endforeach()
  list(REMOVE_DUPLICATES components)

  list(JOIN includes "\n" include_lines)
  set(program "// Generated from ${name} by tests/docs/snippets.cmake: each ```cpp block of the page.
#include <mase/mase.hpp>
${include_lines}

#include <cassert>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

using namespace mase;

${code}#line 1 \"${name} (the generated main)\"
static int run_block(void (*block)(), int line) {
  try {
    block();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << \"${name}:\" << line << \": the block threw: \" << e.what() << '\\n';
    return 1;
  }
}

int main() {
  [[maybe_unused]] int failed = 0;
${calls}  std::cout << \"${name}: ${blocks} C++ blocks compiled, ${runs} ran\" << (failed != 0 ? \", and failed\" : \"\") << '\\n';
  return failed != 0 ? 1 : 0;
}
")
  file(WRITE "${output}.new" "${program}")
  file(COPY_FILE "${output}.new" "${output}" ONLY_IF_DIFFERENT)
  file(REMOVE "${output}.new")
  set(${prefix}_blocks ${blocks} PARENT_SCOPE)
  set(${prefix}_runs ${runs} PARENT_SCOPE)
  set(${prefix}_components "${components}" PARENT_SCOPE)
endfunction()
