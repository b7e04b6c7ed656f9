# The compiler benchmark (bench/compile_gen.c): `make bench-compile`
# prints "compile 200x5000 SECONDS MSGS_PER_SEC PEAK_RSS_KB".
# `make bench-compile-mem` prints the compiler's peak memory per byte of
# input for five shapes of 10 MB (bench/compile_mem.sh; SIZE=bytes).

.PHONY: bench-compile bench-compile-mem
bench-compile-mem: $(BUILD)/actorc
	bench/compile_mem.sh $(BUILD)/actorc $(BUILD)/bench/compile_mem $(or $(SIZE),10000000)

bench-compile: $(BUILD)/bench/compile_gen $(BUILD)/actorc
	$(BUILD)/bench/compile_gen $(BUILD)/actorc $(BUILD)/bench/compile $(CC) runtime

$(BUILD)/bench/compile_gen: bench/compile_gen.c
	@mkdir -p $(@D)
	$(CC) -std=c11 $(OPT) $(WARN) $< -o $@
