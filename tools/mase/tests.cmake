# CTest entries for the mase tool, run on the committed fixtures (included by CMakeLists.txt when
# MASE_BUILD_TESTS is on). Each runs check_command.cmake, which checks the exact exit status and
# the output.
get_filename_component(mase_cli_root "${CMAKE_CURRENT_SOURCE_DIR}/../.." ABSOLUTE)
set(mase_cli_fixtures "${mase_cli_root}/tests/fixtures")
set(mase_cli_out "${CMAKE_CURRENT_BINARY_DIR}/cli_test_output")
set(mase_cli_mlp "${mase_cli_fixtures}/onnx/mlp/model.onnx")
set(mase_cli_mlp_input "${mase_cli_fixtures}/onnx/mlp/test_data_set_0/input_0.pb")
set(mase_cli_config "${mase_cli_fixtures}/quantize/integer.toml")

# mase_cli_check(NAME <name> ARGS <arg>... RC <status> [STDOUT <regex>] [STDERR <regex>] [ONE_LINE]
#                [FRESH_DIR <dir>])
function(mase_cli_check)
  cmake_parse_arguments(PARSE_ARGV 0 check "ONE_LINE" "NAME;RC;STDOUT;STDERR;FRESH_DIR" "ARGS")
  set(command "$<TARGET_FILE:mase_cli>")
  if(check_ARGS)
    list(JOIN check_ARGS "|" joined)
    string(APPEND command "|${joined}")
  endif()
  set(defines "-DARGS=${command}" "-DEXPECT_RC=${check_RC}" "-DWORKING_DIRECTORY=${mase_cli_root}")
  if(DEFINED check_STDOUT)
    list(APPEND defines "-DSTDOUT_REGEX=${check_STDOUT}")
  endif()
  if(DEFINED check_STDERR)
    list(APPEND defines "-DSTDERR_REGEX=${check_STDERR}")
  endif()
  if(check_ONE_LINE)
    list(APPEND defines "-DSTDERR_ONE_LINE=ON")
  endif()
  if(DEFINED check_FRESH_DIR)
    list(APPEND defines "-DFRESH_DIR=${check_FRESH_DIR}")
  endif()
  add_test(NAME "mase_cli/${check_NAME}"
           COMMAND ${CMAKE_COMMAND} ${defines} -P "${CMAKE_CURRENT_SOURCE_DIR}/check_command.cmake")
  # A check that builds a simulator or synthesizes starts before the quick ones (mase_test_cost).
  if(check_ARGS MATCHES "--simulate|--synth|--place")
    set_tests_properties("mase_cli/${check_NAME}" PROPERTIES COST ${mase_test_cost_tools})
  endif()
endfunction()

# --help everywhere; --version.
mase_cli_check(NAME help ARGS --help RC 0 STDOUT "Usage: mase .*Subcommands:.*onnx-test")
foreach(sub IN ITEMS info draw run profile quantize onnx-test emit-verilog search)
  mase_cli_check(NAME "help_${sub}" ARGS ${sub} --help RC 0 STDOUT "Usage: mase ${sub} ")
endforeach()
mase_cli_check(NAME version ARGS --version RC 0 STDOUT "mase 0\\.1\\.0")

# Usage errors: exit 2, one line.
mase_cli_check(NAME usage_no_subcommand ARGS RC 2 ONE_LINE STDERR "subcommand is required")
mase_cli_check(NAME usage_unknown_option ARGS info ${mase_cli_mlp} --frobnicate RC 2 ONE_LINE)
mase_cli_check(NAME usage_bad_mode ARGS run ${mase_cli_mlp} --input x=${mase_cli_mlp_input} -o ${mase_cli_out}/bad_mode
               --mode fast RC 2 ONE_LINE)
mase_cli_check(NAME usage_bit_exact_without_config ARGS run ${mase_cli_mlp} --input x=${mase_cli_mlp_input}
               -o ${mase_cli_out}/no_config --mode bit-exact RC 2 ONE_LINE STDERR "needs --config")
mase_cli_check(NAME usage_input_without_name ARGS run ${mase_cli_mlp} --input ${mase_cli_mlp_input}
               -o ${mase_cli_out}/no_name RC 2 ONE_LINE STDERR "NAME=VALUE")
mase_cli_check(NAME usage_unknown_input ARGS run ${mase_cli_mlp} --input z=${mase_cli_mlp_input}
               -o ${mase_cli_out}/unknown_input RC 2 ONE_LINE STDERR "no input \"z\". its inputs are: x")
mase_cli_check(NAME usage_bad_input_shape ARGS info ${mase_cli_mlp} --input-shape x=4,seven RC 2 ONE_LINE
               STDERR "\"seven\" is not a positive integer")

# Bad files: exit 1, one line naming the file.
mase_cli_check(NAME error_missing_model ARGS info does_not_exist.onnx RC 1 ONE_LINE STDERR "does_not_exist\\.onnx")
mase_cli_check(NAME error_not_a_model ARGS info ${mase_cli_fixtures}/npy/f4_2x3.npy RC 1 ONE_LINE
               STDERR "f4_2x3\\.npy: not an ONNX model")
mase_cli_check(NAME error_input_extension ARGS run ${mase_cli_mlp} --input x=${mase_cli_config}
               -o ${mase_cli_out}/bad_extension RC 1 ONE_LINE STDERR "integer\\.toml: unknown extension")
mase_cli_check(NAME error_damaged_npy_input ARGS run ${mase_cli_mlp} --input x=${mase_cli_fixtures}/npy/fortran_2x3.npy
               -o ${mase_cli_out}/fortran RC 1 ONE_LINE STDERR "fortran_2x3\\.npy.*Fortran")
mase_cli_check(NAME error_input_shape ARGS run ${mase_cli_mlp} --input x=${mase_cli_fixtures}/npy/f4_2x3.npy
               -o ${mase_cli_out}/wrong_shape RC 1 ONE_LINE STDERR "on x=[^ ]*f4_2x3\\.npy: .*\\[2, 3\\]")
mase_cli_check(NAME error_draw_extension ARGS draw ${mase_cli_mlp} -o ${mase_cli_out}/graph.png RC 1 ONE_LINE
               STDERR "graph\\.png")
mase_cli_check(NAME error_onnx_test_not_a_folder ARGS onnx-test ${mase_cli_mlp} RC 1 ONE_LINE STDERR "not a folder")

# info: the MLP's ports, shapes and op counts.
mase_cli_check(NAME info_mlp ARGS info ${mase_cli_mlp} RC 0
               STDOUT "input +x +x +\\[4, 784\\].*output +y +[A-Za-z0-9_]+ +\\[4, 10\\].*Parameters: 218058 .*linear +3\n")
mase_cli_check(NAME info_input_shape ARGS info ${mase_cli_mlp} --input-shape x=2,784 RC 0
               STDOUT "input +x +x +\\[2, 784\\].*\\[2, 10\\]")

# run: the files hold what the evaluator computes, from .pb and from .npy inputs.
foreach(kind IN ITEMS pb npy)
  if(kind STREQUAL "pb")
    set(input "${mase_cli_mlp_input}")
  else()
    set(input "${mase_cli_fixtures}/npy/mlp_input_0.npy")
  endif()
  add_test(NAME "mase_cli/run_mlp_${kind}_input"
           COMMAND ${CMAKE_COMMAND} "-DMASE=$<TARGET_FILE:mase_cli>" "-DMODEL=${mase_cli_mlp}" "-DINPUT=x=${input}"
                   "-DREFERENCE_INPUT=${mase_cli_mlp_input}" -DOUTPUT_NAME=y "-DOUT=${mase_cli_out}/run_${kind}"
                   -P "${CMAKE_CURRENT_SOURCE_DIR}/check_run_output.cmake")
endforeach()
mase_cli_check(NAME run_npy_output ARGS run ${mase_cli_mlp} --input x=${mase_cli_mlp_input} --format npy
               -o ${mase_cli_out}/run_npy_output RC 0 STDOUT "run_npy_output/y\\.npy \\[4, 10\\]"
               FRESH_DIR ${mase_cli_out}/run_npy_output)
mase_cli_check(NAME run_two_batches ARGS run ${mase_cli_mlp} --input x=${mase_cli_mlp_input}
               --input x=${mase_cli_fixtures}/npy/mlp_input_0.npy -o ${mase_cli_out}/run_two RC 0
               STDOUT "y_0\\.pb \\[4, 10\\]\nwrote [^\n]*y_1\\.pb \\[4, 10\\]" FRESH_DIR ${mase_cli_out}/run_two)
mase_cli_check(NAME run_bit_exact ARGS run ${mase_cli_mlp} --input x=${mase_cli_mlp_input} --config ${mase_cli_config}
               --mode bit-exact -o ${mase_cli_out}/run_bit_exact RC 0 STDOUT "y\\.pb \\[4, 10\\]"
               FRESH_DIR ${mase_cli_out}/run_bit_exact)
foreach(mode float bit-exact)
  add_test(NAME "mase_cli/run_jobs_${mode}"
           COMMAND ${CMAKE_COMMAND} "-DMASE=$<TARGET_FILE:mase_cli>" "-DMODEL=${mase_cli_mlp}"
                   "-DINPUT=x=${mase_cli_mlp_input}" "-DCONFIG=${mase_cli_config}" -DMODE=${mode} -DOUTPUT_NAME=y
                   "-DOUT=${mase_cli_out}/run_jobs_${mode}" -P "${CMAKE_CURRENT_SOURCE_DIR}/check_jobs_output.cmake")
endforeach()

# profile, quantize, draw.
mase_cli_check(NAME profile_mlp ARGS profile ${mase_cli_mlp} --input x=${mase_cli_mlp_input}
               --input x=${mase_cli_fixtures}/npy/mlp_input_0.npy RC 0
               STDOUT "range_min_max over 2 batches \\(8 samples\\).*fc1 +linear +weight +-?[0-9]")
mase_cli_check(NAME quantize_mlp ARGS quantize ${mase_cli_mlp} --config ${mase_cli_config}
               -o ${mase_cli_out}/quantize/mlp RC 0
               STDOUT "data_in_0=fixed<8,3> weight=fixed<8,3>.*5 nodes quantized, 0 bypassed\nwrote [^\n]*mlp\\.json and [^\n]*mlp\\.safetensors"
               FRESH_DIR ${mase_cli_out}/quantize)
mase_cli_check(NAME draw_dot ARGS draw ${mase_cli_mlp} -o ${mase_cli_out}/draw/mlp.dot RC 0 STDOUT "mlp\\.dot"
               FRESH_DIR ${mase_cli_out}/draw)

# onnx-test over the committed fixtures, as imported and raised to MASE's coarse ops.
mase_cli_check(NAME onnx_test_fixtures_all ARGS onnx-test ${mase_cli_fixtures}/onnx --require-all RC 0
               STDOUT "6 passed, 0 failed, 0 skipped\n$")
mase_cli_check(NAME onnx_test_fixtures_raised ARGS onnx-test ${mase_cli_fixtures}/onnx --raise --require-all RC 0
               STDOUT "6 passed, 0 failed, 0 skipped\n$")

# ONNX conformance over Debian's libonnx-testdata: no test of supported ops may fail, and every
# PyTorch-exported test must be supported (--require-all).
set(mase_onnx_testdata "/usr/share/libonnx-testdata/data")
foreach(suite IN ITEMS node simple)
  mase_cli_check(NAME "conformance_${suite}" ARGS onnx-test ${mase_onnx_testdata}/${suite} --quiet RC 0
                 STDOUT "[1-9][0-9]* passed, 0 failed, [0-9]+ skipped\n$")
endforeach()
# Run on two threads, the report is the same, line for line.
add_test(NAME "mase_cli/onnx_test_jobs"
         COMMAND ${CMAKE_COMMAND} "-DMASE=$<TARGET_FILE:mase_cli>" "-DTESTS=${mase_onnx_testdata}/node"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/check_onnx_test_jobs.cmake")
foreach(suite IN ITEMS pytorch-converted pytorch-operator)
  mase_cli_check(NAME "conformance_${suite}" ARGS onnx-test ${mase_onnx_testdata}/${suite} --quiet --require-all RC 0
                 STDOUT "[1-9][0-9]* passed, 0 failed, 0 skipped\n$")
endforeach()

# emit-verilog: the fixture CNN (conv, batch norm, relu, max pool, conv, batch norm, relu,
# average pool, flatten, linear) emitted, linted, simulated with both simulators (the testbench
# compares every output word with the bit-exact evaluator) and synthesized.
set(mase_cli_hardware_config "${mase_cli_fixtures}/quantize/hardware_fixed8.toml")
mase_cli_check(NAME emit_verilog_cnn
               ARGS emit-verilog ${mase_cli_fixtures}/onnx/cnn/model.onnx --config ${mase_cli_hardware_config}
                    --out ${mase_cli_out}/emit_verilog/cnn -n 2 -p 4 --lint --simulate verilator --simulate iverilog
                    --synth
               RC 0
               STDOUT "components: conv1 \\(mase_conv2d\\), bn1 \\(mase_batch_norm\\).*lint \\(verilator --lint-only -Wall\\): clean\nverilator: 20 passed, 0 failed, [0-9]+ cycles.*-> bit-exact\niverilog: 20 passed, 0 failed.*-> bit-exact\nyosys synth_xilinx: [0-9]+ cells, [0-9]+ flip-flops, [0-9]+ LUTs, [0-9]+ multipliers"
               STDERR "mase emit-verilog: linting with verilator[^\n]*\nmase emit-verilog: building and running the testbench with verilator\nmase emit-verilog: building and running the testbench with iverilog\nmase emit-verilog: synthesizing with yosys"
               FRESH_DIR ${mase_cli_out}/emit_verilog)
# emit-verilog on bert-tiny from its ONNX file (raised; fixed8.toml), with the eight reference
# sequences (16 logit words) as the testbench's: the design onnx/test_bert_tiny_hardware emits
# through the library and simulates, lint-clean here.
mase_cli_check(NAME emit_verilog_bert_tiny
               ARGS emit-verilog ${mase_cli_fixtures}/bert_tiny/bert_tiny_opset17.onnx
                    --config ${mase_cli_fixtures}/bert_tiny/fixed8.toml
                    -i input_ids=${mase_cli_fixtures}/bert_tiny/reference_input_ids.npy
                    -i attention_mask=${mase_cli_fixtures}/bert_tiny/reference_attention_mask.npy
                    --out ${mase_cli_out}/emit_verilog_bert/bert_tiny -p 4,8 --lint
               RC 0
               STDOUT "components: word \\(mase_embedding\\).*testbench: 8 samples.*lint \\(verilator --lint-only -Wall\\): clean\n"
               FRESH_DIR ${mase_cli_out}/emit_verilog_bert)
# emit-verilog on the torchvision ViT (exported at batch 1; its attention raised, then split into
# hardware ops): the four reference images as the batch-1 design's testbench, lint-clean; the
# same design as onnx/test_vit_hardware's, which simulates it.
mase_cli_check(NAME emit_verilog_vit
               ARGS emit-verilog ${mase_cli_fixtures}/vit/vit_opset17.onnx
                    --config ${mase_cli_fixtures}/vit/fixed8.toml
                    -i x=${mase_cli_fixtures}/vit/reference_images.npy
                    --out ${mase_cli_out}/emit_verilog_vit/vit -p 4 8 --lint
               RC 0
               STDOUT "components: conv_proj \\(mase_conv2d\\), Transpose \\(mase_permute\\), Concat \\(mase_cat\\).*testbench: 4 samples.*lint \\(verilator --lint-only -Wall\\): clean\n"
               FRESH_DIR ${mase_cli_out}/emit_verilog_vit)
# MASE's JSC-Toy from its PyTorch export: four BatchNormalization nodes on [N, C] features (each a
# batch_norm1d on mase_batch_norm), the Linear layers and the ReLUs, simulated bit-exact.
mase_cli_check(NAME emit_verilog_jsc_toy
               ARGS emit-verilog ${mase_cli_fixtures}/onnx/jsc_toy/model.onnx --config ${mase_cli_hardware_config}
                    --out ${mase_cli_out}/emit_verilog_jsc/jsc_toy -n 8 -p 4 --simulate verilator
               RC 0
               STDOUT "components: [^\n]*\\(mase_batch_norm\\)[^\n]*\\(mase_linear\\).*verilator: 40 passed, 0 failed.*-> bit-exact"
               FRESH_DIR ${mase_cli_out}/emit_verilog_jsc)
# hls4ml's jet-tagging dense core (16-64-32-32-5, 8-bit) on iCE40 UP5K from one command: the cost
# model's iCE40 estimate (its SB_MAC16s and SB_RAM40_4Ks those yosys then maps), simulated
# bit-exact, synthesized with synth_ice40, placed and routed by nextpnr-ice40 (which counts the
# part's 5280 logic cells, 8 DSPs and 30 block RAMs) and packed by icepack; the synthesized netlist
# runs the same testbench with yosys's iCE40 cell models.
mase_cli_check(NAME emit_verilog_jet_ice40_up5k
               ARGS emit-verilog ${mase_cli_fixtures}/onnx/jet_dnn/model.onnx --config ${mase_cli_hardware_config}
                    --out ${mase_cli_out}/emit_verilog_jet/up5k -n 4 -p 2,1 --simulate verilator --synth --target ice40-up5k --simulate-netlist
               RC 0
               STDOUT "components: fc1 \\(mase_linear\\).*cost model \\(ice40-up5k\\): 2048 cycles per sample \\(fc2\\); about [0-9]+ LUT4s, [0-9]+ flip-flops, 5 DSPs, 13 block RAMs \\(SB_RAM40_4K\\); the part has 5280 logic cells, 8 DSPs, 30 block RAMs\n.*verilator: 20 passed, 0 failed.*-> bit-exact\nyosys synth_ice40: [0-9]+ cells, [0-9]+ flip-flops, [0-9]+ LUT4s, [0-9]+ carries, 5 multipliers \\(SB_MAC16\\), 13 block RAMs \\(SB_RAM40_4K\\)\nnextpnr-ice40 \\(up5k sg48\\): [0-9]+/5280 logic cells, 5/8 DSPs, [0-9]+/30 block RAMs, 30/96 I/Os. Fmax [0-9.]+ MHz \\(12 MHz asked\\)\nbitstream \\(icepack\\): [^\n]*top_core.bin\ntiming: 2048 cycles per sample at Fmax [0-9.]+ MHz: one sample every [0-9]+ ns, [0-9]+ samples per second\nnetlist \\(iverilog, ice40-up5k cells\\): 20 passed, 0 failed[^\n]*-> bit-exact"
               STDERR "synthesizing with yosys synth_ice40[^\n]*\nmase emit-verilog: placing and routing with nextpnr-ice40 on Lattice iCE40 UltraPlus UP5K"
               FRESH_DIR ${mase_cli_out}/emit_verilog_jet)
mase_cli_check(NAME emit_verilog_unknown_target
               ARGS emit-verilog ${mase_cli_fixtures}/onnx/jet_dnn/model.onnx --config ${mase_cli_hardware_config}
                    --out ${mase_cli_out}/emit_verilog_bad_target --synth --target ecp5
               RC 2 ONE_LINE STDERR "--target: ecp5 not in .xc7.ice40-up5k.ice40-hx8k.")
# Channels-last streams refuse the fixture CNN's flatten of a 4x4 map (PyTorch's order), naming it.
mase_cli_check(NAME emit_verilog_channels_last_refuses_flatten
               ARGS emit-verilog ${mase_cli_fixtures}/onnx/cnn/model.onnx --config ${mase_cli_hardware_config}
                    --channels-last --out ${mase_cli_out}/emit_verilog_channels_last
               RC 1 ONE_LINE STDERR "node [A-Za-z0-9_./]+ \\((flatten|reshape|view)\\) reshapes the channels-last map .* pool it to one pixel first, or emit without channels_last")
# A format with no hardware: one line naming the node and the entry.
mase_cli_check(NAME emit_verilog_not_fixed_point
               ARGS emit-verilog ${mase_cli_mlp} --config ${mase_cli_fixtures}/quantize/minifloat_ieee.toml
                    --out ${mase_cli_out}/emit_verilog_minifloat
               RC 1 ONE_LINE STDERR "node [a-z0-9_]+ \\(linear\\): data_in_0 has format .*fixed point")

# PyTorch exports that met frictions (tests/fixtures/onnx_export, make_export_fixtures.py).
set(mase_cli_exports "${mase_cli_fixtures}/onnx_export")
set(mase_cli_gelu_mlp "${mase_cli_exports}/mlp_gelu_dynamic_batch")
# Against PyTorch's outputs: the MLP with a symbolic batch (its data set gives 5), and the ViT
# class token, whose expand(-1, …) exports as Equal and Where on constants, folded at import.
mase_cli_check(NAME onnx_test_exports
               ARGS onnx-test ${mase_cli_gelu_mlp} ${mase_cli_exports}/expand_class_token --require-all RC 0
               STDOUT "PASS mlp_gelu_dynamic_batch\nPASS expand_class_token\n2 passed, 0 failed, 0 skipped\n$")
mase_cli_check(NAME onnx_test_exports_raised
               ARGS onnx-test ${mase_cli_gelu_mlp} ${mase_cli_exports}/expand_class_token --raise --require-all RC 0
               STDOUT "2 passed, 0 failed, 0 skipped\n$")
# The real architectures of issue 13 (make_transformer_fixtures.py): torchvision's ViT at opsets 13
# and 17, and a BERT encoder with an attention mask (int64 inputs), the last with a symbolic batch
# sized from its data set (3). Each export holds Equal and Where, folded at import; each must pass
# against PyTorch's outputs, plain and raised.
set(mase_cli_transformers ${mase_cli_exports}/vit_tiny_opset13 ${mase_cli_exports}/vit_tiny_opset17
    ${mase_cli_exports}/bert_tiny_opset13 ${mase_cli_exports}/bert_tiny_opset17_dynamic_batch)
set(mase_cli_transformers_passed
    "PASS vit_tiny_opset13\nPASS vit_tiny_opset17\nPASS bert_tiny_opset13\nPASS bert_tiny_opset17_dynamic_batch\n4 passed, 0 failed, 0 skipped\n$")
mase_cli_check(NAME onnx_test_transformer_exports ARGS onnx-test ${mase_cli_transformers} --require-all RC 0
               STDOUT "^${mase_cli_transformers_passed}")
mase_cli_check(NAME onnx_test_transformer_exports_raised
               ARGS onnx-test ${mase_cli_transformers} --raise --require-all RC 0
               STDOUT "^${mase_cli_transformers_passed}")
# run takes a symbolic batch from the input file (.npy and .pb), and writes what a fresh
# evaluation gives (check_run_output.cmake; onnx_test_exports checks that against PyTorch).
foreach(kind IN ITEMS pb npy)
  if(kind STREQUAL "pb")
    set(input "${mase_cli_gelu_mlp}/test_data_set_0/input_0.pb")
  else()
    set(input "${mase_cli_exports}/mlp_gelu_input.npy")
  endif()
  add_test(NAME "mase_cli/run_symbolic_batch_${kind}"
           COMMAND ${CMAKE_COMMAND} "-DMASE=$<TARGET_FILE:mase_cli>" "-DMODEL=${mase_cli_gelu_mlp}/model.onnx"
                   "-DINPUT=x=${input}" "-DREFERENCE_INPUT=${mase_cli_gelu_mlp}/test_data_set_0/input_0.pb"
                   -DOUTPUT_NAME=y "-DOUT=${mase_cli_out}/run_symbolic_batch_${kind}"
                   -P "${CMAKE_CURRENT_SOURCE_DIR}/check_run_output.cmake")
endforeach()
mase_cli_check(NAME run_symbolic_batch_shape ARGS run ${mase_cli_gelu_mlp}/model.onnx
               -i x=${mase_cli_exports}/mlp_gelu_input.npy -o ${mase_cli_out}/run_symbolic_batch_shape RC 0
               STDOUT "y\\.pb \\[5, 8\\]" FRESH_DIR ${mase_cli_out}/run_symbolic_batch_shape)
# Data that contradicts a fixed dimension: one line naming the file and both shapes.
mase_cli_check(NAME error_symbolic_batch_fixed_dimension ARGS run ${mase_cli_gelu_mlp}/model.onnx
               -i x=${mase_cli_fixtures}/npy/f4_2x3.npy -o ${mase_cli_out}/symbolic_batch_wrong RC 1 ONE_LINE
               STDERR "model\\.onnx on x=[^ ]*f4_2x3\\.npy: graph input \"x\" has shape \\[batch, 16\\] in the model, and the data given for it has shape \\[2, 3\\]: dimension 1 is fixed at 16\n")
# onnx-test's report of a miss: the largest absolute and relative errors, each with where it is.
# The expected output is perturbed on purpose (make_export_fixtures.py): [1, 2] by 0.5, [0, 1]
# from 0.03125 to 0.125.
mase_cli_check(NAME onnx_test_reports_largest_errors ARGS onnx-test ${mase_cli_exports}/perturbed_output RC 1
               STDOUT "^FAIL perturbed_output: test_data_set_0: output y: 2 of 6 elements out of tolerance \\(atol 1e-07, rtol 0\\.001\\). largest absolute error 0\\.5 at y\\[1, 2\\] \\(flat index 5\\): 6 vs expected 6\\.5. largest relative error 0\\.75 at y\\[0, 1\\] \\(flat index 1\\): 0\\.03125 vs expected 0\\.125\n0 passed, 1 failed, 0 skipped\n$")
# emit-verilog from MASE's own integer.toml (no data_out keys, integer relu) on the exported MLP
# with GELU: raised by default, the formats the config leaves out derived and reported, the
# design lint-clean and bit-exact in simulation on the fixture's 5 samples (5 × 8 output words).
mase_cli_check(NAME emit_verilog_gelu_mlp_integer
               ARGS emit-verilog ${mase_cli_gelu_mlp}/model.onnx -c ${mase_cli_config}
                    -o ${mase_cli_out}/emit_verilog_gelu/mlp -i x=${mase_cli_gelu_mlp}/test_data_set_0/input_0.pb
                    --lint --simulate verilator
               RC 0
               STDOUT "fc1 +linear +data_out_0 +fixed<21,6> +exact: the accumulator plus the bias\n[^\n]*gelu +data_out_0 +fixed<8,3> +default: its input's format \\(gelu has no finite exact result\\)\n.*relu +data_in_0 +fixed<9,3> +exact: integer's unsigned relu input.*lint \\(verilator --lint-only -Wall\\): clean\nverilator: 40 passed, 0 failed, [0-9]+ cycles.*-> bit-exact\n$"
               FRESH_DIR ${mase_cli_out}/emit_verilog_gelu)
# Without raising, the exporter's Erf has no component: one line naming the node.
mase_cli_check(NAME emit_verilog_no_raise
               ARGS emit-verilog ${mase_cli_gelu_mlp}/model.onnx -c ${mase_cli_config} --no-raise
                    -o ${mase_cli_out}/emit_verilog_no_raise -i x=${mase_cli_gelu_mlp}/test_data_set_0/input_0.pb
               RC 1 ONE_LINE STDERR "node [A-Za-z0-9_]+ \\((div|erf)\\)(: the hardware divides only by a constant power of two| has no hardware component)")

# The tools end with mase: SIGTERM during --synth ends yosys, and leaves no finished-looking report.
add_test(NAME mase_cli/child_tools_end_with_mase
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_child_processes.sh $<TARGET_FILE:mase_cli>
                 ${mase_cli_fixtures}/onnx/cnn/model.onnx ${mase_cli_fixtures}/quantize/hardware_fixed8.toml
                 ${mase_cli_out}/child_processes)
set_tests_properties(mase_cli/child_tools_end_with_mase PROPERTIES PASS_REGULAR_EXPRESSION "yosys ended with mase")

# Inputs checked where they enter, each refusal naming the file or option and the fix.
mase_cli_check(NAME unknown_subcommand_suggests ARGS inf ${mase_cli_mlp} RC 2 ONE_LINE
               STDERR "unknown subcommand \"inf\" \\(did you mean info\\?\\)")
mase_cli_check(NAME help_emit_verilog_out ARGS emit-verilog --help RC 0
               STDOUT "new, empty, or one mase emitted before")
add_test(NAME mase_cli/run_config_without_mode_is_fake_quant
         COMMAND ${CMAKE_COMMAND} "-DMASE=$<TARGET_FILE:mase_cli>" "-DMODEL=${mase_cli_mlp}"
                 "-DINPUT=x=${mase_cli_mlp_input}" "-DCONFIG=${mase_cli_config}" -DOUTPUT_NAME=y
                 "-DOUT=${mase_cli_out}/run_default_mode" -P "${CMAKE_CURRENT_SOURCE_DIR}/check_run_default_mode.cmake")
mase_cli_check(NAME input_shape_against_file ARGS run ${mase_cli_mlp} --input-shape x=2,784 -i x=${mase_cli_mlp_input}
               -o ${mase_cli_out}/input_shape_against_file RC 1 ONE_LINE
               STDERR "--input x=[^ ]*input_0\\.pb: the file has shape \\[4, 784\\], and --input-shape gives x the shape \\[2, 784\\]")
mase_cli_check(NAME input_shape_zero ARGS info ${mase_cli_mlp} --input-shape x=0,784 RC 2 ONE_LINE
               STDERR "\"0\" is not a positive integer")
mase_cli_check(NAME input_shape_rank ARGS info ${mase_cli_mlp} --input-shape x=784 RC 1 ONE_LINE
               STDERR "graph input \"x\": the shape given for it, \\[784\\], has 1 dimension, and the model declares 2 \\(\\[4, 784\\]\\). give all 2")
set(mase_cli_symbolic "${mase_cli_fixtures}/onnx_export/mlp_gelu_dynamic_batch/model.onnx")
mase_cli_check(NAME unknown_input_before_symbolic_batch ARGS run ${mase_cli_symbolic}
               -i z=${mase_cli_fixtures}/onnx_export/mlp_gelu_input.npy -o ${mase_cli_out}/unknown_symbolic RC 2 ONE_LINE
               STDERR "--input z=[^ ]*: the model [^ ]*model\\.onnx has no input \"z\". its inputs are: x")
# info and draw describe a model with a symbolic batch as it is, "batch" by name (the shapes onnx's
# own shape inference gives: x [batch, 16], y [batch, 8]; the README's MLP x [batch, 784], its
# logits [batch, 10] where the file names that dimension Gemmlogits_dim_0; the BERT encoder's
# embeddings [batch, 8, 32], its logits [batch, 3]).
mase_cli_check(NAME info_symbolic_batch ARGS info ${mase_cli_symbolic} RC 0
               STDOUT "input +x +x +\\[batch, 16\\]\noutput +y +fc3 +\\[batch, 8\\]\nSymbolic dimensions: batch \\(x\\[0\\]\\)\\. [^\n]*\n\nParameters: 947 in 9 tensors .*\nx +placeholder +placeholder +shape=\\[batch, 16\\]\n")
mase_cli_check(NAME info_symbolic_batch_readme_mlp ARGS info ${mase_cli_root}/examples/data/mlp_784_256_64_10.onnx RC 0
               STDOUT "input +x +x +\\[batch, 784\\]\noutput +logits +fc3 +\\[batch, 10\\]\nSymbolic dimensions: batch \\(x\\[0\\]\\)")
mase_cli_check(NAME info_symbolic_batch_shapes ARGS info ${mase_cli_exports}/bert_tiny_opset17_dynamic_batch/model.onnx --shapes RC 0
               STDOUT "input +input_ids +input_ids +\\[batch, 8\\]\ninput +attention_mask +attention_mask +\\[batch, 8\\]\noutput +logits +classifier +\\[batch, 3\\]\nSymbolic dimensions: batch \\(input_ids\\[0\\], attention_mask\\[0\\]\\)\\. [^\n]*\n\nParameters: 20174 in 51 tensors [^\n]*\nConstants whose size follows the symbolic dimensions \\(not counted\\): token_type_embeddings\\.value \\[batch, 8, 32\\]\n.* reshape +layers_0_attention_query_1 +shape=\\[batch, 8, 2, 16\\]\n.*\nword_embeddings +data_in_0: \\[50, 32\\], data_in_1: \\[batch, 8\\] +data_out_0: \\[batch, 8, 32\\]\n")
mase_cli_check(NAME info_symbolic_batch_given ARGS info ${mase_cli_symbolic} --input-shape x=2,16 RC 0
               STDOUT "input +x +x +\\[2, 16\\]\noutput +y +fc3 +\\[2, 8\\]\n\nParameters: 947 in 9 tensors")
add_test(NAME mase_cli/draw_symbolic_batch
         COMMAND ${CMAKE_COMMAND} "-DMASE=$<TARGET_FILE:mase_cli>" "-DMODEL=${mase_cli_symbolic}"
                 "-DOUT=${mase_cli_out}/draw_symbolic_batch"
                 "-DSTDOUT_REGEX=^wrote [^\n]*model\\.(dot|svg)\nsymbolic dimensions: batch \\(x\\[0\\]\\), drawn by name\n$"
                 "-DDOT_REGEX=\"x\" \\[label=\"{x\\|placeholder\\(shape=\\[batch, 16\\]\\)\\|data_out_0: float32 \\[batch, 16\\]}\".*\"fc3\" \\[label=\"{fc3\\|linear\\(in_features=16, out_features=8, bias=true\\)\\|data_out_0: float32 \\[batch, 8\\]}\""
                 "-DSVG_REGEX=>placeholder\\(shape=\\[batch, 16\\]\\)</text>.*>data_out_0: float32 \\[batch, 8\\]</text>"
                 "-DNOT_REGEX=\\[53[],]"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/check_draw_output.cmake")
# Running, quantizing and emitting still need the real size (describing is what goes without).
mase_cli_check(NAME quantize_symbolic_batch_hint ARGS quantize ${mase_cli_symbolic} -c ${mase_cli_config}
               -o ${mase_cli_out}/quantize_symbolic/q RC 1 ONE_LINE
               STDERR "symbolic dimension \"batch\". give its shape with --input-shape x=…, or its data with --input x=FILE\n")
mase_cli_check(NAME emit_verilog_symbolic_batch_hint ARGS emit-verilog ${mase_cli_symbolic} -c ${mase_cli_hardware_config}
               -o ${mase_cli_out}/emit_symbolic RC 1 ONE_LINE
               STDERR "symbolic dimension \"batch\". give its shape with --input-shape x=…, or its data with --input x=FILE\n")
mase_cli_check(NAME run_symbolic_batch_hint ARGS run ${mase_cli_symbolic} --input-shape y=1,8
               -i x=${mase_cli_fixtures}/onnx_export/mlp_gelu_input.npy -o ${mase_cli_out}/unknown_shape RC 2 ONE_LINE
               STDERR "--input-shape y=1,8: the model [^ ]*model\\.onnx has no input \"y\"")
mase_cli_check(NAME profile_counts_uneven_batches ARGS profile ${mase_cli_symbolic}
               -i x=${mase_cli_fixtures}/onnx_export/mlp_gelu_input.npy
               -i x=${mase_cli_fixtures}/search/mlp_gelu_one_row.npy RC 0
               STDOUT "range_min_max over 2 batches \\(6 samples\\)")
mase_cli_check(NAME emit_verilog_reports_the_file_shape ARGS emit-verilog ${mase_cli_mlp} -c ${mase_cli_hardware_config}
               -i x=${mase_cli_mlp_input} -o ${mase_cli_out}/emit_file_shape RC 1 ONE_LINE
               STDERR "so [^ ]*input_0\\.pb's shape \\[4, 784\\] is read as \\[1, 784\\]")
set(mase_cli_labels_search search ${mase_cli_mlp} -c ${mase_cli_fixtures}/search/mlp_accuracy.toml
    -d x=${mase_cli_mlp_input} -j 1)
mase_cli_check(NAME search_labels_out_of_range
               ARGS ${mase_cli_labels_search} --labels ${mase_cli_fixtures}/search/mlp_labels_out_of_range.npy
                    -o ${mase_cli_out}/search_labels_range RC 1 ONE_LINE
               STDERR "--labels [^ ]*mlp_labels_out_of_range\\.npy: label 23 of sample 0 is not a class of the model, whose first output has 10 classes \\(0 to 9\\)")
mase_cli_check(NAME search_labels_count
               ARGS ${mase_cli_labels_search} --labels ${mase_cli_fixtures}/search/mlp_labels_5.npy
                    -o ${mase_cli_out}/search_labels_count RC 1 ONE_LINE
               STDERR "mlp_labels_5\\.npy: 5 labels for 4 samples. give one label per sample")
mase_cli_check(NAME search_labels_rank
               ARGS ${mase_cli_labels_search} --labels ${mase_cli_mlp_input} -o ${mase_cli_out}/search_labels_rank
               RC 1 ONE_LINE STDERR "input_0\\.pb: it has shape \\[4, 784\\]. labels are one class per sample, shape \\[4\\]")
mase_cli_check(NAME search_labels_good
               ARGS ${mase_cli_labels_search} --labels ${mase_cli_fixtures}/search/mlp_labels.npy
                    -o ${mase_cli_out}/search_labels_good RC 0 FRESH_DIR ${mase_cli_out}/search_labels_good
               STDOUT "4 trials \\(4 run now[^\n]*, 0 failed")
mase_cli_check(NAME search_key_typo_at_parse_time
               ARGS search ${mase_cli_mlp} -c ${mase_cli_fixtures}/search/mlp_key_typo.toml -d x=${mase_cli_mlp_input}
                    --labels ${mase_cli_fixtures}/search/mlp_labels.npy -o ${mase_cli_out}/search_typo RC 1 ONE_LINE
               STDERR "mlp_key_typo\\.toml:10: \\[search\\.search_space\\.seed\\.default\\.config\\]: unknown key \"data_in_widht\" for name = \"integer\" \\(did you mean data_in_width\\?\\)")
mase_cli_check(NAME search_bad_width_at_parse_time
               ARGS search ${mase_cli_mlp} -c ${mase_cli_fixtures}/search/mlp_bad_width.toml -d x=${mase_cli_mlp_input}
                    --labels ${mase_cli_fixtures}/search/mlp_labels.npy -o ${mase_cli_out}/search_width RC 1 ONE_LINE
               STDERR "mlp_bad_width\\.toml:12: \\[search\\.search_space\\.seed\\.default\\.config\\]: weight_width = 100 is refused")

# MASE's sampler spellings run through mase search: nsgaiii and qmc, and nsgaii, whose front is
# the same pareto.csv as nsga2's (mase's name) for the seed. The 4-sample MLP scores few distinct
# (agreement, bits) pairs, so the front counts the trials that repeat one of its points.
set(mase_cli_sampler_search search ${mase_cli_mlp} -d x=${mase_cli_mlp_input})
mase_cli_check(NAME search_sampler_nsgaiii
               ARGS ${mase_cli_sampler_search} -c ${mase_cli_fixtures}/search/mlp_nsgaiii.toml
                    -o ${mase_cli_out}/search_nsgaiii RC 0 FRESH_DIR ${mase_cli_out}/search_nsgaiii
               STDOUT "sampler nsga3, 24 trials.*24 trials \\(24 run now[^\n]*, 0 failed.*Pareto front: [0-9]+ of 24 trials, and [0-9]+ more with the same objectives.*\\(\\+[0-9]+ with the same objectives\\)\n")
mase_cli_check(NAME search_sampler_qmc
               ARGS ${mase_cli_sampler_search} -c ${mase_cli_fixtures}/search/mlp_qmc.toml
                    -o ${mase_cli_out}/search_qmc RC 0 FRESH_DIR ${mase_cli_out}/search_qmc
               STDOUT "sampler qmc, 24 trials.*24 trials \\(24 run now[^\n]*, 0 failed.*Pareto front: [0-9]+ of 24 trials")
if(pagmo_FOUND)
  foreach(name nsgaii nsga2)
    mase_cli_check(NAME search_sampler_${name}
                   ARGS ${mase_cli_sampler_search} -c ${mase_cli_fixtures}/search/mlp_${name}.toml
                        -o ${mase_cli_out}/search_${name} RC 0 FRESH_DIR ${mase_cli_out}/search_${name}
                   STDOUT "sampler nsga2, 24 trials.*24 trials \\(24 run now[^\n]*, 0 failed")
    set_tests_properties(mase_cli/search_sampler_${name} PROPERTIES FIXTURES_SETUP search_${name})
  endforeach()
  add_test(NAME mase_cli/search_nsgaii_is_nsga2
           COMMAND ${CMAKE_COMMAND} -E compare_files ${mase_cli_out}/search_nsgaii/pareto.csv
                   ${mase_cli_out}/search_nsga2/pareto.csv)
  set_tests_properties(mase_cli/search_nsgaii_is_nsga2 PROPERTIES FIXTURES_REQUIRED "search_nsgaii;search_nsga2")
endif()

# Output folders: -o ., .., ~, a folder of the user's sources, links, a read-only folder, and
# mase run next to its own inputs; every user file is compared byte for byte (sha256).
add_test(NAME mase_cli/output_folders_keep_user_files
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_output_folders.sh $<TARGET_FILE:mase_cli> ${mase_cli_mlp}
                 ${mase_cli_hardware_config} ${mase_cli_mlp_input} ${mase_cli_out}/output_folders)
set_tests_properties(mase_cli/output_folders_keep_user_files PROPERTIES
                     PASS_REGULAR_EXPRESSION "every output folder check passed")

# Written files honour the umask (0644 / 0755 under 022, 0600 / 0700 under 077): checkpoints,
# tensors, drawings, the search's outputs and an emitted project.
add_test(NAME mase_cli/file_modes_follow_the_umask
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_file_modes.sh $<TARGET_FILE:mase_cli> ${mase_cli_mlp}
                 ${mase_cli_config} ${mase_cli_mlp_input} ${mase_cli_fixtures}/search/mlp_accuracy.toml
                 ${mase_cli_fixtures}/search/mlp_labels.npy ${mase_cli_root}/examples/data/mlp_784_256_64_10.onnx
                 ${mase_cli_hardware_config} ${mase_cli_out}/file_modes)
set_tests_properties(mase_cli/file_modes_follow_the_umask PROPERTIES
                     PASS_REGULAR_EXPRESSION "every file mode check passed")

# mase search on the bundled MLP, with the data the mixed_precision_search example writes as .npy
# (fixture search_data): a first run, a resumed one, and best.toml taken as it is by mase
# quantize, mase run -c and mase emit-verilog (simulated bit-exact).
if(MASE_BUILD_EXAMPLES)  # the examples folder is added after this one
  set(search_data "${CMAKE_BINARY_DIR}/examples/mixed_precision_search_out")
  set(search_model "${mase_cli_root}/examples/data/mlp_784_256_64_10.onnx")
  set(search_toml "${mase_cli_root}/examples/data/mlp_search.toml")
  set(search_out "${mase_cli_out}/search")
  set(search_inputs ${search_model} --config ${search_toml} --data x=${search_data}/digits_x.npy
      --labels ${search_data}/digits_labels.npy)
  set(search_args search ${search_inputs} --out ${search_out} --jobs 2)
  list(JOIN search_args "|" search_args_joined)
  mase_cli_check(NAME search ARGS ${search_args} --trials 32 RC 0 FRESH_DIR ${search_out}
                 STDOUT "32 trials \\(32 run now.*Pareto front: [0-9]+ of 32 trials.*best: trial [0-9]+ .*fc1 +linear +fixed<")
  set_tests_properties(mase_cli/search PROPERTIES FIXTURES_REQUIRED search_data FIXTURES_SETUP search_first)
  mase_cli_check(NAME search_resume ARGS ${search_args} --trials 40 RC 0
                 STDOUT "40 trials \\(8 run now[^)]*. 32 resumed from")
  set_tests_properties(mase_cli/search_resume PROPERTIES FIXTURES_REQUIRED "search_data;search_first"
                       FIXTURES_SETUP search_done)
  # Resumed with fewer trials than the journal holds, the front and best.toml stay the whole
  # journal's: the same bytes as after the 40-trial run.
  add_test(NAME mase_cli/search_resume_fewer_keeps_the_front
           COMMAND ${CMAKE_COMMAND} "-DARGS=$<TARGET_FILE:mase_cli>|${search_args_joined}|--trials|20"
                   "-DOUT=${search_out}" -P "${CMAKE_CURRENT_SOURCE_DIR}/check_search_resume_fewer.cmake")
  set_tests_properties(mase_cli/search_resume_fewer_keeps_the_front PROPERTIES
                       FIXTURES_REQUIRED "search_data;search_done")
  mase_cli_check(NAME search_best_quantize ARGS quantize ${search_model} -c ${search_out}/best.toml
                 --input-shape x=1,784 -o ${search_out}/best RC 0 STDOUT "5 nodes quantized, 0 bypassed")
  mase_cli_check(NAME search_best_run ARGS run ${search_model} -c ${search_out}/best.toml --mode bit-exact
                 --input x=${search_data}/digits_x.npy -o ${search_out}/best_run -f npy RC 0 STDOUT "logits\\.npy \\[1000, 10\\]")
  mase_cli_check(NAME search_best_emit ARGS emit-verilog ${search_model} -c ${search_out}/best.toml
                 --input-shape x=1,784 --out ${search_out}/best_hardware --simulate verilator RC 0
                 STDOUT "verilator: [0-9]+ passed, 0 failed")
  set_tests_properties(mase_cli/search_best_quantize mase_cli/search_best_run mase_cli/search_best_emit PROPERTIES
                       FIXTURES_REQUIRED "search_data;search_done")
  # The same command under mpirun: rank 0 searches and writes, rank 1 evaluates trials.
  if(MPI_CXX_FOUND)
    set(mpi_args ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe $<TARGET_FILE:mase_cli> search
        ${search_inputs} --trials 16 --out ${mase_cli_out}/search_mpi)
    list(JOIN mpi_args "|" mpi_command)
    add_test(NAME mase_cli/search_mpi
             COMMAND ${CMAKE_COMMAND} "-DARGS=${mpi_command}" -DEXPECT_RC=0 -DWORKING_DIRECTORY=${mase_cli_root}
                     "-DSTDOUT_REGEX=MPI: 2 ranks. 0 trials re-issued.*16 trials .16 run now.*best: trial"
                     -DFRESH_DIR=${mase_cli_out}/search_mpi -P ${CMAKE_CURRENT_SOURCE_DIR}/check_command.cmake)
    set_tests_properties(mase_cli/search_mpi PROPERTIES FIXTURES_REQUIRED search_data
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;ASAN_OPTIONS=detect_leaks=0")
  endif()
  # Bad input: accuracy without labels (a usage error naming the metric), a bad TOML key.
  mase_cli_check(NAME search_without_labels ARGS search ${search_model} --config ${search_toml}
                 --data x=${search_data}/digits_x.npy --out ${mase_cli_out}/search_no_labels RC 2 ONE_LINE
                 STDERR "metrics\\.accuracy. needs labels. give --labels")
  set_tests_properties(mase_cli/search_without_labels PROPERTIES FIXTURES_REQUIRED search_data)
  mase_cli_check(NAME search_bad_config ARGS search ${search_model} --config ${mase_cli_config}
                 --data x=${search_data}/digits_x.npy --out ${mase_cli_out}/search_bad RC 1 ONE_LINE
                 STDERR "there is no \\[search\\] table")
  set_tests_properties(mase_cli/search_bad_config PROPERTIES FIXTURES_REQUIRED search_data)
endif()

# mase search with the hardware cost model (LUTs and cycles per sample beside agreement), and
# --synth: every front trial's design emitted and synthesized, the model's figures beside yosys's.
set(search_hardware_toml "${mase_cli_fixtures}/search/cnn_hardware.toml")
set(search_hardware_inputs ${mase_cli_fixtures}/onnx/cnn/model.onnx --config ${search_hardware_toml}
    --data x=${mase_cli_fixtures}/onnx/cnn/test_data_set_0/input_0.pb)
mase_cli_check(NAME search_hardware_synth ARGS search ${search_hardware_inputs} --out ${mase_cli_out}/search_hardware
               --synth RC 0 FRESH_DIR ${mase_cli_out}/search_hardware
               STDERR "mase search: synthesizing trial [0-9]+ \\(1 of [0-9]+, 0 s so far\\)\nmase search: synthesizing trial [0-9]+ \\(2 of"
               STDOUT "trial +[0-9]+: agreement [0-9.]+, luts [0-9.]+, cycles_per_sample 18432\n.*yosys synth_xilinx on the front \\(cost model / yosys\\):\n +trial +cycles +LUTs +flip-flops +DSPs +BRAM18\n +[0-9]+ +18432 +[0-9]+ / [0-9]+ +[0-9]+ / [0-9]+ +24 / 24 ")
# --synth needs the hardware runner, and says so before searching.
mase_cli_check(NAME search_synth_without_hardware ARGS search ${mase_cli_fixtures}/onnx/cnn/model.onnx
               --config ${mase_cli_root}/examples/data/mlp_search.toml
               --data x=${mase_cli_fixtures}/onnx/cnn/test_data_set_0/input_0.pb --out ${mase_cli_out}/search_no_hw
               --synth RC 1 ONE_LINE STDERR "--synth emits the front's designs.*add \\[search\\.strategy\\.hw_runner\\.hardware\\]")

# The checks whose time goes to Verilator's and yosys's own builds: the sanitize preset's test
# run leaves them out (label tools, tests/CMakeLists.txt), keeping the cheaper emit checks.
set_tests_properties(mase_cli/emit_verilog_cnn mase_cli/emit_verilog_bert_tiny mase_cli/emit_verilog_vit
                     mase_cli/emit_verilog_gelu_mlp_integer mase_cli/search_hardware_synth mase_cli/emit_verilog_jet_ice40_up5k
                     PROPERTIES LABELS tools)
